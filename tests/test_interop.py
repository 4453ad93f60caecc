"""TREC files, ranx, ir_measures and datasets in and out: the same numbers whichever way in."""
import pytest

from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, metric_table, retrieval_report
from vectrixdb.evaluation.retrieval.interop import (from_ir_measures, from_ranx, load_trec_qrels, load_trec_run, to_ir_measures,
                                          to_ranx, write_trec_qrels, write_trec_run)

RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"x": 0.5, "y": 0.5, "z": 0.1}}
QRELS = {"q1": {"b": 2, "c": 1}, "q2": {"y": 1}}


def test_trec_files_round_trip_and_bad_lines_are_named(tmp_path):
    run_path = write_trec_run(RUN, str(tmp_path / "run.txt"))
    qrels_path = write_trec_qrels(QRELS, str(tmp_path / "qrels.txt"))
    assert load_trec_run(run_path) == RUN and load_trec_qrels(qrels_path) == QRELS
    assert open(run_path).read().splitlines()[3] == "q2 Q0 y 1 0.5 vectrixdb"  # ties by id, descending
    with pytest.raises(FileExistsError):
        write_trec_run(RUN, run_path)
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1 0.9 tag\nq1 Q0 b 2\n")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: a run line"):
        load_trec_run(str(bad))


@pytest.mark.slow
def test_ranx_and_ir_measures_in_and_out_give_the_same_figures():
    import ir_measures
    from ir_measures import RR, nDCG

    run, qrels = to_ranx(RUN, QRELS)
    assert from_ranx(run) == RUN and from_ranx(qrels) == QRELS
    docs, rels = to_ir_measures(RUN, QRELS)
    assert from_ir_measures(docs) == RUN and from_ir_measures(rels) == QRELS
    ours = metric_table(from_ranx(run), from_ir_measures(rels), ["ndcg@3", "mrr"])
    theirs = ir_measures.calc_aggregate([nDCG @ 3, RR], rels, docs)
    assert ours["ndcg@3"].mean() == pytest.approx(theirs[nDCG @ 3], abs=1e-12)
    assert ours["mrr"].mean() == pytest.approx(theirs[RR], abs=1e-12)


def test_a_retrieval_report_goes_out_as_a_trec_run_and_a_dataset(tmp_path):
    hits = [{"chunk_id": "a::0", "doc_id": "a", "score": 0.9}, {"chunk_id": "a::1", "doc_id": "a", "score": 0.8},
            {"chunk_id": "b::0", "doc_id": "b", "score": 0.5}]
    report = retrieval_report(lambda q: hits, [Question("q?", None, ["b"], "q1")], k=(1, 2))
    path = report.to_trec(str(tmp_path / "run.txt"))
    assert load_trec_run(path) == {"q1": {"a": 0.9, "b": 0.5}}  # documents at their best chunk's score
    data = report.to_dataset()
    assert data[0]["id"] == "q1" and data[0]["retrieved"] == ["a", "b"]


def test_load_beir_from_datasets():
    import datasets

    from vectrixdb.evaluation import load_beir

    corpus = datasets.Dataset.from_list([{"_id": "d1", "title": "T", "text": "one"}, {"_id": "d2", "title": "", "text": "two"}])
    queries = datasets.Dataset.from_list([{"_id": "q1", "text": "which?"}, {"_id": "q9", "text": "unjudged"}])
    qrels = datasets.Dataset.from_list([{"query-id": "q1", "corpus-id": "d2", "score": 2}])
    data = load_beir((corpus, queries, qrels))
    assert data.documents == {"d1": "T one", "d2": "two"} and data.folder is None
    (q,) = data.questions
    assert q.key() == "q1" and q.graded() == [("d2", 2.0)]
    with pytest.raises(ValueError, match="no column"):
        load_beir((corpus, queries, corpus))


