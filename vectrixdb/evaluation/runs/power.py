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

import functools
import math
from typing import Any

import numpy as np

from vectrixdb.errors import BadInput
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


def min_questions(alpha: float) -> int:
    """The fewest questions with which the exact sign-flip test can reach p < alpha (2 / 2^n < alpha)."""
    return max(2, math.floor(math.log2(2 / alpha)) + 1)


def power_at(delta: float, sd: float, n: int, alpha: float = 0.05, *, discordance: float | None = None) -> float:
    """Power at level alpha (two-sided) to detect a true mean difference delta with n questions.
    Graded measures: the paired t-test's, differences with standard deviation sd. Yes/no measures
    (discordance = the share of questions the two runs disagree on): the exact McNemar sign test's.
    0 below min_questions(alpha)."""
    from scipy.stats import nct, norm, t

    if n < min_questions(alpha):
        return 0.0
    if discordance is not None:
        return _mcnemar_power(abs(delta), discordance, n, alpha)
    df, nc = n - 1, abs(delta) * math.sqrt(n) / sd
    crit = t.ppf(1 - alpha / 2, df)
    upper, lower = float(nct.sf(crit, df, nc)), float(nct.cdf(-crit, df, nc))
    # scipy's noncentral t can give NaN far in a tail (large df and nc): the normal limit there
    upper = upper if math.isfinite(upper) else float(norm.sf(crit - nc))
    lower = lower if math.isfinite(lower) else float(norm.cdf(-crit - nc))
    return min(1.0, upper + lower)


def _mcnemar_power(delta: float, q: float, n: int, alpha: float) -> float:
    """Exact power of the two-sided sign test on the discordant questions (what the sign-flip test
    is on a yes/no measure): D ~ Binomial(n, q) questions change, each up with probability
    (q + delta) / 2q; the test rejects at k ups when 2 P(Binomial(D, 1/2) <= min(k, D - k)) < alpha
    (Miettinen 1968; Connor 1987 gives the normal form). Sums over D within 12 sd of nq (the rest
    weighs under 1e-30), so 100,000 questions cost a few thousand terms."""
    from scipy.stats import binom

    if not 0 < q <= 1 or delta > q:
        return 0.0
    spread = 12 * math.sqrt(n * q * (1 - q)) + 12
    d, c = _critical(max(0, int(n * q - spread)), min(n, int(n * q + spread) + 1), alpha)
    up = (q + delta) / (2 * q)
    reject = binom.cdf(c, d, up) + binom.sf(d - c - 1, d, up)
    return float(min(1.0, (binom.pmf(d, n, q) * reject).sum()))


