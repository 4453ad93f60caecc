"""TREC files, ranx, ir_measures and datasets in and out: the same numbers whichever way in."""
import pytest

from vectrixdb.evaluation import Question, metric_table, retrieval_report
from vectrixdb.evaluation.interop import (from_ir_measures, from_ranx, load_trec_qrels, load_trec_run, to_ir_measures,
                                          to_ranx, write_trec_qrels, write_trec_run)

RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"x": 0.5, "y": 0.5, "z": 0.1}}
QRELS = {"q1": {"b": 2, "c": 1}, "q2": {"y": 1}}


def test_trec_files_round_trip_and_bad_lines_are_named(tmp_path):
    run_path = write_trec_run(RUN, str(tmp_path / "run.txt"))
    qrels_path = write_trec_qrels(QRELS, str(tmp_path / "qrels.txt"))
    assert load_trec_run(run_path) == RUN and load_trec_qrels(qrels_path) == QRELS
    assert open(run_path).read().splitlines()[3] == "q2 Q0 y 1 0.500000 vectrixdb"  # ties by id, descending
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
