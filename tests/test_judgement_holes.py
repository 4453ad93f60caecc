"""Judgement holes: unjudged@k, condensed nDCG, bpref (against trec_eval's own test data), pool()."""
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, check_golden, metric_table, retrieval_report, save_questions
from vectrixdb.evaluation.retrieval.metrics import Measure, compute, judge
from vectrixdb.evaluation.retrieval.pooling import draft_rows, merge, pool
from vectrixdb.evaluation.retrieval.providers import Judged
from vectrixdb.widgets import pool_review

DATA = Path(__file__).parent / "data" / "trec_eval"


def fixed(runs):
    return lambda query: runs[query]


# R = 2 relevant (a: 1, c: 2), N = 2 judged not relevant (b, d); x and y are unjudged
HAND = Question("hand", None, {"a": 1, "b": 0, "d": 0, "c": 2}, "1")
HAND_RUN = ["x", "b", "a", "y", "d", "c"]


def test_unjudged_condensed_ndcg_and_bpref_by_hand():
    perfect = Question("perfect", None, {"c": 2, "a": 1}, "2")
    report = retrieval_report(fixed({"hand": HAND_RUN, "perfect": ["c", "a"]}), [HAND, perfect], k=(1, 3, 5))
    row = report.frame.loc["1"]
    assert (row["unjudged@1"], row["unjudged@3"], row["unjudged@5"]) == (1.0, pytest.approx(1 / 3), 2 / 5)
    # condensed: b a d c; top 3 gains 0 1 0 against the ideal 2 1 0
    ideal = 2 + 1 / math.log2(3)
    assert row["ndcg_judged@3"] == pytest.approx((1 / math.log2(3)) / ideal, abs=1e-12)
    assert row["ndcg@3"] == pytest.approx((1 / math.log2(4)) / ideal, abs=1e-12)  # the unjudged x costs a rank
    # a: 1 judged non-relevant above, 1 - 1/min(2, 2); c: 2 above, 1 - 2/2; (0.5 + 0) / 2
    assert row["bpref@100"] == pytest.approx(0.25, abs=1e-12)
    best = report.frame.loc["2"]  # perfect: everything judged, relevant first
    assert (best["unjudged@5"], best["ndcg_judged@5"], best["bpref@100"]) == (0.0, pytest.approx(1.0), 1.0)
    # the headline pools every question's top-k results: (2 unjudged of 5) + (0 of 2)
    assert report["unjudged"] == {1: 0.5, 3: pytest.approx(1 / 5), 5: pytest.approx(2 / 7)}
    assert report["bpref"] == pytest.approx(0.625) and set(report["ndcg_judged"]) == {1, 3, 5}
    assert "unjudged={1: 0.5000, 3: 0.2000, 5: 0.2857}" in repr(report)  # shown with the headline


def test_nothing_returned_is_not_perfect_and_unjudged_is_undefined():
    report = retrieval_report(lambda q: [], [HAND], k=(1, 5))
    row = report.frame.loc["1"]
    assert math.isnan(row["unjudged@5"]) and report["unjudged"] == {1: None, 5: None}
    assert row["bpref@100"] == 0.0 and row["ndcg_judged@5"] == 0.0
    useless = retrieval_report(lambda q: ["b", "d", "x"], [HAND], k=(3,))  # only non-relevant and unjudged
    assert useless["bpref"] == 0.0 and useless["ndcg_judged"] == {3: 0.0}
    assert useless["unjudged"][3] == pytest.approx(1 / 3)


def test_at_page_grain_a_chunk_is_judged_by_any_of_its_labels():
    q = Question("p", None, {"r.pdf#page=3": 1, "r.pdf#page=5": 0}, "p")
    hits = [{"chunk_id": "r::0", "doc_id": "r.pdf", "pages": [5], "text": ""},  # judged not relevant
            {"chunk_id": "r::1", "doc_id": "r.pdf", "pages": [8], "text": ""},  # unjudged
            {"chunk_id": "r::2", "doc_id": "r.pdf", "pages": [3, 4], "text": ""}]  # relevant (page 4 unjudged)
    row = retrieval_report(lambda query: hits, [q], k=(3,), by="page").frame.loc["p"]
    assert row["unjudged@3"] == pytest.approx(1 / 3)
    assert row["bpref@100"] == 0.0  # the one relevant page has the one non-relevant (N = R = 1) above it
    assert row["ndcg_judged@3"] == pytest.approx(1 / math.log2(3))  # condensed: page 5, then page 3


