"""Labels that almost match are errors, never silent misses; bare chunk ids get page credit.

A real collection: the first 12 pages of the Uber 10-K (the real PDF, cut with pypdf, added as
`uber_2021.pdf`), embedded by the deterministic stand-in model (nothing here searches by meaning),
and the rows of data/golden/uber_2021.jsonl whose pages it holds."""
import json
import math

import pytest

from tests.conftest import PDFS, ROOT, StandInEmbedder, require
from vectrixdb import Vectrix
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import (Question, check_golden, load_questions, read_golden, retrieval_report,
                                  run_evaluation)

GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"
PAGES = 12


@pytest.fixture(scope="module")
def uber(tmp_path_factory):
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path_factory.mktemp("uber12")
    writer = PdfWriter()
    for page in PdfReader(str(require(PDFS / "uber_2021.pdf"))).pages[:PAGES]:
        writer.add_page(page)
    pdf = folder / "uber_2021.pdf"
    with open(pdf, "wb") as fh:
        writer.write(fh)
    db = Vectrix("uber12", path=folder / "db", model=StandInEmbedder())
    db.add_document(str(pdf))
    return db


def held_rows():
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if all(int(e.rsplit("=", 1)[1]) <= PAGES for e in r["expected"])]


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def mutated(tmp_path, label):
    """The held rows with uber-03 (the 29,300 employees, page 10) labelled `label`; its line number."""
    rows = held_rows()
    line = next(n for n, r in enumerate(rows, start=1) if r["id"] == "uber-03")
    rows[line - 1] = {**rows[line - 1], "expected": [label]}
    return write_rows(tmp_path / "g.jsonl", rows), line


def test_the_held_rows_check_clean_against_the_collection(uber, tmp_path):
    rows = held_rows()
    assert {r["id"] for r in rows} >= {"uber-01", "uber-03"} and len(uber.document("uber_2021.pdf").pages) == PAGES
    check = check_golden(write_rows(tmp_path / "g.jsonl", rows), uber)
    assert check.ok and check.ready == len(rows) and not check.findings, check.summary()


@pytest.mark.parametrize("label, says", [
    ("Uber_2021.pdf#page=10", "did you mean 'uber_2021.pdf#page=10'?"),       # the document in another case
    ("uber_2021.pdf#p=10", "did you mean 'uber_2021.pdf#page=10'?"),          # misspelt anchors
    ("uber_2021.pdf#page10", "did you mean 'uber_2021.pdf#page=10'?"),
    ("uber_2021.pdf#Page=10", "did you mean 'uber_2021.pdf#page=10'?"),
    ("uber_2021.pdf page=10", "did you mean 'uber_2021.pdf#page=10'?"),       # no `#`
    ("uber_2021.pdfpage=10", "did you mean 'uber_2021.pdf#page=10'?"),
    ("uber_2021.pdf#page=13", "'uber_2021.pdf' has 12 pages, not page 13"),  # past the last page
    ("uber-2021.pdf", "did you mean 'uber_2021.pdf'?"),                      # a close spelling
    ("lyft_2021.pdf#page=10", "it holds 1 document(s): 'uber_2021.pdf'"),    # a document it does not hold
    ("uber_2021.pdf::99999", "has no chunk 'uber_2021.pdf::99999'"),
])
def test_a_label_that_almost_matches_is_an_error_on_its_line(uber, tmp_path, label, says):
    path, line = mutated(tmp_path, label)
    check = check_golden(path, uber)
    assert not check.ok and check.golden is None
    assert [(f.line, f.field) for f in check.errors] == [(line, "expected")], check.summary()
    assert says in check.errors[0].message and f"line {line}, expected" in check.summary()
    with pytest.raises(BadInput, match=f"line {line}, expected"):  # a path given to any verb is refused with the same errors
        read_golden(path, uber)


@pytest.mark.parametrize("label", ["uber_2021.pdf#p=10", "uber_2021.pdf#page10", "uber_2021.pdf#Page=10",
                                   "uber_2021.pdf#pg 10", "uber_2021.pdf#10", "uber_2021.pdf#page=0"])
def test_a_misspelt_anchor_is_an_error_without_a_collection_too(tmp_path, label):
    path, line = mutated(tmp_path, label)
    check = check_golden(path)
    assert [(f.line, f.field) for f in check.errors] == [(line, "expected")], check.summary()
    meant = "pages count from 1" if label.endswith("=0") else "did you mean 'uber_2021.pdf#page=10'?"
    assert "is not a page label" in check.errors[0].message and meant in check.errors[0].message