def _trec_eval_order(scores: dict) -> list:
    """trec_eval's own order: score descending, then docno descending (form_res_rels.c)."""
    return [d for d, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def test_a_write_load_round_trip_of_50_queries_by_1000_documents_is_exact(tmp_path):
    import random

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(1000)]
    scored = {f"q{q}": {d: rng.random() * 10 ** rng.randint(-8, 3) for d in docs} for q in range(50)}
    path = write_trec_run(scored, str(tmp_path / "scored.txt"))
    assert load_trec_run(path) == scored  # every float reads back as itself (repr)
    # rankings in their own order: ties broken against docno order, scores out of order, no scores
    rankings = {}
    for q in range(50):
        order = rng.sample(docs, 1000)
        if q % 3 == 0:
            rankings[f"q{q}"] = [(d, round(rng.random(), 1)) for d in order]
        elif q % 3 == 1:
            rankings[f"q{q}"] = [(d, float(1000 - i) // 10) for i, d in enumerate(order)]  # tied in tens
        else:
            rankings[f"q{q}"] = order
    path = write_trec_run(rankings, str(tmp_path / "ranked.txt"))
    loaded = load_trec_run(path)
    for q, given in rankings.items():
        ids = [d if isinstance(d, str) else d[0] for d in given]
        assert _trec_eval_order(loaded[q]) == ids, q
    kept = {"q0": [("b", 0.25), ("a", 0.25)], "q1": [("a", 3.0), ("c", 1e-300)]}  # already in trec_eval's order
    assert load_trec_run(write_trec_run(kept, str(tmp_path / "kept.txt"))) == {q: dict(r) for q, r in kept.items()}


def test_an_exported_report_ranks_in_trec_eval_as_in_the_report(tmp_path):
    import pytrec_eval

    # equal scores the retriever ordered a, b (trec_eval would read b first), and one score out of order
    hits = {"q?": [{"doc_id": "a", "score": 0.5}, {"doc_id": "b", "score": 0.5}, {"doc_id": "c", "score": 0.7}],
            "r?": [{"doc_id": "x", "score": 0.9}, {"doc_id": "y", "score": 0.1}]}
    questions = [Question("q?", None, {"a": 1, "c": 2}, "q1"), Question("r?", None, ["y"], "q2")]
    report = retrieval_report(lambda q: hits[q], questions, k=(1, 3))
    run = load_trec_run(report.to_trec(str(tmp_path / "run.txt")))
    assert list(run["q1"].values()) == [3.0, 2.0, 1.0] and run["q2"] == {"x": 0.9, "y": 0.1}
    theirs = pytrec_eval.RelevanceEvaluator({"q1": {"a": 1, "c": 2}, "q2": {"y": 1}},
                                            {"ndcg_cut.1,3", "recip_rank"}).evaluate(run)
    for q in ("q1", "q2"):
        for k in (1, 3):
            assert report.frame.loc[q, f"ndcg@{k}"] == pytest.approx(theirs[q][f"ndcg_cut_{k}"], abs=1e-12)
        assert report.frame.loc[q, f"mrr@{report['depth']}"] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)


def test_an_exported_report_holds_the_ranking_as_deep_as_its_figures_read(tmp_path):
    """mrr and bpref read to the report's depth (100): the right document at rank 14 is mrr 1/14 in
    the report, and must be in trec_eval's reading of the exported file too (it was 0: the file held
    the top max(k) = 10 only)."""
    import pytrec_eval

    ranking = [f"d{i:02d}" for i in range(1, 31)]
    questions = [Question("q?", None, {"d14": 1, "d03": 0}, "q1"), Question("r?", None, ["d02"], "q2")]
    report = retrieval_report(lambda q: ranking, questions, k=(1, 5, 10))
    run = load_trec_run(report.to_trec(str(tmp_path / "run.txt")))
    assert len(run["q1"]) == 30
    theirs = pytrec_eval.RelevanceEvaluator({"q1": {"d14": 1, "d03": 0}, "q2": {"d02": 1}},
                                            {"recip_rank", "bpref", "ndcg_cut.5,10", "recall.10"}).evaluate(run)
    depth = report["depth"]
    assert report.frame.loc["q1", f"mrr@{depth}"] == pytest.approx(1 / 14) == theirs["q1"]["recip_rank"]
    for q in ("q1", "q2"):
        row = report.frame.loc[q]
        assert row[f"mrr@{depth}"] == pytest.approx(theirs[q]["recip_rank"], abs=1e-12)
        assert row[f"bpref@{depth}"] == pytest.approx(theirs[q]["bpref"], abs=1e-12)
        assert row["ndcg@10"] == pytest.approx(theirs[q]["ndcg_cut_10"], abs=1e-12)
        assert row["recall@10"] == pytest.approx(theirs[q]["recall_10"], abs=1e-12)


@pytest.mark.parametrize("run, match", [({"q": {"a": float("nan")}}, r"run\['q'\]\['a'\] = nan"),
                                        ({"q": [("a", float("inf"))]}, r"run\['q'\]\['a'\] = inf"),
                                        ({"q": ["a b"]}, "'a b': a TREC run's fields"),
                                        ({"q 1": ["a"]}, "query 'q 1'")])
def test_a_run_trec_eval_could_not_read_as_given_is_refused(tmp_path, run, match):
    with pytest.raises(BadInput, match=match):
        write_trec_run(run, str(tmp_path / "run.txt"))
    assert not (tmp_path / "run.txt").exists()


def test_a_run_file_with_a_score_that_is_not_finite_is_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1 0.9 tag\nq1 Q0 b 2 nan tag\n")
    with pytest.raises(BadInput, match=r"bad.txt, line 2: score 'nan' is not finite"):
        load_trec_run(str(bad))
