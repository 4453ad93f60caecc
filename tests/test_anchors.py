"""ragas and DeepEval rows read as golden rows and written back (anchors.py, anchors_write.py).

The peers' own objects are built and read by ragas 0.4.3 and DeepEval 4.3.1 themselves in
tests/test_anchors_peers.py (their own virtualenv); here every mapping rule is checked exactly on
a real collection: the first 4 pages of the Uber 10-K, embedded by the deterministic stand-in."""
from __future__ import annotations

import json

import pytest

from tests.conftest import PDFS, ROOT, StandInEmbedder, require
from vectrixdb import Vectrix
from vectrixdb.errors import AlreadyExists, BadInput
from vectrixdb.evaluation import Question, check_golden, load_questions, save_deepeval, save_ragas
from vectrixdb.evaluation.golden.anchors_write import deepeval_rows

SAMPLES = ROOT / "data" / "anchors"


@pytest.fixture(scope="module")
def uber(tmp_path_factory):
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path_factory.mktemp("uber4")
    writer = PdfWriter()
    for page in PdfReader(str(require(PDFS / "uber_2021.pdf"))).pages[:4]:
        writer.add_page(page)
    pdf = folder / "uber_2021.pdf"
    with open(pdf, "wb") as fh:
        writer.write(fh)
    db = Vectrix("uber4", path=folder / "db", model=StandInEmbedder())
    db.add_document(str(pdf))
    db.add_documents([{"text": "# Note\n\nA one-page note about rideshare drivers and their insurance cover.",
                       "doc_id": "note"}], progress=False)
    return db


def quote(db, page: int, start: int = 200, length: int = 160, pipes: bool = True) -> str:
    """A passage of page `page` as the collection keeps it, with its spaces changed (folding is
    checked); pipes=False: the first such passage from `start` with no `|` (a Markdown table's)."""
    text = db.document("uber_2021.pdf").page_text(page)
    while not pipes and "|" in text[start:start + length]:
        start += 20
    return "  ".join(text[start:start + length].split(" "))


def jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_ragas_ids_are_labels_as_given_and_the_rest_of_the_sample_is_read_as_documented(tmp_path):
    path = jsonl(tmp_path / "r.jsonl", [
        {"user_input": "How many people did Uber employ?", "reference": "About 29,300.",
         "reference_context_ids": ["uber_2021.pdf#page=10"], "reference_contexts": ["about 29,300 employees"],
         "response": "ignored", "retrieved_contexts": ["ignored"], "synthesizer_name": "single_hop_specific"}])
    (q,) = load_questions(path)
    assert (q.question, q.reference, q.expected, q.evidence) == ("How many people did Uber employ?", "About 29,300.",
                                                                ("uber_2021.pdf#page=10",), ("about 29,300 employees",))
    assert q.hint == "ragas: synthesizer_name single_hop_specific" and not q.draft and q.id is None


def test_without_the_collection_contexts_are_evidence_and_the_row_is_unlabelled(tmp_path):
    path = jsonl(tmp_path / "r.jsonl", [{"user_input": "What is a gig?", "reference_contexts": ["gig work is"]}])
    (q,) = load_questions(path)
    assert q.expected == () and q.evidence == ("gig work is",) and not q.labelled
    (error,) = [f for f in check_golden(path).errors if f.line == 1]
    assert error.field == "reference_context_ids" and "give the collection" in error.message


