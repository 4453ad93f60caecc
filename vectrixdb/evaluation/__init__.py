"""Measuring retrieval (and answers) on your own questions, one subpackage per stage:

    golden/      golden files and labels: read, check, label, import from other tools
    retrieval/   retrieval measures and reports: measures, kernels, retrieval_report, cutoff, sweep
    generation/  answers and judges: answer_report, calibrate, the rubrics
    writing/     golden questions written with a chat model (write_golden) and audited
    runs/        the Report every verb returns, saved runs, compare_runs, power, ppi, run_evaluation
    chunking/    compare_chunking

Names load lazily so `import vectrixdb.evaluation` stays cheap; _EXPORTS says which module each
public name lives in (a new public verb is one entry there). Where a new measure, judge rubric or
report kind goes: each subpackage's docstring.
"""
from __future__ import annotations

import importlib

_EXPORTS = {  # public name -> the module it lives in
    "Question": "vectrixdb.evaluation.golden.questions", "save_questions": "vectrixdb.evaluation.golden.questions",
    "load_questions": "vectrixdb.evaluation.golden.files", "read_golden": "vectrixdb.evaluation.golden.files",
    "save_ragas": "vectrixdb.evaluation.golden.anchors_write",
    "save_deepeval": "vectrixdb.evaluation.golden.anchors_write",
    "check_golden": "vectrixdb.evaluation.golden.schema",
    "GoldenCheck": "vectrixdb.evaluation.golden.schema",
    "Finding": "vectrixdb.evaluation.golden.schema",
    "suggest_expected": "vectrixdb.evaluation.golden.suggest",
    "load_beir": "vectrixdb.evaluation.golden.beir", "BeirData": "vectrixdb.evaluation.golden.beir",
    "Report": "vectrixdb.evaluation.runs.report", "load_report": "vectrixdb.evaluation.runs.report",
    "answer_report": "vectrixdb.evaluation.generation.answers",
    "calibrate": "vectrixdb.evaluation.generation.answers",
    "run_evaluation": "vectrixdb.evaluation.runs.pipeline",
    "compare_runs": "vectrixdb.evaluation.runs.experiments",
    "questions_needed": "vectrixdb.evaluation.runs.power",
    "ppi_mean": "vectrixdb.evaluation.runs.ppi",
    "ChatWriter": "vectrixdb.chat.writer",
    "write_golden": "vectrixdb.evaluation.writing.write",
    "Written": "vectrixdb.evaluation.writing.summary",
    "audit_golden": "vectrixdb.evaluation.writing.audit",
    "PassageConfig": "vectrixdb.evaluation.writing.config",
    "KindConfig": "vectrixdb.evaluation.writing.config",
    "CheckConfig": "vectrixdb.evaluation.writing.config",
    "CriticConfig": "vectrixdb.evaluation.writing.config",
    "EvolutionConfig": "vectrixdb.evaluation.writing.config",
    "retrieval_report": "vectrixdb.evaluation.retrieval.scoring",
    "evaluate": "vectrixdb.evaluation.retrieval.scoring",
    "metric_table": "vectrixdb.evaluation.retrieval.metrics",
    "pool": "vectrixdb.evaluation.retrieval.pooling",
    "read_traces": "vectrixdb.evaluation.retrieval.traces", "traces_report": "vectrixdb.evaluation.retrieval.traces",
    "traces_pool": "vectrixdb.evaluation.retrieval.traces", "write_verdicts": "vectrixdb.evaluation.retrieval.traces",
    "TraceCollector": "vectrixdb.evaluation.retrieval.traces",
    "list_runs": "vectrixdb.evaluation.runs.store", "load_run": "vectrixdb.evaluation.runs.store",
    "answer_cutoff": "vectrixdb.evaluation.retrieval.cutoff",
    "sweep": "vectrixdb.evaluation.retrieval.sweep", "sweep_markdown": "vectrixdb.evaluation.retrieval.sweep",
    "compare_chunking": "vectrixdb.evaluation.chunking.compare",
    "compare_embedders": "vectrixdb.evaluation.retrieval.embedders_compare",
    "RequestConfig": "vectrixdb.chat.writer",
    "LimitConfig": "vectrixdb.chat.writer",
    "WritingConfig": "vectrixdb.evaluation.writing.config",
    "CompareConfig": "vectrixdb.evaluation.chunking.config",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports' names, one list kept above


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'vectrixdb.evaluation' has no attribute {name!r}")
