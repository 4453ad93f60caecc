"""Two runs side by side: each loaded (a run id from a folder, or a Report), its per-question table
(the one its report kind names), and the measures both tables hold. compare_runs (experiments.py)
and questions_needed (power.py) both pair runs this way; it sits below both.
"""
from __future__ import annotations

from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.report import KINDS, Report

SKIP = ("latency_ms", "first_right", "expected", "of", "chunks")


def per_question_table(report: Report):
    """The report's per-question table (its kind's `questions`: the frame or a named table); BadInput without one."""
    spec = KINDS[report.kind]
    table = report.frame if spec.questions == "frame" else report.tables.get(spec.questions or "")
    if table is None:
        raise BadInput(f"a {report.kind} report has no per-question table to compare")
    return table


def paired_measures(a, b) -> list[str]:
    """The numeric or yes/no per-question columns two tables share, which compare_runs can pair
    (latencies, counts, ranks (SKIP) and interval bounds left out)."""
    out = []
    for column in a.columns:
        if column not in b.columns or any(column.startswith(s) for s in SKIP) or column.endswith((" low", " high")):
            continue
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        if all(is_bool_dtype(t[column]) or is_numeric_dtype(t[column]) for t in (a, b)):
            out.append(column)
    return out


def loaded(a: Any, b: Any, folder: str | None) -> tuple[Any, Any]:
    """The two runs, each loaded from `folder` when given as a run id (b may be None)."""
    from vectrixdb.evaluation.runs.store import load_run

    if isinstance(a, str) or isinstance(b, str):
        if folder is None:
            raise BadInput("run ids need folder=, the folder the runs were saved in")
        a = load_run(folder, a) if isinstance(a, str) else a
        b = load_run(folder, b) if isinstance(b, str) else b
    return a, b
