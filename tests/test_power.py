"""questions_needed (issue 31 item 1): the stated power is the power compare_runs' own test has.

Simulations call stats.SignFlip, the test compare_runs decides with, on synthetic paired
differences whose true mean is the stated detectable difference (seeded; a few hundred repeats;
the binomial sd of a rate near 0.8 over 400 repeats is 0.02, so "within a few points" is 0.05).
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, compare_runs, load_run, questions_needed, run_evaluation
from vectrixdb.evaluation.runs.power import detectable_difference, min_questions, power_at, questions_for
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.evaluation.runs.stats import SignFlip, holm


def table(values: dict, n: int) -> Report:
    return Report("retrieval", {"questions": n}, pd.DataFrame(values, index=[f"q{i}" for i in range(n)]))


def rate(diffs, alpha=0.05) -> float:
    return float(np.mean([SignFlip(d, seed=i).p(0.0) < alpha for i, d in enumerate(diffs)]))


def test_a_continuous_measure_detects_its_stated_difference_with_the_stated_power():
    rng = np.random.default_rng(31)
    n = 40
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.03, 0.25, n), 0, 1)
    pilot = questions_needed(table({"ndcg@10": a}, n), table({"ndcg@10": b}, n))
    row = pilot.frame.loc["ndcg@10"]
    delta, sd = row["detectable"], row["sd"]
    assert row["n"] == n and 0 < delta < 1 and power_at(delta, sd, n) == pytest.approx(0.8, abs=1e-6)
    got = rate([delta + sd * rng.standard_normal(n) for _ in range(400)])
    assert abs(got - 0.8) <= 0.05, got
    assert rate([sd * rng.standard_normal(n) for _ in range(400)]) <= 0.08  # and no power where nothing differs


@pytest.mark.slow
def test_a_yes_no_measure_meets_the_power_of_the_exact_mcnemar_test():
    """d = B - A is -1, 0 or 1 (the sign-flip test is McNemar's sign test); 30% of questions change.
    The t form overstates this test's power (discrete, conservative): the exact one is what holds."""
    rng = np.random.default_rng(5)
    n, discordant = 150, 0.3
    pilot = rng.choice([1.0, -1.0, 0.0], n, p=[0.16, 0.14, 0.7])
    got = detectable_difference(pilot, discordance=discordant)
    delta = got["detectable"]
    assert got["model"] == "exact McNemar" and 0 < delta < discordant
    assert power_at(delta, None, n, discordance=discordant) == pytest.approx(0.8, abs=1e-6)
    up, down = (discordant + delta) / 2, (discordant - delta) / 2
    flagged = rate([rng.choice([1.0, -1.0, 0.0], n, p=[up, down, 1 - discordant]) for _ in range(400)])
    assert abs(flagged - 0.8) <= 0.05, flagged
    sd = math.sqrt(discordant - 0.1**2)  # at a gain of 0.1 the t form says 0.62, the exact test 0.56
    assert power_at(0.1, sd, n) > power_at(0.1, sd, n, discordance=discordant) + 0.04
    assert power_at(0.0, sd, n, discordance=discordant) < 0.05  # its size: conservative, never above alpha


@pytest.mark.slow
def test_holm_across_measures_meets_at_least_the_power_stated_at_alpha_over_m():
    """compare_runs' detectable column is at the Bonferroni level alpha / m: a p below it always
    passes Holm's step-down, so the power of Holm's verdict on that measure is at least the stated."""
    rng = np.random.default_rng(11)
    n, m, sd = 50, 3, 0.2
    delta = detectable_difference(sd * rng.standard_normal(n), alpha=0.05 / m, sd=sd)["detectable"]
    flagged = exact = 0
    for i in range(300):
        diffs = [delta + sd * rng.standard_normal(n), sd * rng.standard_normal(n), sd * rng.standard_normal(n)]
        p = [SignFlip(d, seed=i).p(0.0) for d in diffs]
        flagged += holm(p)[0] < 0.05  # compare_runs' verdict rule: Holm-adjusted p < 1 - confidence
        exact += p[0] < 0.05 / m
    assert abs(exact / 300 - 0.8) <= 0.05, exact / 300
    assert flagged / 300 >= 0.8 - 0.05, flagged / 300


def test_compare_runs_shows_the_detectable_difference_beside_each_verdict():
    rng = np.random.default_rng(2)
    n = 60
    a = {"ndcg@10": rng.random(n), "hit_rate@10": (rng.random(n) < 0.5).astype(float)}
    b = {"ndcg@10": np.clip(a["ndcg@10"] + rng.normal(0, 0.2, n), 0, 1), "hit_rate@10": a["hit_rate@10"].copy()}
    exp = compare_runs(table(a, n), table(b, n), n_flips=1999)
    assert "detectable" in exp["rule"]
    want = detectable_difference(b["ndcg@10"] - a["ndcg@10"], alpha=0.05 / 2)["detectable"]
    assert exp.frame.loc["ndcg@10", "detectable"] == pytest.approx(want)
    assert exp.frame.loc["ndcg@10", "verdict"] == "could be luck"
    assert pd.isna(exp.frame.loc["hit_rate@10", "detectable"])  # no question changed: nothing to size on
    assert "no question changed" in exp["undetectable"]["hit_rate@10"]


def test_the_power_function_is_the_paired_t_tests_and_the_normal_formula_in_the_large():
    from statsmodels.stats.power import TTestPower

    for delta, sd, n in ((0.1, 0.3, 40), (0.05, 0.2, 200), (0.3, 0.5, 8)):
        assert power_at(delta, sd, n) == pytest.approx(TTestPower().power(delta / sd, n, 0.05), abs=1e-9)
    delta, sd = 0.02, 0.25  # n = ((z_{0.975} + z_{0.8}) sd / delta)^2, Cohen 1988, plus about one for t
    normal = ((norm.ppf(0.975) + norm.ppf(0.8)) * sd / delta) ** 2
    need = questions_for(delta, sd)
    assert normal <= need <= normal + 3
    assert power_at(delta, sd, need) >= 0.8 > power_at(delta, sd, need - 1)
    assert questions_for(0.1, 0.3, power=0.9) > questions_for(0.1, 0.3, power=0.8) > questions_for(0.2, 0.3)
    # 100,000 questions at alpha 0.005 (ten measures): scipy's noncentral t gives NaN far in a tail there
    big = detectable_difference(np.random.default_rng(0).normal(0, 0.2, 100_000), alpha=0.005)
    normal_big = (norm.ppf(1 - 0.0025) + norm.ppf(0.8)) * big["sd"] / math.sqrt(100_000)
    assert big["detectable"] == pytest.approx(normal_big, rel=1e-3)
    yes_no = detectable_difference(np.r_[np.ones(10_000), -np.ones(10_000), np.zeros(80_000)], alpha=0.005)
    assert yes_no["model"] == "exact McNemar" and 0 < yes_no["detectable"] < 0.2


def test_too_few_questions_no_spread_and_no_questions_say_why_never_a_number():
    assert min_questions(0.05) == 6  # the exact sign-flip test's smallest p at 5 questions is 2/32 > 0.05
    assert SignFlip(np.ones(5)).p(0.0) == pytest.approx(2 / 32) and SignFlip(np.ones(6)).p(0.0) < 0.05
    five = detectable_difference([0.1, 0.3, 0.2, 0.5, 0.4])
    assert five["detectable"] is None and "2/2^5" in five["reason"] and "at least 6" in five["reason"]
    assert power_at(10.0, 0.1, 5) == 0.0
    one = detectable_difference([0.3])
    assert one["detectable"] is None and "one question" in one["reason"]
    assert detectable_difference([])["reason"] == "no question to size a test on"
    flat = detectable_difference([0.2] * 30)
    assert flat["detectable"] is None and "sd 0" in flat["reason"]
    with pytest.raises(BadInput):
        detectable_difference([0.1, 0.2], alpha=0)
    n = 20
    a = table({"recall@10": np.linspace(0, 1, n)}, n)
    same = questions_needed(a, table({"recall@10": np.linspace(0, 1, n)}, n))
    row = same.frame.loc["recall@10"]
    assert pd.isna(row["detectable"]) and "sd 0" in row["reason"] and pd.isna(row["questions for"])
    other = Report("retrieval", {"questions": 3}, pd.DataFrame({"recall@10": [0.1, 0.2, 0.3]}, index=["x", "y", "z"]))
    with pytest.raises(BadInput, match="no question"):
        questions_needed(a, other)
    with pytest.raises(BadInput, match="not in both"):
        questions_needed(a, measures=["ndcg@10"])


def test_one_run_assumes_a_second_system_and_says_so():
    rng = np.random.default_rng(8)
    n = 40
    x = rng.random(n)
    alone = questions_needed(table({"ndcg@10": x}, n), difference=0.1)
    row = alone.frame.loc["ndcg@10"]
    assert not alone["paired"] and "assumed" in alone["rule"] and alone["correlation"] == 0
    assert row["sd"] == pytest.approx(x.std(ddof=1) * math.sqrt(2))
    assert row["detectable"] == pytest.approx(detectable_difference(x, sd=row["sd"])["detectable"])
    assert row["questions for"] == questions_for(0.1, row["sd"]) and pd.isna(row["difference"])
    tighter = questions_needed(table({"ndcg@10": x}, n), difference=0.1, correlation=0.5).frame.loc["ndcg@10"]
    assert tighter["sd"] == pytest.approx(x.std(ddof=1)) and tighter["questions for"] < row["questions for"]


def test_on_real_saved_runs_by_id_saved_loaded_and_plotted(tmp_path):
    qs = [Question(f"q{i}", None, [f"d{i}"], f"q{i}") for i in range(30)]
    a = run_evaluation(lambda q: [f"d{int(q[1:])}"] if int(q[1:]) < 10 else ["none"], qs, save_to=str(tmp_path))
    b = run_evaluation(lambda q: [f"d{int(q[1:])}"] if int(q[1:]) < 14 else ["none"], qs, save_to=str(tmp_path))
    got = questions_needed(a["run_id"], b["run_id"], folder=str(tmp_path), measures=["doc_recall@10"])
    row = got.frame.loc["doc_recall@10"]  # yes/no: 4 of 30 questions changed, all up
    assert row["n"] == 30 and row["difference"] == pytest.approx(4 / 30) and row["model"] == "exact McNemar"
    assert row["discordance"] == pytest.approx(4 / 30)
    assert row["questions for"] == questions_for(4 / 30, None, discordance=4 / 30) and row["questions for"] > 30
    assert row["power at difference"] < 0.8  # 4 of 30 questions gained: these 30 cannot tell it reliably
    run_id = got.save(str(tmp_path))
    back = load_run(str(tmp_path), run_id)
    assert back.kind == "power" and back["questions_for"] == got["questions_for"]
    pd.testing.assert_frame_equal(back.frame, got.frame, check_dtype=False)
    got.plot(save=str(tmp_path / "power.png"))
    assert (tmp_path / "power.png").stat().st_size > 10_000