def test_without_a_collection_a_bare_anchor_and_a_case_slip_are_noted(tmp_path):
    for label, says in [("uber_2021.pdf page=10", "write 'uber_2021.pdf#page=10'"),
                        ("Uber_2021.pdf#page=10", "differs only in case from 'uber_2021.pdf'")]:
        path, line = mutated(tmp_path, label)
        check = check_golden(path)  # either may be a real id elsewhere: a note, and an error given the collection
        assert check.ok and any(f.line == line and says in f.message for f in check.notes), check.summary()
        (tmp_path / "g.jsonl").unlink()


def test_retrieval_report_stops_listing_every_row_that_would_be_a_silent_miss(uber, tmp_path):
    rows = held_rows()
    qs = [Question(r["question"], r.get("reference"), r["expected"], r["id"], line=n) for n, r in enumerate(rows, 1)]
    bad = [Question(q.question, q.reference, [label], q.id, line=q.line)
           for q, label in zip(qs, ["Uber_2021.pdf#page=10", "uber_2021.pdf#page=99", "uber_2021.pdf#p=3"])]
    hits = lambda query: uber.search(query, 5)  # noqa: E731 - a plain callable, the collection given apart
    for target, options in [(uber, {}), (hits, {"collection": uber})]:
        with pytest.raises(BadInput) as err:
            retrieval_report(target, bad + qs[3:], k=3, by="page", **options)
        message = str(err.value)
        assert message.startswith("3 label(s) would be scored as silent misses")
        for q, says in zip(bad, ["did you mean 'uber_2021.pdf#page=10'?", "has 12 pages, not page 99",
                                 "did you mean 'uber_2021.pdf#page=3'?"]):
            assert f"line {q.line} ({q.id}): " in message and says in message
    with pytest.raises(BadInput, match=r"line 3 \(uber-03\): 'uber_2021.pdf#p=10' is not a page label"):
        retrieval_report(hits, [Question("q?", None, ["uber_2021.pdf#p=10"], "uber-03", line=3)], k=1)  # no collection
    path, line = mutated(tmp_path, "Uber_2021.pdf#page=10")
    with pytest.raises(BadInput, match=f"line {line}, expected: 'Uber_2021.pdf' is not in collection"):
        retrieval_report(uber, path, k=1)
    assert retrieval_report(uber, qs, k=1, by="page")["questions"] == len(qs)  # the right labels run


def test_bare_chunk_ids_get_page_and_document_credit_through_the_collection(uber):
    on_10 = [c["chunk_id"] for c in uber.chunks() if 10 in c["pages"]]
    other = [c["chunk_id"] for c in uber.chunks() if 10 not in c["pages"]][:2]
    ids = lambda query: other + on_10[:1]  # noqa: E731 - the right chunk third, as bare strings
    q = Question("How many employees did Uber have at the end of 2021?", None, ["uber_2021.pdf#page=10"], "uber-03")
    given = retrieval_report(ids, [q], k=(1, 3), by="page", collection=uber)
    assert given["recall"] == {1: 0.0, 3: 1.0} and given["mrr"] == pytest.approx(1 / 3)
    assert given["levels"]["page"]["recall"] == 1.0 and given["levels"]["doc"]["recall"] == 1.0
    assert not any("page level needs pages" in w for w in given["warnings"])
    alone = retrieval_report(ids, [q], k=(1, 3), by="page")
    assert alone["recall"] is None and alone["reason"].startswith("page level needs pages: return hits or give the "
                                                                  "collection")
    by_doc = retrieval_report(ids, [q], k=(1, 3), by="doc")  # documents are in the ids; pages are not
    assert by_doc["recall"] == {1: 1.0, 3: 1.0} and by_doc["levels"]["doc"]["recall"] == 1.0
    assert by_doc["levels"]["page"] is None and any(w.startswith("page level needs pages") for w in by_doc["warnings"])


def vecta_entries(uber):
    from vecta import BenchmarkEntry

    chunk = next(c["chunk_id"] for c in uber.chunks() if 10 in c["pages"])
    return [
        BenchmarkEntry(id="v1", question="How many employees did Uber have at the end of 2021?",
                       answer="About 29,300, \"globally\",\nas of December 31, 2021.", chunk_ids=[chunk],
                       page_nums=[10], source_paths=["/data/10k/uber_2021.pdf"]),
        BenchmarkEntry(id="v2", question="Which company is this annual report about?", answer="Uber Technologies",
                       source_paths=["uber_2021.pdf"]),
        BenchmarkEntry(id="v3", question="What does the chunk say?", answer="It says so.", chunk_ids=[chunk]),
    ], chunk


