"""compare_runs: did experiment B really beat A? Two saved evaluations, question by question.

The two runs' per-question tables are paired on the question names (Question.key()), so only
questions both runs scored are compared (the others are counted). For every measure both tables
hold, per question:

- the mean of B - A;
- a paired sign-flip test of "no difference" (stats.SignFlip: exact over all sign patterns up to
  12 questions, else 9,999 random ones; on a yes/no measure it is McNemar's sign test on the
  discordant questions), and its p-value;
- that p adjusted for the number of measures compared (Holm-Bonferroni, stats.holm);
- the interval that inverts the same test at the measure's Holm level (1 - alpha / (m - i + 1)
  for the i-th smallest p of m), so it excludes zero exactly when the measure's own Holm step
  rejects;
- one verdict per measure by RULE below; wins (B higher), losses and ties;
- `detectable`: the smallest true difference these questions would detect with 80% power at
  alpha / m (power.py: paired t on graded measures, exact McNemar on yes/no ones), so a "could be
  luck" says whether the questions could have told at all.

RULE: a difference is "better" or "worse" when its Holm-adjusted p is below 1 - confidence
(0.05), in the measure's declared direction (measures.py: higher is better, lower is better; a
coverage figure such as unjudged@k is only "higher" or "lower", never better or worse); otherwise
"could be luck". A measure whose interval excludes zero but whose adjusted p is
not below 0.05 is one Holm's step-down never reached (a measure with a smaller p was not
rejected first), and its verdict says so.

The `changed` table lists each question and measure that moved, from what to what.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.paired import SKIP, paired_measures, per_question_table, loaded  # noqa: F401  (used here, and by power.py)
from vectrixdb.evaluation.runs.power import detectable_difference
from vectrixdb.evaluation.runs.report import Report, now
from vectrixdb.evaluation.runs.stats import SignFlip, holm
from vectrixdb.evaluation.retrieval.measures import direction_of

def _binary(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all())


COLUMNS = ["measure", "a", "b", "difference", "ci low", "ci high", "ci level", "test", "p_value", "p_holm", "verdict",
           "detectable", "wins", "losses", "ties", "paired"]
RULE = ("Each measure: a paired sign-flip test of no difference, its p adjusted for the {m} measures compared "
        "(Holm-Bonferroni); 'better' / 'worse' when the adjusted p < {alpha:g}, in the measure's declared direction "
        "(a coverage figure such as unjudged@k is 'higher' / 'lower', never better or worse), else 'could be luck'. "
        "The interval "
        "inverts the same test at the measure's Holm level, so it excludes zero exactly when that step rejects. "
        "'detectable': the smallest true difference these questions detect with 80% power at alpha / {m} (a p "
        "below it always passes Holm; power.questions_needed says how).")


def compare_runs(a: Any, b: Any, *, folder: str | None = None, confidence: float = 0.95, seed: int = 0,
                n_flips: int = 9999) -> Report:
    """Pair two evaluations (Reports, or run ids with folder=) question by question; RULE says
    how each difference is judged (report["rule"], frame.attrs["rule"]). `n_flips` random sign
    patterns per measure beyond 12 questions (fewer make p and intervals coarser, never biased)."""
    import pandas as pd

    started = now()
    a, b = loaded(a, b, folder)
    ta, tb = per_question_table(a), per_question_table(b)
    in_b = set(tb.index)  # once: a set built per question made 10,000 questions quadratic
    both = [i for i in ta.index if i in in_b]
    if not both:
        raise BadInput("the two runs share no question: compare runs over the same golden set")
    rows, tests, changed, diffs = [], [], [], []
    for measure in paired_measures(ta, tb):
        x = ta.loc[both, measure].astype(float).to_numpy()
        y = tb.loc[both, measure].astype(float).to_numpy()
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y, ids = x[keep], y[keep], [q for q, k in zip(both, keep) if k]
        if not len(x):
            continue
        diff = y - x
        test = SignFlip(diff, n_flips, seed=seed)
        tests.append(test)
        diffs.append(diff)
        how = "exact" if test.exact else f"{test.flips:,} random sign patterns"
        rows.append({"measure": measure, "a": float(x.mean()), "b": float(y.mean()), "difference": float(diff.mean()),
                     "test": ("exact McNemar" if test.exact else f"McNemar ({how})") if _binary(x, y)
                     else f"paired sign-flip ({how})", "p_value": test.p(0.0),
                     "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum()), "ties": int((diff == 0).sum()),
                     "paired": int(len(x))})
        changed += [{"id": q, "measure": measure, "a": float(u), "b": float(v)} for q, u, v in zip(ids, x, y) if u != v]
    if not rows:
        raise BadInput("the two runs share no measure to compare")
    alpha = 1 - confidence
    _judge(rows, tests, alpha)
    undetectable = {}  # power of the Bonferroni step, a floor for Holm's (power.py); None says why
    for row, diff in zip(rows, diffs):
        got = detectable_difference(diff, alpha=alpha / len(rows), power=0.8)
        row["detectable"] = got["detectable"]
        if got["reason"]:
            undetectable[row["measure"]] = got["reason"]
    frame = pd.DataFrame(rows, columns=COLUMNS).set_index("measure")
    rule = RULE.format(m=len(rows), alpha=alpha)
    frame.attrs["rule"] = rule
    label = lambda r, fallback: r.get("run_id") or r.get("name") or r.meta.get("name") or fallback  # noqa: E731
    named = lambda r: r.meta.get("name") or r.get("name")  # noqa: E731 - what a figure calls the run
    values = {"a": label(a, "A"), "b": label(b, "B"), "a_name": named(a), "b_name": named(b),
              "kinds": [a.kind, b.kind], "questions": len(both), "only_a": len(ta) - len(both),
              "only_b": len(tb) - len(both), "confidence": confidence, "measures": len(rows),
              "correction": "Holm-Bonferroni", "rule": rule, "undetectable": undetectable,
              "better": [r["measure"] for r in rows if r["verdict"] == "better"],
              "worse": [r["measure"] for r in rows if r["verdict"] == "worse"]}
    changes = pd.DataFrame(changed, columns=["id", "measure", "a", "b"])
    return Report("experiment", values, frame, tables={"changed": changes}, started=started)


def _judge(rows: list[dict], tests: list[SignFlip], alpha: float) -> None:
    """Holm-adjusted p, the interval at each measure's Holm level and the verdict, by RULE."""
    m = len(rows)
    adjusted = holm([r["p_value"] for r in rows])
    order = sorted(range(m), key=lambda i: rows[i]["p_value"])
    stopped_at = None  # the first measure, in Holm's order, its step-down did not reject
    for rank, i in enumerate(order):
        row, level = rows[i], alpha / (m - rank)
        low, high = tests[i].interval(level)
        row.update({"p_holm": adjusted[i], "ci level": 1 - level, "ci low": low, "ci high": high})
        direction = direction_of(row["measure"])
        if adjusted[i] < alpha and direction == "coverage":  # a share of the labels, not quality: no better
            row["verdict"] = "higher" if row["difference"] > 0 else "lower"
        elif adjusted[i] < alpha:
            row["verdict"] = "better" if (row["difference"] > 0) == (direction == "higher") else "worse"
        elif row["wins"] == row["losses"] == 0:
            row["verdict"] = "no difference"
        elif stopped_at is not None and row["p_value"] < level:  # its own step rejects, an earlier one did not
            row["verdict"] = f"could be luck (Holm stopped at {rows[stopped_at]['measure']})"
        else:
            row["verdict"] = "could be luck"
        if adjusted[i] >= alpha and stopped_at is None:
            stopped_at = i
