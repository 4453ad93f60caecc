"""Exact tests for comparing two systems on the same questions."""
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
