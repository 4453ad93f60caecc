"""questions_needed: can these questions tell two setups apart, and how many would it take?

compare_runs decides each measure with a paired sign-flip test on the per-question differences
d = B - A (stats.SignFlip). That test is the permutation form of the one-sample t-test on d: for
fixed sum(d^2) its statistic |mean(d)| is a monotone function of |t|, so its power approaches the
paired t-test's as n grows (Fisher 1935; Lehmann and Romano, Testing Statistical Hypotheses, 15.2).
Power here is therefore the paired t-test's, from the noncentral t distribution:

    power(delta, n) = P(|T| > t_{1 - alpha/2, n-1}),  T ~ noncentral t(df = n - 1, nc = delta * sqrt(n) / sd)

with sd the standard deviation of the per-question differences, estimated from the run(s) as in
topic-set-size design (Sakai, "Topic set size design", Information Retrieval Journal 2016; the
normal form is n = ((z_{1-alpha/2} + z_power) * sd / delta)^2, Cohen 1988). The sign-flip test adds
one hard floor: with n <= 12 questions it is exact and its smallest p is 2 / 2^n, so at
alpha = 0.05 five questions or fewer can detect nothing at all, whatever the difference.

On a yes/no measure (hit rate, found) d is -1, 0 or 1 and the sign-flip test is McNemar's exact
sign test on the changed questions. Its power is computed exactly instead (_mcnemar_power), at
the observed share of changed questions: the t form overstates it there (the exact test is
discrete and conservative; at n = 150, 30% changed, a true gain of 0.1: t says 0.62, the exact
test has 0.56, and 400 simulated sign-flip tests flagged 0.54).

- `detectable`: the smallest true difference n questions detect with the stated power.
- `questions for`: how many paired questions a given difference (default: the one observed) needs.

One run (no B): there are no paired differences, so sd is that of a hypothetical comparison with a
second system whose per-question scores have the same spread and correlate `correlation` with
this one's: sd_d = sd * sqrt(2 * (1 - correlation)). The default 0 (independent systems) is
cautious: systems run on the same questions usually correlate positively, which shrinks sd_d.

Undefined cases are None with a reason: fewer than two questions, every difference the same (no
spread to size a test on), an observed difference of 0 (no difference to size for).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.power_formulas import (  # noqa: F401 - the formulas, importable from here too
    check_alpha_power, detectable_difference, detectable_for, min_questions, power_at, questions_for)
from vectrixdb.evaluation.runs.report import Report, now

COLUMNS = ["n", "a", "b", "difference", "model", "sd", "discordance", "detectable", "power at difference", "target",
           "questions for", "reason"]
RULE = ("Power of compare_runs' paired sign-flip test at alpha {alpha:g} (two-sided) and power {power:g}: on graded "
        "measures the paired t-test's (noncentral t, sd of the per-question differences; Cohen 1988, Sakai 2016), on "
        "yes/no measures the exact McNemar sign test's at the observed share of changed questions. "
        "'detectable' = the smallest true difference these n questions detect with that power; 'questions for' = "
        "the questions the 'target' difference needs. {assumed}")
PAIRED = "Paired: sd is that of B - A over the questions both runs scored."
SINGLE = ("One run: sd of B - A assumed sd * sqrt(2 * (1 - {rho:g})) (yes/no: 2p(1 - p)(1 - {rho:g}) of questions "
          "changed), a second system with the same spread correlating {rho:g} with this one.")


def questions_needed(a: Any, b: Any = None, *, folder: str | None = None, alpha: float = 0.05, power: float = 0.8,
                     difference: float | dict | None = None, correlation: float = 0.0,
                     measures: list[str] | None = None) -> Report:
    """Per measure: the smallest difference the questions of run `a` (paired with run `b` when
    given: Reports, or run ids with folder=) detect with `power` at `alpha`, and how many
    questions `difference` needs (a number, or {measure: number}; default the observed B - A, or
    with one run the detectable difference at n itself). RULE and the module docstring say how;
    report["rule"] and frame.attrs["rule"] hold it. `.plot()` draws power against questions."""
    import pandas as pd

    from vectrixdb.evaluation.runs.paired import paired_measures, per_question_table, loaded

    check_alpha_power(alpha, power)
    if not -1 <= correlation < 1:
        raise BadInput(f"correlation must lie in [-1, 1), not {correlation}")
    started = now()
    a, b = loaded(a, b, folder)
    ta = per_question_table(a)
    tb = per_question_table(b) if b is not None else ta
    in_b = set(tb.index)
    both = [q for q in ta.index if q in in_b]
    names = paired_measures(ta, tb)
    if measures is not None:
        unknown = sorted(set(measures) - set(names))
        if unknown:
            raise BadInput(f"measures {unknown} are not in both runs; known: {sorted(names)}")
        names = list(measures)
    if not both or not names:
        raise BadInput("no question or no numeric measure to size a test on")
    rows = []
    for measure in names:
        x = ta.loc[both, measure].astype(float).to_numpy()
        y = tb.loc[both, measure].astype(float).to_numpy()
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        binary = bool(len(x)) and bool(np.isin(x, (0, 1)).all() and np.isin(y, (0, 1)).all())
        if b is None:
            sd = float(x.std(ddof=1) * math.sqrt(2 * (1 - correlation))) if len(x) > 1 else None
            # two independent yes/no systems right with the same share p disagree on 2p(1 - p) of questions
            q = 2 * float(x.mean()) * (1 - float(x.mean())) * (1 - correlation) if binary and len(x) else None
            got = detectable_difference(x, alpha=alpha, power=power, sd=sd, discordance=q, binary=binary)
            observed = None
        else:
            got = detectable_difference(y - x, alpha=alpha, power=power, binary=binary)
            observed = float((y - x).mean()) if len(x) else None
        target = difference.get(measure) if isinstance(difference, dict) else difference
        target = observed if target is None else float(target)
        if target is None:
            target = got["detectable"]
        row = {"measure": measure, "n": got["n"], "a": float(x.mean()) if len(x) else None,
               "b": float(y.mean()) if b is not None and len(y) else None, "difference": observed, "sd": got["sd"],
               "discordance": got["discordance"], "model": got["model"], "detectable": got["detectable"],
               "target": target, "reason": got["reason"], "power at difference": None, "questions for": None}
        sized = got["discordance"] if binary else got["sd"]
        if sized is not None and sized > 0 and target:
            row["questions for"] = questions_for(target, got["sd"], alpha, power, discordance=got["discordance"])
            row["power at difference"] = power_at(target, got["sd"], got["n"], alpha, discordance=got["discordance"])
            if row["questions for"] is None and row["reason"] is None:
                row["reason"] = f"no number of questions detects {target:g} here (more than the changed share?)"
        elif row["reason"] is None and not target:
            row["reason"] = "the observed difference is 0: give difference= to size a test for one"
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("measure")[COLUMNS]
    for column in ("model", "reason"):  # text with gaps stays None (pandas would make the gaps NaN), as it loads back
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    rule = RULE.format(alpha=alpha, power=power, assumed=PAIRED if b is not None else SINGLE.format(rho=correlation))
    frame.attrs["rule"] = rule
    values = {"questions": len(both), "paired": b is not None, "alpha": alpha, "power": power,
              "correlation": None if b is not None else correlation, "rule": rule,
              "method": "power of the paired sign-flip test: paired t (graded), exact McNemar (yes/no)",
              "detectable": {r["measure"]: r["detectable"] for r in rows},
              "questions_for": {r["measure"]: r["questions for"] for r in rows}}
    return Report("power", values, frame, started=started)
