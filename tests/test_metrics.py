"""Metric kernels on hand-computed cases, and canonical names that round-trip."""
import math

import numpy as np
import pytest

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


@pytest.mark.parametrize("name", ["ndcg@10", "recall@5", "mrr", "hit_rate@3", "f1@1", "precision@100"])
def test_names_round_trip(name):
    assert str(Measure.parse(name)) == name


@pytest.mark.parametrize("bad", ["ndgc@10", "recall", "mrr@3", "ndcg@x"])
def test_unknown_or_malformed_names(bad):
    with pytest.raises(ValueError):
        Measure.parse(bad)


def test_metric_table_from_dicts_breaks_ties_like_trec_eval():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    table = metric_table(run, {"q": {"a": 1}}, ["mrr"])
    # trec_eval orders equal scores by docno descending: b before a
    assert table.loc["q", "mrr"] == 0.5
    assert np.isclose(metric_table({"q": ["a"]}, {"q": {"a": 1}}, ["ndcg@10"]).loc["q", "ndcg@10"], 1.0)
