"""Metric kernels on hand-computed cases, and canonical names that round-trip."""
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.retrieval.metrics import Measure, compute, judge, metric_table


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


def test_a_query_judged_only_non_relevant_scores_zero_and_one_without_judgements_is_unlabelled():
    import ir_measures
    import pytrec_eval
    from ir_measures import RR, P, nDCG

    run = {"q": {"a": 0.9, "b": 0.1}, "zero": {"a": 0.9}, "empty": {"a": 0.9}, "absent": {"a": 0.9}}
    qrels = {"q": {"a": 1}, "zero": {"a": 0, "b": 0}, "empty": {}, "unrun": {"x": 1}}
    names = ["ndcg@10", "precision@1", "recall@10", "f1@10", "hit_rate@1", "mrr"]
    for form in (run, {q: list(r) for q, r in run.items()}):  # the sparse and the ranked path
        table = metric_table(form, qrels, names)
        assert list(table.index) == ["q", "zero"]  # trec_eval's query set
        assert table.loc["zero"].tolist() == [0.0] * len(names) and table.loc["q", "ndcg@10"] == 1.0
        assert table.attrs["unlabelled"] == ["empty", "absent"] and table.attrs["not_in_run"] == ["unrun"]
    judged = {q: j for q, j in qrels.items() if j}
    theirs = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "P.1", "recip_rank"}).evaluate(run)
    assert sorted(theirs) == ["q", "zero"] and theirs["zero"]["ndcg_cut_10"] == 0.0
    for query in ("q", "zero"):
        assert table.loc[query, "ndcg@10"] == theirs[query]["ndcg_cut_10"] and table.loc[query, "mrr"] == theirs[
            query]["recip_rank"]
    in_run = {q: j for q, j in judged.items() if q in run}
    aggregate = ir_measures.calc_aggregate([nDCG @ 10, P @ 1, RR], in_run, run)
    assert table["ndcg@10"].mean() == pytest.approx(aggregate[nDCG @ 10], abs=1e-12) and table["ndcg@10"].mean() == 0.5
    assert table["mrr"].mean() == pytest.approx(aggregate[RR], abs=1e-12)
    # ir_measures also scores a judged query missing from the run, as 0 (trec_eval -c): not_in_run holds them
    everything = ir_measures.calc_aggregate([nDCG @ 10], judged, run)[nDCG @ 10]
    assert table["ndcg@10"].sum() / (len(table) + len(table.attrs["not_in_run"])) == pytest.approx(everything)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "high", None])
def test_a_score_that_is_not_a_finite_number_is_named(bad):
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 0.9, "c": 0.1}, "q2": {"b": 0.5, "d": bad}}
    with pytest.raises(BadInput, match=r"run\['q2'\]\['d'\]"):
        metric_table(run, qrels, ["ndcg@10"])
    with pytest.raises(BadInput, match=r"run\['q2'\]\['d'\]"):  # the same when another query is a list
        metric_table({**run, "q1": ["a", "c"]}, qrels, ["ndcg@10"])


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
    from vectrixdb.evaluation.retrieval.metrics import _ranked

    return _ranked(scores)


TREC_EVAL = Path(__file__).parent / "data" / "trec_eval"


def test_trec_evals_own_test_data_31_queries_one_judged_only_non_relevant():
    """trec_eval's test/*.comment.test (cut down, see tests/data/trec_eval/README.md)."""
    import ir_measures
    import pytrec_eval
    from ir_measures import RR, P, R, Success, nDCG

    from vectrixdb.evaluation.retrieval.interop import load_trec_qrels, load_trec_run

    run, qrels = load_trec_run(str(TREC_EVAL / "comment.run")), load_trec_qrels(str(TREC_EVAL / "comment.qrels"))
    assert max(qrels["2024-36302"].values()) == 0 and len(qrels["2024-36302"]) == 36
    names = ["precision@5", "precision@10", "recall@10", "recall@20", "ndcg@5", "ndcg@10", "ndcg@20", "mrr",
             "hit_rate@1", "hit_rate@5"]
    table = metric_table(run, qrels, names)
    ranked = metric_table({q: _ranked_for_test(r) for q, r in run.items()}, qrels, names)
    assert len(table) == 31 and table.loc["2024-36302"].tolist() == [0.0] * len(names)
    # trec_eval's published figures for these files (test/out.comment.test): num_q 31, P_5, P_10, recip_rank
    assert (round(table["precision@5"].mean(), 4), round(table["precision@10"].mean(), 4),
            round(table["mrr"].mean(), 4)) == (0.8, 0.771, 0.8595)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"P.5,10", "recall.10,20", "ndcg_cut.5,10,20", "recip_rank",
                                                    "success.1,5"}).evaluate(run)
    keys = {"precision@5": "P_5", "precision@10": "P_10", "recall@10": "recall_10", "recall@20": "recall_20",
            "ndcg@5": "ndcg_cut_5", "ndcg@10": "ndcg_cut_10", "ndcg@20": "ndcg_cut_20", "mrr": "recip_rank",
            "hit_rate@1": "success_1", "hit_rate@5": "success_5"}
    assert sorted(theirs) == sorted(table.index)
    for q in table.index:
        for name, key in keys.items():
            assert table.loc[q, name] == pytest.approx(theirs[q][key], abs=1e-12), (q, name)
            assert ranked.loc[q, name] == pytest.approx(theirs[q][key], abs=1e-12), (q, name)
    measures = {"precision@10": P @ 10, "recall@20": R @ 20, "ndcg@10": nDCG @ 10, "mrr": RR, "hit_rate@5": Success @ 5}
    aggregate = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
    for name, measure in measures.items():
        assert table[name].mean() == pytest.approx(aggregate[measure], abs=1e-9), name