def test_a_page_judged_not_relevant_does_not_judge_its_document():
    q = Question("d", None, {"a#page=2": 0, "b": 1}, "d")
    row = retrieval_report(lambda query: ["a", "b"], [q], k=(2,)).frame.loc["d"]
    assert row["unjudged@2"] == 0.5 and row["bpref@100"] == 1.0


def _trec(name):
    qrels, run = defaultdict(dict), defaultdict(dict)
    for line in (DATA / f"{name}.qrels").read_text().splitlines():
        q, _, doc, grade = line.split()
        qrels[q][doc] = int(grade)
    for line in (DATA / f"{name}.run").read_text().splitlines():
        q, _, doc, _, score, _ = line.split()
        run[q][doc] = float(score)
    return dict(qrels), dict(run)


@pytest.mark.parametrize("name", ["test", "comment"])
def test_bpref_and_condensed_ndcg_equal_pytrec_eval_on_trec_evals_test_data(name):
    import pytrec_eval

    qrels, run = _trec(name)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "ndcg_cut.10"}).evaluate(run)
    condensed = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}, judged_docs_only_flag=True).evaluate(run)
    table = metric_table(run, qrels, ["bpref", "ndcg_judged@10", "ndcg@10", "unjudged@10"])
    assert sorted(table.index) == sorted(theirs)
    for q in theirs:
        assert table.loc[q, "bpref"] == pytest.approx(theirs[q]["bpref"], abs=1e-12)
        assert table.loc[q, "ndcg_judged@10"] == pytest.approx(condensed[q]["ndcg_cut_10"], abs=1e-12)
        assert table.loc[q, "ndcg@10"] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12)
    top5 = {q: dict(sorted(r.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:5]) for q, r in run.items()}
    cut = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(top5)  # bpref@5: trec_eval -M 5
    at5 = metric_table(run, qrels, ["bpref@5"])
    assert all(at5.loc[q, "bpref@5"] == pytest.approx(cut[q]["bpref"], abs=1e-12) for q in cut)
    if name == "test":  # trec_eval's own output for these files, test/out.test and out.test.aq
        assert round(table["bpref"].mean(), 4) == 0.1981
        assert [round(table.loc[q, "bpref"], 4) for q in ("301", "302", "303")] == [0.1230, 0.4712, 0.0]
    else:
        assert 0 < table["unjudged@10"].mean() < 1  # the cut-down comment qrels leave holes in the top 10


def test_grades_below_zero_are_pooled_not_judged_as_trec_eval_reads_them():
    """A qrels line graded -1 is in the pool but not judged: bpref neither counts it as non-relevant
    nor as ranked above, the judged-only measures drop it. A fifth of trec_eval's own test lines
    set to -1; every question against pytrec_eval (unjudged@10 by its definition: the share of the
    top 10 with no grade of 0 or more). The hand case: the only judged non-relevant line is -1."""
    import pytrec_eval

    qrels, run = _trec("test")
    rnd = np.random.default_rng(7)
    for q in qrels:
        for doc in qrels[q]:
            if rnd.random() < 0.2:
                qrels[q][doc] = -1
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "ndcg_cut.10", "P.10", "recip_rank"}).evaluate(run)
    condensed = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}, judged_docs_only_flag=True).evaluate(run)
    table = metric_table(run, qrels, ["bpref", "ndcg_judged@10", "ndcg@10", "precision@10", "mrr", "unjudged@10"])
    ranked = {q: sorted(r, key=lambda d: (r[d], d), reverse=True) for q, r in run.items()}
    for q in theirs:
        row = table.loc[q]
        assert row["bpref"] == pytest.approx(theirs[q]["bpref"], abs=1e-12)
        assert row["ndcg_judged@10"] == pytest.approx(condensed[q]["ndcg_cut_10"], abs=1e-12)
        assert row["ndcg@10"] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12)
        assert row["precision@10"] == pytest.approx(theirs[q]["P_10"], abs=1e-12)
        assert row["mrr"] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)
        top = ranked[q][:10]
        assert row["unjudged@10"] == pytest.approx(sum(qrels[q].get(d, -1) < 0 for d in top) / len(top))
    by_hand = metric_table({"q": {"bad": 2.0, "good": 1.0}}, {"q": {"good": 1, "bad": -1}}, ["bpref", "unjudged@2"])
    assert by_hand.loc["q", "bpref"] == 1.0 == pytrec_eval.RelevanceEvaluator(
        {"q": {"good": 1, "bad": -1}}, {"bpref"}).evaluate({"q": {"bad": 2.0, "good": 1.0}})["q"]["bpref"]
    assert by_hand.loc["q", "unjudged@2"] == 0.5


