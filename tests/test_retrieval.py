"""retrieval_report at every grain: tiny cases worked by hand, any retriever, misses, evaluate."""
import pytest

from vectrixdb.evaluation import Question, evaluate, retrieval_report
from vectrixdb.evaluation.labels import holds, normal


def fixed(results):
    """A retriever that always returns the same results (a callable target)."""
    return lambda query: results


HITS = [
    {"chunk_id": "r::0", "doc_id": "r.pdf", "pages": [3], "text": "Revenue grew 10% in 2021 as trips recovered."},
    {"chunk_id": "r::1", "doc_id": "r.pdf", "pages": [40, 41], "text": "Our headcount was 29,300 employees. As of"},
    {"chunk_id": "r::2", "doc_id": "r.pdf", "pages": [41], "text": "December 31, 2021, we had 29,300 employees worldwide."},
    {"chunk_id": "s::0", "doc_id": "s.pdf", "pages": [1], "text": "Unrelated safety text."},
]


def test_doc_grain_counts_a_document_once_at_its_best_rank():
    q = Question("q?", None, ["s.pdf"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(1, 2))
    assert r["recall"] == {1: 0.0, 2: 1.0} and r["mrr"] == 0.5  # r.pdf is rank 1, s.pdf rank 2
    assert r["precision"][2] == 0.5


def test_page_grain_ranks_pages_in_the_order_chunks_cover_them():
    q = Question("q?", None, ["r.pdf#page=41"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(1, 2, 3), by="page")
    # units: r.pdf#page=3, r.pdf#page=40, r.pdf#page=41 -> first right at rank 3
    assert r["recall"] == {1: 0.0, 2: 0.0, 3: 1.0} and r["mrr"] == pytest.approx(1 / 3)
    assert r.frame.loc["q", "first_right"] == 3


def test_page_grain_accepts_a_whole_document_label():
    q = Question("q?", None, ["s.pdf", "r.pdf#page=3"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(1, 5), by="page")
    assert r["recall"] == {1: 0.5, 5: 1.0}


def test_chunk_grain():
    q = Question("q?", None, ["r::2"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(2, 3), by="chunk")
    assert r["recall"] == {2: 0.0, 3: 1.0}
    # Vecta levels over the top max(k) = 3 results: 1 of 3 retrieved is right, the 1 expected is found
    assert r["levels"]["chunk"] == {"precision": pytest.approx(1 / 3), "recall": 1.0, "f1": pytest.approx(0.5)}


def test_evidence_grain_with_a_chunk_that_ends_inside_the_quote():
    quote = "As of December 31, 2021, we had 29,300 employees"
    q = Question("How many employees?", None, ["r.pdf#page=41"], "q", evidence=[quote])
    # r::1 ends with "As of" - under half the quote: not enough; r::2 starts inside it holding
    # "December 31, 2021, we had 29,300 employees" - more than half: it counts
    r = retrieval_report(fixed(HITS), [q], k=(1, 2, 3), by="evidence")
    assert r["recall"] == {1: 0.0, 2: 0.0, 3: 1.0}
    whole = Question("q?", None, ["r.pdf"], "w", evidence=["trips recovered"])
    assert retrieval_report(fixed(HITS), [whole], k=1, by="evidence")["recall"] == {1: 1.0}


def test_holds_by_hand():
    quote = normal("we had 29,300 employees worldwide")
    assert holds(normal("In 2021 we had 29,300 employees worldwide."), quote)
    assert holds(normal("text text we had 29,300 employ"), quote)        # ends inside, over half
    assert not holds(normal("text text we had"), quote)                   # ends inside, under half
    assert holds(normal("29,300 employees worldwide. Next"), quote)       # starts inside, over half
    assert holds(normal("**We had** 29,300\nemployees   worldwide"), quote)  # marks, case, spaces


def test_evidence_row_without_quotes_is_counted_by_pages():
    q = Question("q?", None, ["r.pdf#page=40"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(2,), by="evidence")
    assert r["recall"] == {2: 1.0} and r.frame.loc["q", "grain"] == "page"


def test_two_quotes_in_one_chunk():
    q = Question("q?", None, ["r.pdf"], "q", evidence=["Revenue grew 10%", "trips recovered"])
    r = retrieval_report(fixed(HITS), [q], k=(1,), by="evidence")
    assert r["recall"] == {1: 1.0} and r["precision"] == {1: 1.0}


def test_unlabelled_questions_are_counted_and_left_out_and_none_is_not_perfect():
    qs = [Question("no labels"), Question("labelled", None, ["s.pdf"], "x")]
    r = retrieval_report(fixed(HITS), qs, k=1)
    assert r["questions"] == 1 and r["unlabelled"] == 1
    empty = retrieval_report(fixed(HITS), [Question("no labels")], k=1)
    assert empty["recall"] is None and empty["mrr"] is None and "no labelled questions" in empty["reason"]


def test_ids_and_dicts_and_langchain_like_documents():
    class Doc:  # the shape of a LangChain Document
        def __init__(self, text, meta):
            self.page_content, self.metadata = text, meta

    q = Question("q?", None, ["b#page=2"], "q")
    assert retrieval_report(fixed(["a", "b"]), [Question("q?", None, ["b"], "q")], k=2)["mrr"] == 0.5
    docs = [Doc("x", {"source": "a", "page": 0}), Doc("y", {"source": "b", "page": 1})]  # 0-based pages
    assert retrieval_report(fixed(docs), [q], k=2, by="page")["mrr"] == 0.5


def test_misses_show_what_came_back_and_how_deep_the_right_one_was(policies):
    q = Question("mortgage overpay penalty", None, ["card-fraud"], "m")
    r = retrieval_report(policies, [q], k=(1,), mode="keyword")
    (miss,) = r["misses"]
    assert miss["id"] == "m" and miss["got"][0]["doc_id"] == "mortgage"
    assert miss["first_right_rank"] is None or miss["first_right_rank"] > 1


def test_search_options_pass_through_and_are_refused_for_callables(policies):
    q = [Question("defer a loan payment", None, ["deferment"], "d")]
    assert retrieval_report(policies, q, k=1, mode="keyword")["search"] == {"mode": "keyword"}
    with pytest.raises(ValueError, match="only apply to a Vectrix"):
        retrieval_report(fixed(HITS), q, k=1, mode="keyword")
    with pytest.raises(ValueError, match="unknown grain"):
        retrieval_report(policies, q, by="sentence")


def test_evaluate_compares_setups_and_picks(policies):
    qs = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
          Question("stolen card liability", None, ["card-fraud"], "2"),
          Question("overpay mortgage penalty", None, ["mortgage"], "3")]
    report = evaluate(policies, qs, k=(1, 3), rerank=[lambda q, texts: [-len(t) for t in texts]], progress=False)
    assert report["setups"] == 6 and len(report.frame) == 6
    assert set(report.frame["mode"]) == {"dense", "keyword", "hybrid"}
    best = report["best"]
    assert best["ndcg@3"] == report.frame["ndcg@3"].max()
    close = report["fastest_close"]
    assert close["ndcg@3"] >= best["ndcg@3"] - 0.01
    assert report["best_per_ms"]["mode"] in {"dense", "keyword", "hybrid"}


def test_plots_draw(policies):
    import matplotlib

    matplotlib.use("Agg")
    from vectrixdb.plotting import hit_heatmap

    qs = [Question("defer loan payments", None, ["deferment"], "1"), Question("stolen card", None, ["card-fraud"], "2")]
    report = retrieval_report(policies, qs, k=(1, 3))
    assert report.plot().axes and hit_heatmap(report).axes
    assert evaluate(policies, qs, k=(1, 3), progress=False).plot().axes


def test_report_json_and_polars_carry_the_per_question_rows():
    import json

    q = Question("q?", None, ["s.pdf"], "q")
    report = retrieval_report(fixed(HITS), [q], k=(1, 2))
    data = json.loads(report.to_json())
    assert data["kind"] == "retrieval" and data["rows"][0]["id"] == "q" and data["recall"] == {"1": 0.0, "2": 1.0}
    assert report.to_polars()["recall@2"].to_list() == [1.0]
    assert "<table>" in report._repr_html_()
