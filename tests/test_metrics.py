"""Metric kernels on hand-computed cases, and canonical names that round-trip."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vectrixdb.evaluation.metrics import Measure, compute, judge, metric_table


def values(ranking, relevant, measures, depth=10):
    judged = judge([ranking], [{r: 1 for r in relevant}], depth)
    return {k: float(v[0]) for k, v in compute(judged, [Measure.parse(m) for m in measures]).items()}


def test_hand_computed_single_question():
    # relevant a and c; ranking: x a y c  -> hits at ranks 2 and 4
    got = values(["x", "a", "y", "c"], {"a", "c"}, ["precision@4", "recall@1", "recall@4", "f1@4", "hit_rate@1",
                                                    "hit_rate@2", "mrr", "ndcg@4"])
    assert got["precision@4"] == 0.5
    assert got["recall@1"] == 0.0 and got["recall@4"] == 1.0
    assert got["f1@4"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert got["hit_rate@1"] == 0.0 and got["hit_rate@2"] == 1.0
    assert got["mrr"] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert got["ndcg@4"] == pytest.approx(dcg / idcg, abs=1e-12)


def test_precision_divides_by_k_even_when_fewer_come_back():
    assert values(["a"], {"a"}, ["precision@5"])["precision@5"] == 0.2


def test_a_repeated_id_earns_once():
    got = values(["a", "a", "b"], {"a", "b"}, ["recall@2", "precision@2", "ndcg@3"])
    assert got["recall@2"] == 0.5 and got["precision@2"] == 0.5


def test_nothing_relevant_returned_is_zero_not_undefined():
    got = values(["x", "y"], {"a"}, ["mrr", "ndcg@10", "recall@10"])
    assert got == {"mrr": 0.0, "ndcg@10": 0.0, "recall@10": 0.0}


def test_a_result_satisfying_two_labels():
    judged = judge([[("q1", "q2"), ()]], [{"q1": 1, "q2": 1}], 2)
    got = compute(judged, [Measure.parse("recall@1"), Measure.parse("precision@2")])
    assert got["recall@1"][0] == 1.0 and got["precision@2"][0] == 0.5


def test_graded_ndcg():
    judged = judge([["b", "a"]], [{"a": 2, "b": 1}], 2)
    ndcg = compute(judged, [Measure.parse("ndcg@2")])["ndcg@2"][0]
    assert ndcg == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))


@pytest.mark.parametrize("name", ["ndcg@10", "recall@5", "mrr", "mrr@10", "hit_rate@3", "f1@1", "precision@100"])
def test_names_round_trip(name):
    assert str(Measure.parse(name)) == name


@pytest.mark.parametrize("bad", ["ndgc@10", "recall", "ndcg@0", "ndcg@x"])
def test_unknown_or_malformed_names(bad):
    with pytest.raises(ValueError):
        Measure.parse(bad)


def test_metric_table_from_dicts_breaks_ties_like_trec_eval():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    table = metric_table(run, {"q": {"a": 1}}, ["mrr"])
    # trec_eval orders equal scores by docno descending: b before a
    assert table.loc["q", "mrr"] == 0.5
    assert np.isclose(metric_table({"q": ["a"]}, {"q": {"a": 1}}, ["ndcg@10"]).loc["q", "ndcg@10"], 1.0)


def test_one_result_satisfying_two_labels_never_lifts_ndcg_over_one():
    # a chunk holding both quotes at rank 1 fills two label slots there; the ideal gets two slots too
    judged = judge([[("q1", "q2"), ()]], [{"q1": 1, "q2": 1}], 2)
    got = compute(judged, [Measure.parse("ndcg@1"), Measure.parse("ndcg@2")])
    assert got["ndcg@1"][0] == pytest.approx(1.0) and got["ndcg@2"][0] == pytest.approx(1.0)
    # the quotes found one rank apart: below 1, and the same as two separate right results
    apart = compute(judge([[("q1",), ("q2",)]], [{"q1": 1, "q2": 1}], 2), [Measure.parse("ndcg@2")])["ndcg@2"][0]
    assert apart == pytest.approx(1.0)
    late = compute(judge([[(), ("q1", "q2")]], [{"q1": 1, "q2": 1}], 2), [Measure.parse("ndcg@2")])["ndcg@2"][0]
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    assert late == pytest.approx(dcg / (1 + 1 / math.log2(3)))  # two labels: the ideal's third slot is empty


def test_mrr_to_a_stated_depth():
    ranking = ["x"] * 0 + [f"n{i}" for i in range(7)] + ["a"]  # first right at rank 8
    got = values(ranking, {"a"}, ["mrr@5", "mrr@10", "mrr"])
    assert got == {"mrr@5": 0.0, "mrr@10": 0.125, "mrr": 0.125}


def test_a_query_with_no_relevant_judgement_is_left_out_not_scored_zero():
    table = metric_table({"q": ["a"], "empty": ["a"], "zero": ["a"]}, {"q": {"a": 1}, "empty": {}, "zero": {"a": 0}},
                         ["ndcg@10"])
    assert list(table.index) == ["q"]


def test_graded_ndcg_equals_pytrec_eval():
    import pytrec_eval

    qrels = {"q1": {"a": 2, "b": 1, "c": 0, "d": 2}, "q2": {"x": 1, "y": 2}}
    run = {"q1": {"c": 0.9, "b": 0.8, "a": 0.7, "e": 0.6, "d": 0.5}, "q2": {"y": 0.3, "z": 0.2, "x": 0.1}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3", "ndcg_cut.5", "recip_rank"}).evaluate(run)
    ours = metric_table(run, qrels, ["ndcg@3", "ndcg@5", "mrr"])
    for q in qrels:
        assert ours.loc[q, "ndcg@3"] == pytest.approx(theirs[q]["ndcg_cut_3"], abs=1e-12)
        assert ours.loc[q, "ndcg@5"] == pytest.approx(theirs[q]["ndcg_cut_5"], abs=1e-12)
        assert ours.loc[q, "mrr"] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)


labels = st.sampled_from([f"l{i}" for i in range(6)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(labels, st.tuples(labels, labels), st.tuples()), max_size=12),
       st.dictionaries(labels, st.sampled_from([0, 1, 2, 3]), min_size=1), st.integers(1, 12))
def test_every_metric_lies_in_zero_one_and_a_perfect_ranking_scores_one(ranking, qrels, k):
    ranking = [tuple(dict.fromkeys(x)) if isinstance(x, tuple) else x for x in ranking]
    measures = [Measure(m, k) for m in ("precision", "recall", "f1", "hit_rate", "ndcg", "mrr")]
    got = compute(judge([ranking], [qrels], k), measures)
    for name, value in got.items():
        assert 0.0 <= value[0] <= 1.0 + 1e-12, (name, value)
    relevant = sorted((lab for lab, g in qrels.items() if g > 0), key=lambda lab: -qrels[lab])
    if relevant:
        # every label first: all of them in one result, or one a rank best grade first
        for perfect in ([tuple(relevant)], list(relevant)):
            best = compute(judge([perfect], [qrels], k), [Measure("ndcg", k), Measure("mrr", k)])
            assert best["ndcg@%d" % k][0] == pytest.approx(1.0) and best["mrr@%d" % k][0] == 1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]),
                                          st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]), max_size=10),
                          st.dictionaries(st.sampled_from([f"d{i}" for i in range(14)]), st.sampled_from([0, 1, 2]),
                                          min_size=1, max_size=5)), min_size=1, max_size=6))
def test_the_sparse_path_for_scored_runs_equals_the_ranked_one(pairs):
    run = {f"q{i}": r for i, (r, _) in enumerate(pairs)}
    qrels = {f"q{i}": j for i, (_, j) in enumerate(pairs)}
    names = ["ndcg@3", "ndcg@10", "recall@5", "precision@2", "f1@3", "hit_rate@1", "mrr", "mrr@2"]
    sparse = metric_table(run, qrels, names)
    ranked = metric_table({q: [d for d in _ranked_for_test(r)] for q, r in run.items()}, qrels, names)
    assert list(sparse.index) == list(ranked.index)
    for name in names:
        assert np.allclose(sparse[name].to_numpy(), ranked[name].to_numpy(), atol=1e-12), name


def _ranked_for_test(scores):
    from vectrixdb.evaluation.metrics import _ranked

    return _ranked(scores)
