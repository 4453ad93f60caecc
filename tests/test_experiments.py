"""compare_runs says one thing per measure: Holm-corrected across the measures compared, and an
interval from the same test that made the verdict (issue 25 item 7)."""
import numpy as np
import pandas as pd
import pytest

from vectrixdb.evaluation import compare_runs
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.evaluation.runs.stats import SignFlip, holm, mcnemar_exact

MEASURES = ("ndcg@10", "recall@10", "hit_rate@10", "mrr@100", "page_f1@10", "doc_f1@10", "doc_recall@10",
            "precision@10", "found", "page_recall@10")


def run(rng, n: int) -> Report:
    """One retrieval run's per-question table: continuous, skewed, binary and mostly-zero measures."""
    base = rng.random(n)
    table = {"ndcg@10": base, "recall@10": np.clip(base + rng.normal(0, 0.2, n), 0, 1),
             "hit_rate@10": (rng.random(n) < 0.6).astype(float), "mrr@100": rng.random(n) ** 2,
             "page_f1@10": rng.random(n) * 0.2, "doc_f1@10": (rng.random(n) < 0.5) * rng.random(n),
             "doc_recall@10": (rng.random(n) < 0.7).astype(float), "precision@10": rng.integers(0, 4, n) / 10,
             "found": rng.random(n) < 0.5, "page_recall@10": rng.integers(0, 3, n) / 2}
    return Report("retrieval", {"questions": n}, pd.DataFrame(table, index=[f"q{i}" for i in range(n)]))


def test_null_pairs_are_flagged_at_most_five_percent_of_the_time():
    """60 pairs of runs drawn from one distribution x 10 measures = 600 comparisons, none real."""
    rng = np.random.default_rng(20261201)
    flagged = raw = total = 0
    for i in range(60):
        exp = compare_runs(run(rng, 40), run(rng, 40), seed=i, n_flips=1999)
        frame = exp.frame
        assert list(frame.index) == list(MEASURES)
        total += len(frame)
        flagged += int(frame["verdict"].isin(["better", "worse"]).sum())
        raw += int((frame["p_value"] < 0.05).sum())
    assert total == 600
    assert flagged <= 0.05 * total, f"{flagged} of {total} null comparisons flagged"
    # the uncorrected test itself is calibrated: about 5% below 0.05 (binomial sd ~9 at 600)
    assert 5 <= raw <= 55, raw


def test_the_interval_and_the_verdict_never_disagree_unexplained():
    rng = np.random.default_rng(7)
    a, b = run(rng, 60), run(rng, 60)
    b.frame["ndcg@10"] = np.clip(a.frame["ndcg@10"] + 0.15 + rng.normal(0, 0.1, 60), 0, 1)  # a real gain
    b.frame["precision@10"] = a.frame["precision@10"] + rng.choice([0.0, 0.1], 60, p=[0.7, 0.3])  # a small one
    exp = compare_runs(a, b)
    assert "Holm" in exp["rule"] and exp.frame.attrs["rule"] == exp["rule"] and exp["measures"] == 10
    assert exp["correction"] == "Holm-Bonferroni"
    assert "ndcg@10" in exp["better"]
    for name, row in exp.frame.iterrows():
        excludes = row["ci low"] > 0 or row["ci high"] < 0
        assert excludes == (row["p_value"] < 1 - row["ci level"]), name  # the same test at the printed level
        if row["verdict"] in ("better", "worse"):
            assert excludes and row["p_holm"] < 0.05 and (row["difference"] > 0) == (row["verdict"] == "better")
        elif excludes:
            assert row["verdict"].startswith("could be luck (Holm stopped at "), name
        assert row["ci low"] <= row["difference"] <= row["ci high"]


def test_holm_against_its_definition_and_a_worked_example():
    # sorted 0.005, 0.01, 0.03, 0.04 of m = 4: 4 x 0.005, 3 x 0.01, max(0.03, 2 x 0.03), max(0.06, 1 x 0.04)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and holm([]) == [] and holm([0.02]) == [0.02]
    try:
        from statsmodels.stats.multitest import multipletests
    except ImportError:  # not a dependency; the worked example above is the check then
        return
    p = np.random.default_rng(3).random(25) ** 3
    assert holm(list(p)) == pytest.approx(list(multipletests(p, method="holm")[1]))


def test_the_sign_flip_test_is_mcnemar_on_yes_no_measures_and_undefined_where_nothing_can_be_told():
    a = [True] * 3 + [False] * 9
    b = [True] * 11 + [False]
    d = np.array(b, float) - np.array(a, float)
    test = SignFlip(d)
    assert test.exact and test.p(0.0) == pytest.approx(mcnemar_exact(a, b)["p_value"])
    assert SignFlip([0.4]).interval(0.05) == (None, None) and SignFlip([0.4]).p() == 1.0
    same = SignFlip(np.zeros(30))
    assert same.p() == 1.0 and same.interval(0.05) == (0.0, 0.0)


def test_compare_runs_on_two_real_retrieval_runs(tmp_path):
    from vectrixdb.evaluation import Question, run_evaluation

    qs = [Question(f"q{i}", None, [f"d{i}"], f"q{i}") for i in range(30)]
    a = run_evaluation(lambda q: [f"d{int(q[1:])}"] if int(q[1:]) < 10 else ["none"], qs)
    b = run_evaluation(lambda q: [f"d{int(q[1:])}"] if int(q[1:]) < 12 else ["none"], qs)
    c = run_evaluation(lambda q: [f"d{int(q[1:])}"], qs)
    small = compare_runs(a, b)
    assert small["better"] == [] and set(small.frame["verdict"]) == {"could be luck"}
    big = compare_runs(a, c)
    assert "doc_recall@10" in big["better"] and big.frame.loc["doc_recall@10", "test"].startswith("McNemar")
    assert big.frame.loc["doc_recall@10", "ci low"] > 0
