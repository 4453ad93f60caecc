"""runs/stats.py bootstrap_interval: the interval on a mean over questions holds its level (issue 45 item 6)."""
import numpy as np
import pytest
from scipy.stats import binom, t

from vectrixdb.evaluation.runs.stats import bootstrap_interval, studentized, wilson_cc


def test_wilson_cc_matches_newcombe_1998():
    # Newcombe (1998), Statistics in Medicine 17:857-872, table I, method 4 (score with continuity correction)
    for (k, n), want in {(81, 263): (0.2535, 0.3682), (15, 148): (0.0598, 0.1644),
                         (0, 20): (0.0, 0.2005), (1, 29): (0.0018, 0.1963)}.items():
        assert wilson_cc(k, n) == pytest.approx(list(want), abs=5e-5)
    assert wilson_cc(20, 20) == pytest.approx([1 - 0.2005, 1.0], abs=5e-5)  # the mirror of 0 of 20


def test_all_hits_is_not_certainly_one():
    """The percentile bootstrap gave [1, 1] for 20 hits of 20 and [0.85, 1] for 19 of 20; both covered 0.877
    at a true rate of 0.9 (n = 20). Now: an interval of positive width, exactly as Wilson with continuity
    correction puts it, that holds the truth at >= 95% for every count of hits."""
    low, high = bootstrap_interval([1.0] * 20)
    assert high == 1.0 and low == pytest.approx(1 - 0.2005, abs=5e-5)
    assert bootstrap_interval([1] * 19 + [0]) == pytest.approx(wilson_cc(19, 20))
    assert bootstrap_interval([0] * 20)[0] == 0.0 < bootstrap_interval([0] * 20)[1]
    for n in (10, 20, 30):
        every = [bootstrap_interval([1.0] * k + [0.0] * (n - k)) for k in range(n + 1)]
        for rate in (0.3, 0.7, 0.9, 0.95):
            inside = np.array([low <= rate <= high for low, high in every])
            assert binom.pmf(np.arange(n + 1), n, rate) @ inside >= 0.95, (n, rate)


def test_graded_covers_a_skewed_score():
    """Beta(0.5, 1.5) at n = 30: the percentile bootstrap covered 0.92 (benchmarks/ppi_coverage.json);
    the studentized interval with the Student's t floor covers >= 0.95 (1,000 draws: Monte Carlo se ~0.007)."""
    rng = np.random.default_rng(7)
    draws = rng.beta(0.5, 1.5, (1000, 30))
    ends = np.array([bootstrap_interval(row) for row in draws])
    assert np.mean((ends[:, 0] <= 0.25) & (0.25 <= ends[:, 1])) >= 0.95


def test_graded_ends_and_small_samples():
    x = np.random.default_rng(0).beta(0.5, 1.5, 60)
    low, high = bootstrap_interval(x)
    mean, half = x.mean(), t.ppf(0.975, 59) * x.std(ddof=1) / np.sqrt(60)
    assert low <= mean - half and high >= mean + half  # never narrower than Student's t on either side
    assert high - mean > mean - low  # right-skewed scores: the upper end lies further out
    assert bootstrap_interval(x) == bootstrap_interval(x)  # seeded: the same report twice gives the same figures
    s_low, s_high = studentized(x)
    assert min(s_low, mean - half) == low and max(s_high, mean + half) == high
    two = bootstrap_interval([-0.2, 0.4])  # every resample of two values has mean 0.1 or no se: Student's t alone
    assert two == pytest.approx([0.1 - t.ppf(0.975, 1) * 0.3, 0.1 + t.ppf(0.975, 1) * 0.3])
    assert bootstrap_interval([0.2, 0.4]) == [0.0, 1.0]  # the same width, cut to where a mean of scores can be
    assert bootstrap_interval([1.0]) is None and bootstrap_interval([]) is None  # one question: no interval
    assert bootstrap_interval([0.5] * 10) is None  # equal scores say nothing of how far the mean could be
    for values in ([0.5] * 9 + [0.6], [0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0], [0.0, 1.0, 0.5]):
        low, high = bootstrap_interval(values)
        assert low < float(np.mean(values)) < high  # never zero width on values that differ


def test_an_interval_stays_where_the_mean_can_be():
    """A mean of [0, 1] scores is neither above 1 nor below 0, nor a mean of non-negative figures
    below 0: the t floor put recall@10 of 0.96 over 40 page-labelled questions at [0.91, 1.02]."""
    recall = [1.0] * 37 + [0.5, 0.5, 0.5]  # graded (halves): the studentized interval with Student's floor
    low, high = bootstrap_interval(recall)
    assert high == 1.0 and 0 < low < np.mean(recall)
    low, high = bootstrap_interval([0.0] * 37 + [0.5, 0.5, 0.5])
    assert low == 0.0 and np.mean([0.5] * 3) / 40 * 3 < high < 1
    dcg = [0.0] * 30 + [2.5, 0.1, 3.0]  # non-negative, not a [0, 1] score: cut at 0 only
    low, high = bootstrap_interval(dcg)
    assert low == 0.0 and high > np.mean(dcg)
