"""The power formulas behind questions_needed, compare_runs' "detectable" and compare_embedders'
"questions needed" (runs/power.py says the method and its sources): power at n questions, the
smallest detectable difference and the questions a difference needs, for the paired t-test on
graded measures and the exact McNemar sign test on yes/no ones. Numbers only: nothing here imports
a report, so the figures (vectrixdb/plotting) can draw power curves with it."""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from vectrixdb.errors import BadInput


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


def check_alpha_power(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise BadInput(f"alpha and power must lie strictly between 0 and 1, not {alpha} and {power}")


def detectable_difference(diff, *, alpha: float = 0.05, power: float = 0.8, sd: float | None = None,
                          discordance: float | None = None, binary: bool | None = None) -> dict:
    """The smallest detectable difference for the paired differences `diff` (or for their count,
    given sd or discordance): {"n", "sd", "discordance", "model", "detectable", "reason"}.
    Differences all in {-1, 0, 1} (a yes/no measure; binary=None infers it) use the exact McNemar
    power at the observed share of changed questions; others the paired t-test's. detectable is
    None with a reason where the questions cannot support a number."""
    check_alpha_power(alpha, power)
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
