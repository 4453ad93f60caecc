"""Runs and experiments: the Report every verb returns, where it is saved, and what compares runs.

    kinds.py        report kinds: one declaration (Kind) per kind, the registry, run headers
    kinds_builtin.py  the built-in kinds' declarations
    headlines.py    the standard headline rule (a kind's default headline)
    report.py       Report and the report.json contract
    saved.py        a saved report.json checked where it is read
    store.py        saved runs in a folder: LiveRun, list_runs, load_run
    progress.py     a running run's per-question progress lines
    stats.py        exact paired tests and intervals over questions
    paired.py       two runs side by side (loaded, per-question tables, shared measures)
    experiments.py  compare_runs: did B beat A?
    power.py        questions_needed: can these questions tell two setups apart?
    ppi.py          ppi_mean: a judged mean from many model and a few human verdicts
    pipeline.py     run_evaluation: a whole pipeline's evaluation with a saved lifecycle

A new report kind: one module holding the verb and its `register(Kind(...))` (kinds.py says what each
field means). Inside vectrixdb it is declared in kinds_builtin.py (the registry's home for kinds);
outside, its module is named in the VECTRIXDB_KINDS setting or by an entry point in the group
`vectrixdb.report_kinds`, so a fresh `vectrixdb runs list` or `serve` imports it. This package says
what a run is, never how it is shown: the presentation layer (vectrixdb/present/) attaches that to
each kind by name and imports this package, never the reverse. Runs, the dashboard (server/), the
certificate (export/) and the CLI read kinds only; a saved run of a kind nobody registered is
reported by listings as such, not skipped.
"""
