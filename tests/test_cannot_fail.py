"""Figures that cannot fail are flagged, and the grain follows the labels when by= is not given."""
from __future__ import annotations

import pytest

from vectrixdb import Vectrix
from vectrixdb.cli.evaluate import report_text
from vectrixdb.evaluation import Question, retrieval_report

TEXT = "# Deferment\n\nPayment deferment lasts six months for customers in disaster areas, with no late fees."


@pytest.fixture
def one_doc(tmp_path, fake_embedder):
    db = Vectrix("one", path=tmp_path, model=fake_embedder)
    db.add_document(TEXT, doc_id="policy")
    return db


def questions(label: str, n: int = 2) -> list[Question]:
    return [Question(f"How long does deferment last? ({i})", None, [label], f"q{i}") for i in range(n)]


def test_page_labels_on_a_one_document_collection_scored_by_document_cannot_fail(one_doc):
    forced = retrieval_report(one_doc, questions("policy#page=1"), k=(1, 3), by="doc")
    assert forced["by_from"] == "asked" and len(forced["cannot_fail"]) == 2
    assert "every label names a page" in forced["cannot_fail"][0]
    assert "every document the collection holds (1)" in forced["cannot_fail"][1]
    assert forced["recall"][1] == 1.0  # what a newcomer would have shipped
    text = report_text(forced)
    assert text.count("CANNOT FAIL") == 2 and text.index("CANNOT FAIL") < text.index("recall")
    assert "warning: cannot fail" not in text  # said once, above the figures


def test_the_grain_follows_the_labels_unless_told(one_doc):
    by_labels = retrieval_report(one_doc, questions("policy#page=1"), k=(1, 3))
    assert (by_labels["by"], by_labels["by_from"]) == ("page", "labels: a row names a page")
    assert by_labels["cannot_fail"] == []
    assert "by page (from the labels)" in report_text(by_labels)
    docs = retrieval_report(lambda q: ["policy", "other"], questions("policy"), k=(1,))
    assert (docs["by"], docs["cannot_fail"]) == ("doc", [])  # no collection to compare with: nothing claimed
    chunks = retrieval_report(lambda q: ["policy::0"], questions("policy::0"), k=(1,))
    assert chunks["by"] == "chunk" and chunks["recall"][1] == 1.0


def test_every_question_expecting_every_document_is_flagged_even_when_labels_name_documents(tmp_path, fake_embedder):
    db = Vectrix("two", path=tmp_path, model=fake_embedder)
    db.add_documents([{"source": TEXT, "doc_id": "a"}, {"source": "Card fraud: report a stolen card.", "doc_id": "b"}],
                     progress=False)
    both = [Question("What is deferment?", None, ["a", "b"], "q1")]  # n = 1
    flagged = retrieval_report(db, both, k=(1, 2))
    assert flagged["by"] == "doc" and len(flagged["cannot_fail"]) == 1 and flagged["recall"][2] == 1.0
    one = [Question("What is deferment?", None, ["a"], "q1")]
    assert retrieval_report(db, one, k=(1, 2))["cannot_fail"] == []  # the other document can come first


def test_evaluate_carries_the_flag(one_doc):
    from vectrixdb.cli.evaluate import evaluate_text
    from vectrixdb.evaluation import evaluate

    table = evaluate(one_doc, questions("policy#page=1"), k=(1,), by="doc", modes=("dense",), progress=False)
    assert len(table["cannot_fail"]) == 2 and "CANNOT FAIL" in evaluate_text(table)


def test_run_evaluation_flags_a_document_level_that_cannot_fail(one_doc):
    from vectrixdb.evaluation import run_evaluation

    qs = questions("policy#page=1", n=3)
    held = run_evaluation(lambda q: ["policy::0"], qs, k=1, collection=one_doc)
    assert held["levels"]["doc"]["f1"] == 1.0
    assert "every document the collection holds (1)" in held["cannot_fail_levels"]["doc"]
    alone = run_evaluation(lambda q: ["policy::0"], qs, k=1)
    assert "one document (policy)" in alone["cannot_fail_levels"]["doc"]
    two = run_evaluation(lambda q: ["policy::0", "other::0"], qs, k=2)
    assert two["cannot_fail_levels"] == {} and two["levels"]["doc"]["precision"] == 0.5


def test_the_dashboard_and_certificate_refuse_to_grade_a_run_that_cannot_fail(one_doc, tmp_path):
    import io

    import httpx
    from pypdf import PdfReader

    from tests.servers import serve_app
    from vectrixdb.evaluation import list_runs, load_run, run_evaluation
    from vectrixdb.present import certify
    from vectrixdb.present.certificate import pdf_bytes
    from vectrixdb.server import create_app

    folder = tmp_path / "runs"
    run_id = run_evaluation(lambda q: ["policy::0"], questions("policy#page=1", n=3), k=1, collection=one_doc,
                            save_to=str(folder), name="one document")["run_id"]
    run = load_run(str(folder), run_id)
    grade = certify.grade(run, {})  # the page level still grades: 1.0 on the one page every question expects
    assert grade["letter"] == "A" and not any(k.startswith("doc_") for k in grade["graded"]) and grade["graded"]
    check = certify.compliance(run, {"doc_f1@1": {"min": 0.5}, "page_f1@1": {"min": 0.5}})
    assert [r["verdict"].split(" (")[0] for r in check["rows"]] == ["does not apply", "pass"]
    assert list_runs(str(folder)).iloc[0]["uncoloured"] == ["doc"]
    text = " ".join("".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf_bytes(run))).pages).split())
    assert "CANNOT FAIL: doc level: every question expects" in text and "(cannot fail)" in text
    with serve_app(create_app(str(folder))) as url:
        listing, page = httpx.get(f"{url}/").text, httpx.get(f"{url}/runs/{run_id}").text
    assert "cannot fail: doc level (open the run for why)" in listing and "every question expects every" in listing
    assert "not coloured: this figure cannot fail here" in listing and "cannot fail: doc level" in page
    forced = retrieval_report(one_doc, questions("policy#page=1"), k=(1,), by="doc")  # the whole report cannot fail
    assert certify.grade(forced, {})["why"].startswith("not graded: these figures cannot fail")
    assert certify.compliance(forced, certify.DEFAULT_SLA)["verdict"].startswith("SLA NOT JUDGED")


def test_the_certificate_of_an_evaluate_run_names_its_setup_and_carries_setups_and_misses(policies, tmp_path):
    from vectrixdb.evaluation import evaluate, load_run
    from vectrixdb.present.certificate import certificate

    qs = [Question("Can I defer my loan payments after a flood?", None, ["deferment"], "defer"),
          Question("My card was stolen; am I liable?", None, ["mortgage"], "wrong")]  # a label nothing finds first
    run_id = evaluate(policies, qs, k=(1,), modes=("dense", "keyword"), progress=False, save_to=str(tmp_path))["run_id"]
    run = load_run(str(tmp_path), run_id)
    doc = certificate(run)
    assert doc["grade"]["why"].startswith("the best setup, ")
    (setups,) = [t for t in doc["extra"] if t["title"].startswith("Setups")]
    assert len(setups["rows"]) == 1 + 2 and setups["rows"][0][:3] == ["mode", "vectors", "rerank"]
    assert "wrong" in {m["title"] for m in doc["appendix"]} and not doc["appendix_note"].startswith("No misses")