def test_contexts_found_word_for_word_name_their_pages_and_are_not_drafts(uber, tmp_path):
    on_3, over_2_3 = quote(uber, 3), None
    page2 = uber.document("uber_2021.pdf").page_text(2)
    page3 = uber.document("uber_2021.pdf").page_text(3)
    over_2_3 = " ".join(page2.split()[-8:] + page3.split()[:8])  # a passage that runs over the page break
    path = jsonl(tmp_path / "r.jsonl", [
        {"user_input": "What does page 3 say?", "reference_contexts": [on_3]},
        {"user_input": "What runs over the page break?", "reference_contexts": [over_2_3]},
        {"user_input": "Who is insured?", "reference_contexts": ["rideshare drivers and their INSURANCE cover"]}])
    one, two, three = load_questions(path, uber)
    assert one.expected == ("uber_2021.pdf#page=3",) and one.evidence == (on_3,) and not one.draft
    assert two.expected == ("uber_2021.pdf#page=2", "uber_2021.pdf#page=3") and not two.draft
    assert three.expected == ("note",) and not three.draft  # a one-page document is labelled by itself
    assert load_questions(path, uber, by="doc")[0].expected == ("uber_2021.pdf",)
    check = check_golden(path, uber)
    assert check.ok and check.ready == 3, check.summary()


def test_a_context_the_collection_does_not_hold_is_searched_and_its_row_is_a_draft(uber, tmp_path):
    text = uber.document("uber_2021.pdf").page_text(4)
    reworded = "ragas rewrote this: " + " ".join(text.split()[40:90])  # not word for word: found by search
    path = jsonl(tmp_path / "r.jsonl", [{"user_input": "What is on page 4?", "reference_contexts": [reworded]}])
    (q,) = load_questions(path, uber)
    hit = uber.search(reworded, 1, mode="hybrid")[0]
    assert q.draft and q.expected == tuple(f"{hit.doc_id}#page={p}" for p in hit.pages) and q.evidence == ()
    assert q.hint == f"context not found word for word in the collection (labelled by search): {reworded}"
    check = check_golden(path, uber)
    assert check.ok and any(f.field == "draft" for f in check.findings), check.summary()


def test_deepeval_goldens_as_one_json_array_with_source_file_and_name(uber, tmp_path):
    path = tmp_path / "goldens.json"
    path.write_text(json.dumps([
        {"input": "Which company files this report?", "expected_output": "Uber Technologies, Inc.",
         "context": None, "source_file": "/data/10k/uber_2021.pdf", "name": "g-1", "actual_output": "ignored"},
        {"input": "What does page 3 say?", "context": [quote(uber, 3)], "source_file": "uber_2021.pdf"},
        {"input": "What did ragas reword?", "context": ["nothing of the sort is in this report"],
         "source_file": "uber_2021.pdf"}], indent=4), encoding="utf-8")
    one, two, three = load_questions(str(path), uber)
    assert (one.id, one.reference, one.expected, one.line) == ("g-1", "Uber Technologies, Inc.", ("uber_2021.pdf",), 2)
    assert two.expected == ("uber_2021.pdf#page=3",) and not two.draft and two.line == 10
    assert three.expected == ("uber_2021.pdf",) and not three.draft and "labelled by source_file" in three.hint
    assert [q.expected for q in load_questions(str(path))] == [("uber_2021.pdf",)] * 3  # no collection: source_file


def test_a_bad_row_is_an_error_on_its_line(tmp_path):
    path = jsonl(tmp_path / "r.jsonl", [{"user_input": "fine?", "reference_context_ids": ["a"]},
                                        {"user_input": [{"content": "hi", "type": "robot"}]}])
    with pytest.raises(BadInput, match=r"line 2, user_input: message 1 must be an object with content and type"):
        load_questions(path)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"input": "one?", "source_file": "a"},\n  {"input": "two?" "source_file": "b"}\n]\n')
    with pytest.raises(BadInput, match=r"line 3: not a JSON array of objects"):
        load_questions(str(broken))
    assert [f.line for f in check_golden(str(broken)).errors][:1] == [3]


ROWS = [Question("How many people did Uber employ?", "About 29,300.", {"uber_2021.pdf#page=3": 2, "note": 0},
                 "u-1", ("Uber",), "check the year", True),
        Question("What is the note about?", None, ("note",))]


@pytest.mark.parametrize("save", [save_ragas, save_deepeval])
def test_our_rows_written_as_ragas_and_deepeval_read_back_exactly(save, uber, tmp_path):
    path = save(ROWS, str(tmp_path / "out"))
    assert [q.to_json() for q in load_questions(path)] == [q.to_json() for q in ROWS]
    assert [q.to_json() for q in load_questions(path, uber)] == [q.to_json() for q in ROWS]
    with pytest.raises(AlreadyExists):
        save(ROWS, path)


