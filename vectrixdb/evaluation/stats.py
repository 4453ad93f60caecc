"""Exact tests for comparing two systems on the same questions, and intervals on means over questions."""
from __future__ import annotations

from typing import Sequence


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> dict[str, float | int]:
    """Exact McNemar test on paired right/wrong outcomes: of the questions exactly one system got
    right (a_only + b_only), is a_only so far from half that luck is unlikely? Two-sided binomial
    test with p = 0.5 (scipy.stats.binomtest). With no discordant question, p = 1."""
    from scipy.stats import binomtest

    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, not {len(a)} and {len(b)}")
    a_only = sum(1 for x, y in zip(a, b) if x and not y)
    b_only = sum(1 for x, y in zip(a, b) if y and not x)
    n = a_only + b_only
    p = 1.0 if n == 0 else float(binomtest(a_only, n, 0.5, alternative="two-sided").pvalue)
    return {"a_only": a_only, "b_only": b_only, "p_value": p}


def bootstrap_interval(values, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> list[float] | None:
    """Percentile-bootstrap interval of a mean over questions (scipy.stats.bootstrap, resampling
    questions with replacement); None for fewer than two questions, where it means nothing.
    Batched so that 100,000 questions never hold more than ~5 million resampled values at once."""
    import numpy as np
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return None
    if np.all(data == data[0]):
        return [float(data[0]), float(data[0])]
    result = bootstrap((data,), np.mean, vectorized=True, confidence_level=confidence, n_resamples=n_resamples,
                       method="percentile", batch=max(1, 5_000_000 // len(data)),
                       random_state=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return [float(low), float(high)]
