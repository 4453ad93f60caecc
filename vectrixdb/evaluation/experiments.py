"""compare_runs: did experiment B really beat A? Two saved evaluations, question by question.

The two runs' per-question tables are paired on the question names (Question.key()), so only
questions both runs scored are compared (the others are counted). For every measure both tables
hold, per question:

- the mean of B - A, with a 95% percentile-bootstrap interval over the paired questions;
- a paired test: exact McNemar (scipy.stats.binomtest on the discordant questions) when the
  measure is a yes/no outcome (hit_rate@k, found, answered right), else the Wilcoxon signed-rank
  test (scipy.stats.wilcoxon, zero differences split between the signs: Pratt's handling would drop
  information a person expects counted); p = 1 when nothing differs;
- wins (B higher), losses and ties.

The `changed` table lists each question and measure that moved, from what to what.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.report import KINDS, Report, now
from vectrixdb.evaluation.stats import bootstrap_interval, mcnemar_exact

SKIP = ("latency_ms", "first_right", "expected", "of", "chunks")


def _per_question(report: Report):
    spec = KINDS[report.kind]
    table = report.frame if spec.questions == "frame" else report.tables.get(spec.questions or "")
    if table is None:
        raise BadInput(f"a {report.kind} report has no per-question table to compare")
    return table


def _measures(a, b) -> list[str]:
    out = []
    for column in a.columns:
        if column not in b.columns or any(column.startswith(s) for s in SKIP) or column.endswith((" low", " high")):
            continue
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        if all(is_bool_dtype(t[column]) or is_numeric_dtype(t[column]) for t in (a, b)):
            out.append(column)
    return out


def _binary(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all())


def compare_runs(a: Any, b: Any, *, folder: str | None = None, confidence: float = 0.95, seed: int = 0) -> Report:
    """Pair two evaluations (Reports, or run ids with folder=) question by question."""
    import pandas as pd
    from scipy.stats import wilcoxon

    from vectrixdb.evaluation.runs import load_run

    started = now()
    if isinstance(a, str) or isinstance(b, str):
        if folder is None:
            raise BadInput("run ids need folder=, the folder the runs were saved in")
        a = load_run(folder, a) if isinstance(a, str) else a
        b = load_run(folder, b) if isinstance(b, str) else b
    ta, tb = _per_question(a), _per_question(b)
    both = [i for i in ta.index if i in set(tb.index)]
    if not both:
        raise BadInput("the two runs share no question: compare runs over the same golden set")
    rows, changed = [], []
    for measure in _measures(ta, tb):
        x = ta.loc[both, measure].astype(float).to_numpy()
        y = tb.loc[both, measure].astype(float).to_numpy()
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y, ids = x[keep], y[keep], [q for q, k in zip(both, keep) if k]
        if not len(x):
            continue
        diff = y - x
        if _binary(x, y):
            test, p = "exact McNemar", mcnemar_exact(x.astype(bool), y.astype(bool))["p_value"]
        elif np.all(diff == 0):
            test, p = "Wilcoxon signed-rank", 1.0
        else:
            test, p = "Wilcoxon signed-rank", float(wilcoxon(y, x, zero_method="zsplit").pvalue)
        low, high = bootstrap_interval(diff, confidence, seed=seed) or (None, None)
        rows.append({"measure": measure, "a": float(x.mean()), "b": float(y.mean()), "difference": float(diff.mean()),
                     "ci low": low, "ci high": high, "test": test, "p_value": p,
                     "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum()), "ties": int((diff == 0).sum()),
                     "paired": int(len(x))})
        changed += [{"id": q, "measure": measure, "a": float(u), "b": float(v)} for q, u, v in zip(ids, x, y) if u != v]
    if not rows:
        raise BadInput("the two runs share no measure to compare")
    frame = pd.DataFrame(rows).set_index("measure")
    label = lambda r, fallback: r.get("run_id") or r.get("name") or r.meta.get("name") or fallback  # noqa: E731
    values = {"a": label(a, "A"), "b": label(b, "B"),
              "kinds": [a.kind, b.kind], "questions": len(both), "only_a": len(ta) - len(both),
              "only_b": len(tb) - len(both), "confidence": confidence,
              "better": [r["measure"] for r in rows if r["p_value"] < 0.05 and r["difference"] > 0],
              "worse": [r["measure"] for r in rows if r["p_value"] < 0.05 and r["difference"] < 0]}
    changes = pd.DataFrame(changed, columns=["id", "measure", "a", "b"])
    return Report("experiment", values, frame, tables={"changed": changes}, started=started)