def test_the_label_slot_path_agrees_with_the_plain_one():
    qrels, run = _trec("comment")
    ids = sorted(run)
    ranked = [sorted(run[q], key=lambda d: (-run[q][d], d), reverse=False) for q in ids]
    measures = [Measure("bpref"), Measure("ndcg_judged", 10), Measure("unjudged", 10), Measure("bpref", 5)]
    depth = max(len(r) for r in ranked)
    plain = compute(judge(ranked, [qrels.get(q, {}) for q in ids], depth), measures)
    slots = compute(judge([[(d,) for d in r] for r in ranked], [qrels.get(q, {}) for q in ids], depth), measures)
    for m in plain:
        np.testing.assert_allclose(plain[m], slots[m], atol=1e-12, equal_nan=True)


def test_arrays_without_judgements_are_refused_not_guessed():
    bare = Judged(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)), np.array([2.0]))
    with pytest.raises(BadInput, match="grade-0 labels"):
        compute(bare, [Measure("bpref")])
    with pytest.raises(BadInput, match="unknown measure"):
        metric_table({"q": ["a"]}, {"q": {"a": 1}}, ["bpref_judged"])


# pool ---------------------------------------------------------------------------------------------
def test_pool_by_hand_orders_by_runs_then_rank_and_skips_what_is_judged():
    qs = [Question("one", None, {"a": 1, "b": 0}, "q1"), Question("two", None, ["x"], "q2")]
    runs = {"A": {"q1": ["a", "c", "b", "d"], "q2": ["y", "x"]}, "B": {"q1": ["d", "c"], "q2": ["z"]}}
    report = pool(runs, qs, depth=3)
    got = report.frame[["id", "label", "runs", "best_rank"]].values.tolist()
    assert got == [["q1", "c", 2, 2], ["q1", "d", 1, 1], ["q2", "y", 1, 1], ["q2", "z", 1, 1]]
    assert report.frame.loc[0, "found_by"] == ["A", "B"] and report.frame.loc[1, "ranks"] == {"B": 1}
    assert report["first_found"] == {"A": 2, "B": 2} and report["pooled"] == 4 and report.kind == "pool"
    assert pool(runs, qs, depth=1).frame["label"].tolist() == ["d", "y", "z"]  # a (rank 1 in A) is judged


def test_pool_by_page_knows_whole_document_and_grade_0_labels():
    q = Question("p", None, {"a#page=2": 0, "b": 1}, "p")
    run = {"p": [{"chunk_id": "a::0", "doc_id": "a", "pages": [2, 3]},
                 {"chunk_id": "b::0", "doc_id": "b", "pages": [7]}]}
    report = pool({"hits": lambda query: run[query]}, [q], depth=5, by="page")
    assert report.frame["label"].tolist() == ["a#page=3"]
    with pytest.raises(BadInput, match="pool judges"):
        pool({"hits": run}, [q], by="evidence")