@functools.lru_cache(maxsize=64)
def _critical(low: int, high: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """For D = low..high changed questions, the largest count k with P(Binomial(D, 1/2) <= k) <
    alpha / 2 (-1: none); the same for every delta tried, so kept."""
    from scipy.stats import binom

    d = np.arange(low, high + 1)
    c = np.asarray(binom.ppf(alpha / 2, d, 0.5) - 1)
    d.flags.writeable = c.flags.writeable = False
    return d, c


def detectable_for(sd: float, n: int, alpha: float = 0.05, power: float = 0.8, *,
                   discordance: float | None = None) -> float | None:
    """The smallest delta with power_at(delta, ...) >= power; None where none can be (too few
    questions, no spread, or on a yes/no measure not even with every changed question one way)."""
    from scipy.optimize import brentq

    if n < min_questions(alpha):
        return None
    if discordance is not None:
        high = discordance
        if not 0 < high <= 1 or power_at(high, sd, n, alpha, discordance=high) < power:
            return None
    else:
        if not sd > 0:
            return None
        high = sd
        while power_at(high, sd, n, alpha) < power:
            high *= 2
    at = lambda d: power_at(d, sd, n, alpha, discordance=discordance)  # noqa: E731
    delta = brentq(lambda d: at(d) - power, 0.0, high, xtol=1e-12 * high)
    while at(delta) < power:  # the root's upper side, so n questions do reach `power`
        delta = min(high, delta * (1 + 1e-9))
    return float(delta)


def questions_for(delta: float, sd: float, alpha: float = 0.05, power: float = 0.8, *,
                  discordance: float | None = None) -> int | None:
    """The fewest questions with power_at(delta, ...) >= power (the first such n: on a yes/no
    measure the exact test's power rises with n in small steps, not strictly)."""
    if delta == 0 or (not sd > 0 if discordance is None else not 0 < abs(delta) <= discordance):
        return None
    at = lambda n: power_at(delta, sd, n, alpha, discordance=discordance)  # noqa: E731
    low = min_questions(alpha)
    if at(low) >= power:
        return low
    high = low * 2
    while at(high) < power:
        low, high = high, high * 2
        if high > 10_000_000:
            return None
    while high - low > 1:  # at(low) < power <= at(high)
        middle = (low + high) // 2
        if at(middle) >= power:
            high = middle
        else:
            low = middle
    return high


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise BadInput(f"alpha and power must lie strictly between 0 and 1, not {alpha} and {power}")


def detectable_difference(diff, *, alpha: float = 0.05, power: float = 0.8, sd: float | None = None,
                          discordance: float | None = None, binary: bool | None = None) -> dict:
    """The smallest detectable difference for the paired differences `diff` (or for their count,
    given sd or discordance): {"n", "sd", "discordance", "model", "detectable", "reason"}.
    Differences all in {-1, 0, 1} (a yes/no measure; binary=None infers it) use the exact McNemar
    power at the observed share of changed questions; others the paired t-test's. detectable is
    None with a reason where the questions cannot support a number."""
    _check(alpha, power)
    d = np.asarray(diff, dtype=float)
    d = d[~np.isnan(d)]
    n = len(d)
    if binary is None:
        binary = discordance is not None or bool(n and np.isin(d, (-1, 0, 1)).all())
    if binary and discordance is None and n:
        discordance = float(np.mean(d != 0))
    flat = n > 1 and bool(np.all(d == d[0]))  # exactly equal: a float sd would be rounding, not spread
    if flat:
        sd = 0.0
    elif sd is None:
        sd = float(d.std(ddof=1)) if n > 1 else None
    out: dict[str, Any] = {"n": n, "sd": sd, "discordance": discordance if binary else None,
                           "model": "exact McNemar" if binary else "paired t", "detectable": None, "reason": None}
    if n == 0:
        out["reason"] = "no question to size a test on"
    elif n == 1:
        out["reason"] = "one question: the spread of differences is unknown"
    elif n < min_questions(alpha):
        out["reason"] = (f"{n} questions: the exact sign-flip test's smallest p is 2/2^{n} = {2 / 2 ** n:.3g}, "
                         f"never below alpha {alpha:g}; at least {min_questions(alpha)} are needed")
    elif binary and not discordance:
        out["reason"] = "no question changed between the runs: no discordant question to size the test on"
    elif not binary and not (sd is not None and sd > 0):
        out["reason"] = "every question's difference is the same (sd 0): no spread to size a test on"
    else:
        out["detectable"] = detectable_for(float(sd or 0.0), n, alpha, power, discordance=out["discordance"])
        if out["detectable"] is None:
            out["reason"] = (f"even with every one of the {discordance:.0%} changed questions moving one way, "
                             f"{n} questions do not reach power {power:g}")
    return out


def questions_needed(a: Any, b: Any = None, *, folder: str | None = None, alpha: float = 0.05, power: float = 0.8,
                     difference: float | dict | None = None, correlation: float = 0.0,
                     measures: list[str] | None = None) -> Report:
    """Per measure: the smallest difference the questions of run `a` (paired with run `b` when
    given: Reports, or run ids with folder=) detect with `power` at `alpha`, and how many
    questions `difference` needs (a number, or {measure: number}; default the observed B - A, or
    with one run the detectable difference at n itself). RULE and the module docstring say how;
    report["rule"] and frame.attrs["rule"] hold it. `.plot()` draws power against questions."""
    import pandas as pd

    from vectrixdb.evaluation.runs.paired import _measures, _per_question, loaded

    _check(alpha, power)
    if not -1 <= correlation < 1:
        raise BadInput(f"correlation must lie in [-1, 1), not {correlation}")
    started = now()
    a, b = loaded(a, b, folder)
    ta = _per_question(a)
    tb = _per_question(b) if b is not None else ta
    in_b = set(tb.index)
    both = [q for q in ta.index if q in in_b]
    names = _measures(ta, tb)
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


def power_plot(report, ax=None, most: int = 8):
    """Power against the number of questions for each measure's target difference (at most `most`
    measures), with the stated power and the current question count drawn."""
    from vectrixdb.plotting import DASHES, MARKERS, _figure

    fig, ax = _figure(ax, figsize=(7, 4))
    frame = report.frame.dropna(subset=["target"])
    sized = frame["discordance"].where(frame["model"] == "exact McNemar", frame["sd"])
    frame = frame[(sized > 0) & (frame["target"] != 0)].head(most)
    alpha, power, n_now = report["alpha"], report["power"], report["questions"]
    top = max([n_now * 2, *[2 * q for q in frame["questions for"].dropna()]] or [10])
    ns = np.unique(np.linspace(2, top, 60).round().astype(int))
    for i, (measure, row) in enumerate(frame.iterrows()):
        q = row["discordance"] if row["model"] == "exact McNemar" else None
        curve = [power_at(row["target"], row["sd"], int(n), alpha, discordance=q) for n in ns]
        ax.plot(ns, curve, linestyle=DASHES[i % 4],
                marker=MARKERS[i % len(MARKERS)], markevery=10, label=f"{measure} (difference {row['target']:.3g})")
    ax.axhline(power, color="grey", linestyle=":", linewidth=0.8)
    ax.axvline(n_now, color="black", linewidth=0.8)
    ax.text(n_now, 0.02, f" now: {n_now}", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("questions (paired)")
    ax.set_ylabel(f"power (two-sided, alpha {alpha:g})")
    ax.set_title(f"questions needed to detect each difference with power {power:g}"
                 + ("" if report["paired"] else " (one run: second system assumed)"), fontsize=9)
    if len(frame):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