def test_deepeval_contexts_come_from_the_collection_when_a_row_has_no_evidence(uber):
    first, second = deepeval_rows(ROWS, uber)
    assert first["context"] == ["Uber"] and "source_file" not in first  # it expects two documents
    assert second["context"] == [uber.document("note").markdown] and second["source_file"] == "note"
    assert second["additional_metadata"] == {"vectrixdb": {"expected": ["note"]}} and second["name"] == ROWS[1].key()


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    db = Vectrix("bank", path=tmp_path_factory.mktemp("bank"), model=StandInEmbedder())
    db.add_documents(sorted((ROOT / "data" / "sample").iterdir()), progress=False)
    return db


def command(db):
    import typer

    from vectrixdb.cli.golden import register

    app, golden_app = typer.Typer(), typer.Typer()
    app.add_typer(golden_app, name="golden")
    register(golden_app, lambda name, path, as_: db)
    return app


def invoke(app, *args):
    from typer.testing import CliRunner

    return CliRunner().invoke(app, ["golden", *args])


def test_the_shipped_samples_import_with_the_collection_as_documented(bank, tmp_path):
    """data/anchors/: written by ragas, DeepEval and Vecta themselves (make_samples.py), about data/sample."""
    app = command(bank)
    expect = {"ragas_testset.jsonl": [("deferment.md",), ("card-fraud.md",), ("emergency-fund.md",)],
              "deepeval_goldens.json": [("mortgage-rates.md",), ("savings.txt",), ("emergency-fund.md",)],
              "vecta_benchmark.jsonl": [("deferment.md",), ("savings.txt#page=1",)],
              "vecta_benchmark.csv": [("deferment.md",), ("savings.txt#page=1",)]}
    for name, labels in expect.items():
        out = tmp_path / (name + ".golden.jsonl")
        result = invoke(app, "import", str(require(SAMPLES / name)), "--out", str(out), "--collection", "bank")
        assert result.exit_code == 0, result.output
        rows = load_questions(str(out))
        assert [q.expected for q in rows] == labels, name
        drafts = [q.draft for q in rows]
        assert drafts == ([False, False, True] if not name.startswith("vecta") else [False, False]), name
        assert ("1 is a draft: labels found by a search" in result.output) == any(drafts)
        assert check_golden(str(out), bank).ok
    assert invoke(app, "import", str(SAMPLES / "ragas_testset.jsonl"), "--out", str(out)).exit_code != 0  # exists


def test_import_without_the_collection_keeps_what_names_a_document_and_says_what_was_left_out(tmp_path):
    app = command(None)
    out = tmp_path / "g.jsonl"
    result = invoke(app, "import", str(SAMPLES / "ragas_testset.jsonl"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "wrote 1 row(s) of 3 from a ragas test set" in result.output
    assert "2 row(s) name no document and were left out: give --collection" in result.output
    assert [q.expected for q in load_questions(str(out))] == [("card-fraud.md",)]


@pytest.mark.parametrize("to", ["ragas", "deepeval"])
def test_export_writes_what_import_reads_back_exactly(to, bank, tmp_path):
    app = command(bank)
    golden = ROOT / "data" / "golden" / "sample.jsonl"
    out = tmp_path / f"out.{to}"
    result = invoke(app, "export", str(golden), "--to", to, "--out", str(out), "--collection", "bank")
    assert result.exit_code == 0 and f"wrote {len(load_questions(str(golden)))} row(s)" in result.output, result.output
    back = tmp_path / "back.jsonl"
    assert invoke(app, "import", str(out), "--out", str(back)).exit_code == 0
    assert [q.to_json() for q in load_questions(str(back))] == [q.to_json() for q in load_questions(str(golden))]
    assert invoke(app, "export", str(golden), "--to", "csv", "--out", str(tmp_path / "x")).exit_code != 0
