"""Retrieval measures and reports: how well a retriever finds what the questions expect.

    measures.py   measure families as declarations (name, cut-off rule, inputs, formula)
    providers.py  kernels that say which families they compute
    metrics.py    metric_table and the judging every report builds on
    scoring.py    retrieval_report and evaluate
    cutoff.py     answer_cutoff: below which score to decline answering
    sweep.py      sweep: one collection per chunking setting, every question asked
    pooling.py    pool: unjudged results from several runs, for a person to judge
    interop.py    TREC run/qrels files, ranx, ir_measures, datasets
    adapters.py   outside retrievers (functions, LangChain, LlamaIndex): how each is called and read
    traces.py     production traces (OpenTelemetry GenAI, OpenInference) scored as runs, pooled, verdicts sent back

A new measure: a `Family` subclass (its docstring is its formula) with `@declare`, and a kernel
registered with a provider (`@RANKED.provides("name")`) that names it among the families it computes
(a family no provider computes is refused, never replaced). Both go in measures.py / metrics.py (the
registry's homes for measures), or together in a module of their own named by an entry point in the
group `vectrixdb.measures` (vectrixdb/registry.py). metric_table computes any declared measure; retrieval_report and evaluate
report the built-in families, and any other the ranked provider computes when asked by name
(`measures=("rbp@10",)`: a frame column and `report["measures"]`).
"""