def test_a_vecta_benchmark_loads_as_golden_rows_as_vecta_writes_it(uber, tmp_path):
    from vecta import VectaClient

    entries, chunk = vecta_entries(uber)
    client = VectaClient(openai_api_key=None)
    client.benchmark_entries = entries
    csv_path = tmp_path / "benchmark.csv"
    client.save_benchmark(str(csv_path))  # Vecta's own CSV: lists joined with `|`, a quoted answer over two lines
    jsonl = tmp_path / "benchmark.jsonl"
    jsonl.write_text("".join(e.model_dump_json() + "\n" for e in entries), encoding="utf-8")
    for path in (csv_path, jsonl):
        check = check_golden(str(path), uber)
        assert check.ok and check.ready == 3 and not check.errors, check.summary()
        one, two, three = read_golden(str(path), uber)
        assert (one.id, one.reference, one.expected) == ("v1", entries[0].answer, ("uber_2021.pdf#page=10", chunk))
        assert one.line == 2 - (path == jsonl)
        assert two.expected == ("uber_2021.pdf",) and three.expected == (chunk,)
        assert [q.question for q in (one, two, three)] == [e.question for e in entries]
        assert load_questions(str(path)) == [one, two, three]
    assert [e.id for e in client.load_benchmark(str(csv_path))] == ["v1", "v2", "v3"]  # the file is Vecta's still
    report = retrieval_report(lambda query: [chunk], str(csv_path), k=1, by="page", collection=uber)
    assert report["recall"] == {1: 1.0} and report["questions"] == 3  # v2: a whole document, any page; v3: the chunk
    # one entry with pages and chunk ids is scored at all three levels, as Vecta scores it
    other = next(c["chunk_id"] for c in uber.chunks() if 10 not in c["pages"])
    run = run_evaluation(lambda query: [other, chunk], str(csv_path), k=2, collection=uber)
    row = run.frame.loc["v1"]
    assert (row["chunk_recall@2"], row["page_recall@2"], row["doc_recall@2"]) == (1.0, 1.0, 1.0)
    assert (row["chunk_precision@2"], row["page_precision@2"]) == (0.5, 0.5)
    by_chunk = retrieval_report(lambda query: [other, chunk], [one], k=(1, 2), by="chunk", collection=uber)
    assert by_chunk["recall"] == {1: 0.0, 2: 1.0} and by_chunk.frame.loc["v1", "expected"] == [chunk]
    by_page = retrieval_report(lambda query: [other, chunk], [one], k=(1, 2), by="page", collection=uber)
    assert by_page.frame.loc["v1", "expected"] == ["uber_2021.pdf#page=10"]  # its chunk id waits for chunk grain


def test_a_vecta_system_returning_chunk_ids_scores_pages_through_the_collection_or_leaves_them_undefined(uber):
    """Vecta's `query -> list[str]` of chunk ids: with the collection, each chunk's pages are read and
    page figures scored; without it, the page figures are undefined with the reason, never 0.0."""
    chunk = next(c["chunk_id"] for c in uber.chunks() if 10 in c["pages"])
    questions = [Question("How many employees?", None, ["uber_2021.pdf#page=10"], "v1")]
    bare = run_evaluation(lambda query: [chunk], questions, k=1)
    assert bare["levels"]["page"] is None and bare["levels"]["doc"]["recall"] == 1.0
    assert math.isnan(bare.frame.loc["v1", "page_f1@1"])
    assert any("name no page" in w and "collection=db" in w for w in bare["warnings"])
    scored = run_evaluation(lambda query: [chunk], questions, k=1, collection=uber)
    assert scored["levels"]["page"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert not any("name no page" in w for w in scored["warnings"])


def test_a_vecta_row_that_names_nothing_or_counts_pages_from_0_is_an_error_on_its_line(uber, tmp_path):
    from vecta import BenchmarkEntry

    rows = [BenchmarkEntry(id="a", question="q?", answer="a", page_nums=[0], source_paths=["uber_2021.pdf"]),
            BenchmarkEntry(id="b", question="r?", answer="b"),
            BenchmarkEntry(id="c", question="s?", answer="c", page_nums=[99], source_paths=["Uber_2021.pdf"])]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(e.model_dump_json() + "\n" for e in rows), encoding="utf-8")
    check = check_golden(str(path), uber)
    errors = {f.line: f.message for f in check.errors}
    assert "counts from 0" in errors[1] and "names nothing to find" in errors[2]
    assert "did you mean 'uber_2021.pdf#page=99'? (it has 12 pages)" in errors[3]
    with pytest.raises(BadInput, match="line 1, page_nums"):
        load_questions(str(path))


def test_given_the_collection_a_misspelt_anchor_suggests_what_it_holds(uber, tmp_path):
    path, line = mutated(tmp_path, "Uber_2021.pdf#p=10")
    (error,) = check_golden(path, uber).errors
    assert error.line == line and "is not a page label" in error.message
    assert error.message.endswith("did you mean 'uber_2021.pdf#page=10'?")
    assert check_golden(path).errors[0].message.endswith("did you mean 'Uber_2021.pdf#page=10'?")  # no collection