def test_a_new_measure_is_computed_as_itself_on_every_path(measure_registry):
    from vectrixdb.evaluation.retrieval.measures import Family, declare
    from vectrixdb.evaluation.retrieval.metrics import kernel
    from vectrixdb.evaluation.retrieval.providers import SPARSE

    @declare
    class DCG(Family):
        """dcg@k = sum over the top k results of grade_i / log2(i + 1), not normalised."""

        name = "dcg"

    @kernel("dcg")  # the ranked provider only, for now
    def dcg(j, k):
        return np.asarray(j.gains)[:, :k] @ (1.0 / np.log2(np.arange(2, k + 2)))

    qrels = {"q1": {"a": 2, "c": 1}, "q2": {"y": 1}, "q3": {"n": 0}}
    run = {"q1": {"a": 0.2, "b": 0.9, "c": 0.5}, "q2": {"x": 0.5, "y": 0.5}, "q3": {"n": 1.0}}
    lists = {q: _ranked_for_test(r) for q, r in run.items()}  # q1: b c a; q2: y x (ties: larger id first)
    expected = [1 / math.log2(3) + 2 / math.log2(4), 1.0, 0.0]
    for form in (run, lists):
        table = metric_table(form, qrels, ["dcg@3", "ndcg@3"])
        assert table["dcg@3"].tolist() == pytest.approx(expected, abs=1e-12)
        assert table["dcg@3"].tolist() != pytest.approx(table["ndcg@3"].tolist())  # never nDCG in its place
    SPARSE.provides("dcg")(lambda r, k: np.bincount(r.qi, weights=np.where(r.rank <= k, r.grade / np.log2(
        np.minimum(r.rank, 1e18) + 1), 0.0), minlength=r.n))
    assert metric_table(run, qrels, ["dcg@3"])["dcg@3"].tolist() == pytest.approx(expected, abs=1e-12)


RBP_MODULE = '''"""Rank-biased precision in a module of its own: the family and its kernel together."""
import numpy as np

from vectrixdb.evaluation.retrieval.measures import Family, declare
from vectrixdb.evaluation.retrieval.providers import RANKED


@declare
class RBP(Family):
    """rbp@k = (1 - p) * sum over i = 1..k of rel_i * p^(i - 1), rel_i = 1 when the i-th result earns
    a label, p = 0.8 (Moffat & Zobel 2008)."""

    name = "rbp"


@RANKED.provides("rbp")
def rbp(j, k):
    rel = (np.asarray(j.found)[:, :k] > 0).astype(float)
    return 0.2 * rel @ (0.8 ** np.arange(rel.shape[1]))
'''


def test_a_measure_in_its_own_module_is_found_through_its_entry_point(measure_registry, distribution):
    """A family and its kernel in a module of their own, outside vectrixdb, are imported when a
    measure is first named, because a distribution names the module in the entry-point group
    vectrixdb.measures; dict and list runs give the formula's values."""
    qrels = {"q1": {"a": 1, "c": 2, "z": 0}, "q2": {"b": 1}}
    lists = {"q1": ["a", "b", "c", "d"], "q2": ["c", "d", "e", "b"]}
    dicts = {q: {d: 10.0 - i for i, d in enumerate(r)} for q, r in lists.items()}
    with pytest.raises(BadInput, match=r"unknown measure 'rbp@3'.*entry point in the group 'vectrixdb.measures'"):
        metric_table(lists, qrels, ["rbp@3"])  # not named anywhere yet
    distribution("vx-rbp-measure", {"vectrixdb.measures": {"rbp": "vx_rbp_measure:RBP"}},
                 {"vx_rbp_measure": RBP_MODULE})
    from_lists, from_dicts = metric_table(lists, qrels, ["rbp@3"]), metric_table(dicts, qrels, ["rbp@3"])
    assert from_lists.loc["q1", "rbp@3"] == pytest.approx(0.2 * (1 + 0.8 ** 2)) == from_dicts.loc["q1", "rbp@3"]
    assert from_lists.loc["q2", "rbp@3"] == 0.0 == from_dicts.loc["q2", "rbp@3"]  # b is 4th: past k


def test_a_measure_no_provider_computes_is_refused_with_those_that_are(measure_registry):
    from vectrixdb.evaluation.retrieval.measures import Family, declare

    @declare
    class RPrec(Family):
        """rprec = precision at R, the number of relevant labels."""

        name = "rprec"
        cutoff = "optional"

    assert str(Measure.parse("rprec")) == "rprec"
    for form in ({"q": {"a": 1.0}}, {"q": ["a"]}):
        with pytest.raises(BadInput, match=r"no provider computes it; computed: \['bpref', 'f1', 'hit_rate', 'mrr'"):
            metric_table(form, {"q": {"a": 1}}, ["rprec", "ndcg@10"])
    with pytest.raises(BadInput, match="no provider computes"):
        compute(judge([["a"]], [{"a": 1}], 1), [Measure("rprec")])
    with pytest.raises(ValueError, match="declare the measure family 'unheard' first"):
        from vectrixdb.evaluation.retrieval.metrics import kernel

        kernel("unheard")(lambda j, k: None)


@pytest.mark.parametrize("grade", ["1", None, "x"])
def test_a_grade_that_is_not_a_number_is_named_not_read(grade):
    """A string or None grade is refused naming its query and label (the sparse path once read "1"
    as 1 and None as not relevant, without a word)."""
    from vectrixdb.errors import BadInput

    with pytest.raises(BadInput, match=r"query 'q2': the grade of 'b' is .*, not a number"):
        metric_table({"q1": {"a": 1.0}, "q2": {"a": 1.0, "b": 0.5}}, {"q1": {"a": 1}, "q2": {"b": grade}}, ["ndcg@10"])