def test_pool_on_a_real_collection_then_judge_and_merge(policies, tmp_path):
    qs = [Question("Can I defer my loan payments after a flood?", None, {"deferment": 1, "mortgage": 0}, "defer"),
          Question("My card was stolen; am I liable?", None, ["card-fraud"], "fraud")]
    dense = retrieval_report(policies, qs, k=(1, 3), mode="dense")
    runs = {"dense": dense, "keyword": lambda query: policies.search(query, 3, mode="keyword")}
    report = pool(runs, qs, depth=3)
    held = {d["doc_id"] for d in policies.documents()}
    for row in report.frame.itertuples():
        judged = dict(next(q for q in qs if q.key() == row.id).graded())
        assert row.label in held and row.label not in judged and 1 <= row.best_rank <= 3
    assert report.frame["runs"].is_monotonic_decreasing
    for q in qs:  # every unjudged result of the dense run's top 3 is in the pool, found by it
        pooled = report.frame[report.frame["id"] == q.key()]
        unjudged = [d for d in dense.frame.loc[q.key(), "retrieved"][:3] if d not in dict(q.graded())]
        assert len(unjudged) == round(dense.frame.loc[q.key(), "unjudged@3"] * 3)
        assert all("dense" in pooled[pooled["label"] == d]["found_by"].iloc[0] for d in unjudged)
    # a person judges: keeps the first pooled label of the first row, rejects the second row
    widget = pool_review(report, policies, qs)
    first = widget.rows[0]["suggestions"][0]["label"]
    widget.accept(0, [first])
    if len(widget.rows) > 1:
        widget.reject(1)
    judged = merge(widget, qs)
    path = save_questions(judged, str(tmp_path / "judged.jsonl"))
    assert check_golden(path, policies).ok
    again = retrieval_report(policies, path, k=(3,), mode="dense")
    decided = {widget.rows[i]["key"] for i in widget.decisions}
    for key in decided:
        assert again.frame.loc[key, "unjudged@3"] == 0.0  # every pooled result of a decided row is judged now
    assert dict(next(q for q in judged if q.key() == widget.rows[0]["key"]).graded())[first] == 1.0
    # or saved as draft rows to edit by hand
    drafts = save_questions(draft_rows(report, qs), str(tmp_path / "drafts.jsonl"))
    check = check_golden(drafts, policies)
    assert check.ok and any(f.field == "draft" for f in check.notes)


def test_pool_refuses_what_it_cannot_read():
    q = Question("one", None, ["a"], "q1")
    with pytest.raises(BadInput, match="at least one run"):
        pool({}, [q])
    with pytest.raises(BadInput, match="depth"):
        pool({"A": {"q1": ["a"]}}, [q], depth=0)
    report = retrieval_report(lambda query: ["b", "a"], [q], k=(1,), depth=1)  # reads, and keeps, the top 1
    with pytest.raises(BadInput, match="by='doc'"):
        pool({"r": report}, [q], by="chunk")
    shallow = pool({"r": report}, [q], depth=5)
    assert shallow.frame["label"].tolist() == ["b"] and "kept its top 1 only" in shallow["warnings"][0]


def test_a_saved_report_pools_as_the_live_one_and_a_pool_saves(tmp_path):
    from vectrixdb.evaluation import load_report

    q = [Question("one", None, {"a": 1, "b": 0}, "q1")]
    live = retrieval_report(lambda s: ["c", "a", "b", "d"], q, k=(1, 3))
    saved = load_report(str(tmp_path / "retrieval" / "runs" / live.save(str(tmp_path)) / "report.json"))
    report = pool({"saved": saved, "live": live}, q, depth=3)
    assert report.frame.to_dict("records") == [{"id": "q1", "question": "one", "label": "c", "runs": 2, "best_rank": 1,
                                                "found_by": ["saved", "live"], "ranks": {"saved": 1, "live": 1}}]
    back = load_report(str(tmp_path / "retrieval" / "runs" / report.save(str(tmp_path)) / "report.json"))
    assert back.kind == "pool" and back.frame.to_dict("records") == report.frame.to_dict("records")
