"""retrieval_report at every grain: tiny cases worked by hand, any retriever, misses, evaluate."""
import math

import pytest

from vectrixdb.evaluation import Question, evaluate, retrieval_report
from vectrixdb.evaluation.golden.labels import holds, normal


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


def test_page_grain_puts_every_page_a_chunk_covers_at_its_own_rank():
    q = Question("q?", None, ["r.pdf#page=41"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(1, 2, 3), by="page")
    # r::1 covers pages 40-41: a hit at its own rank, 2; r::2 (page 41 again) earns nothing more
    assert r["recall"] == {1: 0.0, 2: 1.0, 3: 1.0} and r["mrr"] == pytest.approx(1 / 2)
    assert r.frame.loc["q", "first_right"] == 2
    assert r["precision"][3] == pytest.approx(1 / 3)
    top = [{"chunk_id": "t::0", "doc_id": "t.pdf", "pages": [3, 4], "text": "x"}]
    assert retrieval_report(fixed(top), [Question("q?", None, ["t.pdf#page=4"], "q")], k=1, by="page")["recall"] == {1: 1.0}


def test_a_chunk_over_two_expected_pages_fills_both_and_ndcg_stays_at_most_one():
    q = Question("q?", None, ["r.pdf#page=40", "r.pdf#page=41"], "q")
    r = retrieval_report(fixed(HITS[1:]), [q], k=(1, 2), by="page")
    assert r["recall"] == {1: 1.0, 2: 1.0} and r["ndcg"] == {1: 1.0, 2: 1.0} and r["precision"][1] == 1.0


def test_a_row_expecting_a_document_and_one_of_its_pages_is_scored_on_the_document():
    q = Question("q?", None, ["r.pdf", "r.pdf#page=41"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(1,), by="page")
    assert r["recall"] == {1: 1.0} and r.frame.loc["q", "expected"] == ["r.pdf"] and r.frame.loc["q", "expected_n"] == 1


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
    assert data["kind"] == "retrieval" and data["schema_version"] == 2 and data["status"] == "completed"
    assert data["tables"]["frame"]["data"][0]["id"] == "q" and data["values"]["recall"] == {"1": 0.0, "2": 1.0}
    assert report.to_polars()["recall@2"].to_list() == [1.0]
    assert "<table>" in report._repr_html_()


def test_vecta_levels_by_hand_over_the_chunks_the_ranked_metrics_read():
    q = Question("q?", None, ["r.pdf#page=41", "r.pdf#page=7", "s.pdf"], "q")
    r = retrieval_report(fixed(HITS), [q], k=(3,), by="page")
    # top 3 chunks: r::0 p3, r::1 p40-41, r::2 p41. page level: chunks with an expected page 2/3;
    # expected pages covered 1/2 (41 yes, 7 no). doc level: {r.pdf} vs {r.pdf, s.pdf} -> P 1, R 1/2
    page = r["levels"]["page"]
    assert page["precision"] == pytest.approx(2 / 3) and page["recall"] == 0.5
    assert page["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert r["levels"]["doc"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3)}
    assert r["levels"]["chunk"] is None
    assert r.frame.loc["q", "page_precision@3"] == pytest.approx(2 / 3)  # a set figure names its k
    # at doc grain the ranked metrics read chunks until the k-th document: k=1 reads r::0..r::2
    d = retrieval_report(fixed(HITS), [q], k=(1,), by="doc")
    assert d["levels"]["page"]["precision"] == pytest.approx(2 / 3)


def test_each_question_is_asked_once_and_misses_read_that_one_ranking():
    calls = []

    def target(query):
        calls.append(query)
        return [f"n{i}" for i in range(7)] + ["a"]

    r = retrieval_report(target, [Question("q?", None, ["a"], "q")], k=(1, 3, 5))
    assert calls == ["q?"]
    assert r["mrr"] == 0.125 and r["depth"] == 100 and "mrr@100" in r.frame.columns
    assert r["misses"][0]["first_right_rank"] == 8


def test_labels_that_do_not_fit_the_grain_are_said_not_scored():
    no_pages = retrieval_report(fixed(HITS), [Question("q?", None, ["r.pdf"], "q")], k=1, by="page")
    assert any("no row names a page" in w for w in no_pages["warnings"])
    no_evidence = retrieval_report(fixed(HITS), [Question("q?", None, ["r.pdf#page=3"], "q")], k=1, by="evidence")
    assert any("no row has evidence" in w for w in no_evidence["warnings"])
    no_chunks = retrieval_report(fixed(["r.pdf", "s.pdf"]), [Question("q?", None, ["r.pdf::0"], "q")], k=1, by="chunk")
    assert no_chunks["recall"] is None and no_chunks["ndcg"] is None and "chunk ids" in no_chunks["reason"]
    assert "chunk ids" in repr(no_chunks)
    never = retrieval_report(fixed(["doc-1", "doc-2"]), [Question("q?", None, ["deferment"], "q")], k=1)
    assert any("'doc-1'" in w and "'deferment'" in w for w in never["warnings"])
    drafts = retrieval_report(fixed(HITS), [Question("q?", None, ["r.pdf"], "q", draft=True)], k=1)
    assert any("drafts" in w for w in drafts["warnings"])


def test_a_langchain_source_path_is_matched_by_file_name_with_a_note():
    class Doc:
        def __init__(self, text, meta):
            self.page_content, self.metadata = text, meta

    docs = [Doc("x", {"source": "/data/reports/a.pdf", "page": 0}), Doc("y", {"source": "/data/reports/b.pdf"})]
    r = retrieval_report(fixed(docs), [Question("q?", None, ["b.pdf"], "q")], k=2)
    assert r["mrr"] == 0.5
    assert any("'/data/reports/b.pdf' -> 'b.pdf'" in w for w in r["warnings"])


def test_graded_relevance_end_to_end_equals_pytrec_eval():
    import pytrec_eval

    from vectrixdb.evaluation import metric_table

    qs = [Question("one", None, {"a": 2, "b": 1, "c": 0}, "1"), Question("two", None, {"x": 1, "y": 2}, "2")]
    runs = {"one": ["c", "b", "e", "a"], "two": ["x", "z", "y"]}
    report = retrieval_report(lambda query: runs[query], qs, k=(1, 3, 5))
    qrels = {"1": {"a": 2, "b": 1, "c": 0}, "2": {"x": 1, "y": 2}}
    run = {"1": {d: 10.0 - i for i, d in enumerate(runs["one"])}, "2": {d: 10.0 - i for i, d in enumerate(runs["two"])}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3", "ndcg_cut.5"}).evaluate(run)
    table = metric_table(run, qrels, ["ndcg@3", "ndcg@5"])
    for qid in qrels:
        assert report.frame.loc[qid, "ndcg@3"] == pytest.approx(theirs[qid]["ndcg_cut_3"], abs=1e-12)
        assert report.frame.loc[qid, "ndcg@5"] == pytest.approx(table.loc[qid, "ndcg@5"], abs=1e-12)


def test_intervals_on_the_headline_numbers():
    qs = [Question(f"q{i}", None, ["s.pdf" if i % 2 else "r.pdf"], f"q{i}") for i in range(20)]
    r = retrieval_report(fixed(HITS), qs, k=(1, 2))
    low, high = r["ci"]["recall"][1]
    assert low <= r["recall"][1] <= high and low < high
    assert r["ci"]["mrr"][0] <= r["mrr"] <= r["ci"]["mrr"][1]
    assert "ci=" in repr(r)
    single = retrieval_report(fixed(HITS), qs[:1], k=1)
    assert single["ci"]["recall"][1] is None  # one question: no interval to speak of


def test_one_way_in_a_golden_path_an_int_k_and_the_same_question_names(tmp_path, policies):
    from vectrixdb.evaluation import answer_cutoff, save_questions

    path = save_questions([Question("defer a loan payment", None, ["deferment"]),
                           Question("stolen card", None, ["card-fraud"], "card")], str(tmp_path / "g.jsonl"))
    r = retrieval_report(policies, path, k=2)
    e = evaluate(policies, path, k=2, progress=False)
    c = answer_cutoff(policies, path)
    assert list(r.frame.index) == list(c.frame.index) == [Question("defer a loan payment").key(), "card"]
    assert r["k"] == e["k"] == [2]


def test_load_beir_keeps_the_grades(tmp_path):
    import json as _json

    from vectrixdb.evaluation import load_beir

    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("\n".join(_json.dumps({"_id": d, "title": d, "text": "t"}) for d in "abc") + "\n")
    (folder / "queries.jsonl").write_text(_json.dumps({"_id": "q1", "text": "which?"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t2\nq1\tb\t1\nq1\tc\t0\n")
    data = load_beir(folder, verify=False)
    (q,) = data.questions
    assert q.graded() == [("a", 2.0), ("b", 1.0), ("c", 0.0)] and q.labelled
    report = retrieval_report(lambda query: ["b", "a"], data.questions, k=2)
    assert report["ndcg"][2] == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))


def test_a_chunk_returned_twice_counts_once_at_every_grain_and_level():
    a0 = {"chunk_id": "a::0", "doc_id": "a", "pages": [1], "text": "the fee is ten dollars"}
    b0 = {"chunk_id": "b::0", "doc_id": "b", "pages": [1], "text": "refunds take five days"}
    twice, once = fixed([a0, a0, b0]), fixed([a0, b0])
    q = Question("q?", None, ["a#page=1"], "q", evidence=["the fee is ten dollars"])
    page = retrieval_report(twice, [q], k=(1, 2, 3), by="page")
    assert page["levels"]["page"] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3)}  # 1 of 2 chunks
    assert any("1 result(s) repeated a chunk" in w for w in page["warnings"])
    for by in ("doc", "page", "chunk", "evidence"):
        label = {"chunk": ["a::0"]}.get(by, q.expected)
        row = Question("q?", None, label, "q", evidence=q.evidence)
        r2, r1 = retrieval_report(twice, [row], k=(1, 2, 3), by=by), retrieval_report(once, [row], k=(1, 2, 3), by=by)
        for family in ("precision", "recall", "ndcg", "f1", "hit_rate"):
            assert r2[family] == r1[family], (by, family)
        assert r2["levels"] == r1["levels"] and r2["mrr"] == r1["mrr"]
    assert retrieval_report(twice, [q], k=2, by="page")["precision"] == {2: 0.5}


def test_results_without_pages_or_text_are_said_not_scored_as_zero():
    ids = fixed(["a::0", "b::0"])  # bare chunk ids and no collection: documents, but no pages, no text
    q = Question("q?", None, ["a#page=1"], "q", evidence=["the fee"])
    page = retrieval_report(ids, [q], k=2, by="page")
    assert page["ndcg"] is None and page["levels"] is None and "give the collection" in page["reason"]
    doc = retrieval_report(ids, [q], k=2, by="doc")
    assert doc["recall"] == {2: 1.0} and doc["levels"]["page"] is None
    assert any(w.startswith("page level needs pages: return hits or give the collection") for w in doc["warnings"])
    evidence = retrieval_report(ids, [q], k=2, by="evidence")
    assert any(w.startswith("evidence level needs text") for w in evidence["warnings"])
    mixed = retrieval_report(fixed([{"chunk_id": "a::0", "doc_id": "a", "pages": [1]}, "b::0"]), [q], k=2, by="page")
    assert mixed["recall"] == {2: 1.0} and any("1 of 2 results name no page" in w for w in mixed["warnings"])


def test_a_registered_measure_is_a_report_column_equal_to_metric_table(policies, measure_registry):
    """A measure declared and given a ranked kernel (as docs/extending/measures.md says) is asked of retrieval_report
    and evaluate by name: its column holds, per question, what metric_table computes on the same
    ranking and labels (dict and list runs alike), its mean is in report["measures"], and it is
    never nDCG or another measure in its place. A name no ranked kernel computes is refused, with
    the measures a report computes, before anything is searched."""
    import numpy as np

    from vectrixdb.errors import BadInput
    from vectrixdb.evaluation import metric_table
    from vectrixdb.evaluation.retrieval.measures import Family, declare
    from vectrixdb.evaluation.retrieval.providers import RANKED, SPARSE

    @declare
    class DCG(Family):
        """dcg@k = sum over the top k label slots s of grade_s / log2(s + 1), not normalised."""

        name = "dcg"

    @RANKED.provides("dcg")
    def dcg(j, k):
        return np.asarray(j.gains)[:, :k] @ (1.0 / np.log2(np.arange(2, k + 2)))

    qs = [Question("Can I defer loan payments after a disaster?", None, ["deferment", "emergency-fund"], "1"),
          Question("stolen card liability", None, ["card-fraud"], "2"),
          Question("overpay mortgage penalty", None, ["mortgage", "deferment"], "3"),
          Question("fees waived for displaced customers", None, ["emergency-fund"], "4")]
    report = retrieval_report(policies, qs, k=(1, 3), measures=("dcg@3", "DCG@1"))
    assert report["search"] == {"mode": "hybrid"}  # no mode given: the default, recorded
    frame = report.frame
    assert {"dcg@3", "dcg@1"} <= set(frame.columns)
    lists = {q: list(ids) for q, ids in frame["retrieved"].items()}  # the top 3 documents each question got
    qrels = {q: {d: 1 for d in expected} for q, expected in frame["expected"].items()}
    dicts = {q: {d: 10.0 - i for i, d in enumerate(ids)} for q, ids in lists.items()}
    for run in (lists, dicts):
        table = metric_table(run, qrels, ["dcg@3", "dcg@1"])
        for name in ("dcg@3", "dcg@1"):
            assert frame[name].tolist() == pytest.approx(table.loc[frame.index, name].tolist(), abs=1e-12), name
    assert report["measures"] == {"dcg@3": pytest.approx(frame["dcg@3"].mean()),
                                  "dcg@1": pytest.approx(frame["dcg@1"].mean())}
    assert frame["dcg@3"].max() > 1.0 and frame["dcg@3"].tolist() != frame["ndcg@3"].tolist()  # dcg, not ndcg
    compared = evaluate(policies, qs, k=(1, 3), modes=("hybrid", "keyword"), measures=["dcg@3"], progress=False)
    hybrid = compared.frame.set_index("mode").loc["hybrid"]
    assert hybrid["dcg@3"] == pytest.approx(report["measures"]["dcg@3"])  # the same search: hybrid, the default

    asked = []
    counting = lambda query: asked.append(query) or ["deferment"]  # noqa: E731
    for name, why in [("nosuch@3", r"unknown measure 'nosuch@3'"), ("dcg", r"dcg needs a cut-off")]:
        with pytest.raises(BadInput, match=rf"measures='{name}'.*{why}.*a report computes \['bpref', 'dcg', 'f1'"):
            retrieval_report(counting, qs, k=3, measures=[name])
    with pytest.raises(BadInput, match=r"a report computes \[.*'dcg'"):
        evaluate(policies, qs, k=3, measures=["nosuch@3"], progress=False)

    @declare
    class FastOnly(Family):
        """fast_only@k: a family with a SPARSE kernel only (scored runs), which a report cannot read."""

        name = "fast_only"

    SPARSE.provides("fast_only")(lambda r, k: r.hits(k))
    with pytest.raises(BadInput, match=r"'fast_only' is declared, but no kernel of the ranked provider .*"
                                       r"@RANKED.provides\('fast_only'\)"):
        retrieval_report(counting, qs, k=3, measures=["fast_only@3"])
    assert asked == []  # every refusal came before a single search


def test_an_added_measure_never_changes_the_other_figures_nor_takes_a_column(policies, measure_registry):
    """A measure deeper than the report's depth makes the search deeper, but the built-in figures
    read the ranking cut at the depth they have without it (mrr, bpref, every @k column equal); a
    family named as one of the report's own columns is refused, naming it, before any search."""
    import numpy as np

    from vectrixdb.errors import BadInput
    from vectrixdb.evaluation.retrieval.measures import Family, declare
    from vectrixdb.evaluation.retrieval.providers import RANKED

    @declare
    class DCG(Family):
        """dcg@k = sum over the top k label slots s of grade_s / log2(s + 1), not normalised."""

        name = "dcg"

    RANKED.provides("dcg")(lambda j, k: np.asarray(j.gains)[:, :k] @ (1.0 / np.log2(np.arange(2, k + 2))))
    docs = [f"d{i}" for i in range(300)]
    qs = [Question("q one", None, {"d2": 2, "d5": 1}, "q1"), Question("q two", None, {"d150": 1}, "q2")]
    ranking = lambda query, k=None: docs[:k]  # noqa: E731  the same ranking, as deep as asked
    plain = retrieval_report(ranking, qs, k=(1, 3), depth=100)
    deeper = retrieval_report(ranking, qs, k=(1, 3), depth=100, measures=("dcg@200",))
    assert plain["mrr"] == pytest.approx(1 / 6) and plain["bpref"] == pytest.approx(0.5)  # d150 is past depth 100
    for name in ("mrr", "bpref", "depth", "ndcg", "recall", "precision", "ndcg_judged"):
        assert deeper[name] == plain[name], name
    same = [c for c in plain.frame.columns if c != "latency_ms"]
    assert deeper.frame[same].astype(str).equals(plain.frame[same].astype(str))
    assert deeper["measures"]["dcg@200"] == pytest.approx((2 / np.log2(4) + 1 / np.log2(7) + 1 / np.log2(152)) / 2)

    for clash in ("latency_ms", "first_right", "expected_n", "doc_f1"):
        declare(type(clash, (Family,), {"__doc__": f"{clash}: a family named as a report column", "name": clash,
                                        "cutoff": "optional"}))
        RANKED.provides(clash)(lambda j, k: np.full(len(j.n_rel), 42.0))
        with pytest.raises(BadInput, match=rf"measures='{clash}': '{clash}' is already a column of this report.*"
                                           rf"rename the family '{clash}'"):
            retrieval_report(ranking, qs, k=3, measures=[clash])
    declare(type("Mrr2", (Family,), {"__doc__": "median_ms: clashes with evaluate's column", "name": "median_ms",
                                     "cutoff": "optional"}))
    RANKED.provides("median_ms")(lambda j, k: np.full(len(j.n_rel), 42.0))
    with pytest.raises(BadInput, match=r"'median_ms' is already a column of this report"):
        evaluate(policies, qs, k=3, measures=["median_ms"], progress=False)
