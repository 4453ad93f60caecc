"""The certification PDF and the offline HTML copy: `vectrixdb export`, the rules they state, never
written over a file; the HTML opens in chromium from disk with every network request refused."""
import json

import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from tests.dashboard_runs import SCRIPT_QUESTION, chromium_path, shared_folder
from tests.test_server import assert_figures_in_pdf
from vectrixdb.present import certify
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import load_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return shared_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def cli():
    """The main command's error handling with `serve` and `export` registered, as cli/commands.py will."""
    import typer

    from vectrixdb.cli import serve as cli_serve
    from vectrixdb.cli.commands import _Commands

    app = typer.Typer(cls=_Commands)
    cli_serve.register(app)
    return app


def text_of(path) -> str:
    return " ".join(" ".join(p.extract_text() for p in PdfReader(path).pages).split())


def test_export_writes_a_pdf_with_grade_sla_manifest_misses_and_never_over_a_file(runs, cli, tmp_path):
    folder, ids = runs
    sla = tmp_path / "sla.yaml"
    sla.write_text("doc_f1: 0.6\npage_f1: {min: 0.5}\nchunk_f1: 0.5\nduration_s: {max: 600}\n")
    out = tmp_path / "better.pdf"
    done = CliRunner().invoke(cli, ["export", ids["better"], "--folder", folder, "--pdf", str(out), "--sla", str(sla)])
    assert done.exit_code == 0, done.output
    text = text_of(out)
    assert ("Overall grade A: mean of 3 graded figure(s) (doc_capped_recall@5 1.000, page_capped_recall@5 1.000, "
            "chunk_capped_recall@5 1.000) = 1.000") in text
    assert "SLA verdict: MEETS SLA (4 of 4 applicable thresholds met)" in text and f"Thresholds: {sla}" in text
    assert "doc_f1, read as doc_f1@5 ≥ 0.6 0.700 pass" in text  # an old name applies, saying what it reads
    assert "Set precision and F1@k are shown, not graded" in text and "doc_f1@5 0.700" in text
    assert "≤ 600" in text and "≥ 0.6" in text
    assert f"run id {ids['better']}" in text and "vectrixdb version 0.1.0" in text and "questions SHA-256" in text
    assert "Appendix: misses No misses recorded for this run." in text
    assert_figures_in_pdf(PdfReader(out), load_run(folder, ids["better"]))
    before = out.read_bytes()
    again = CliRunner().invoke(cli, ["export", ids["better"], "--folder", folder, "--pdf", str(out)])
    assert again.exit_code == 4 and "never written over" in again.output and out.read_bytes() == before  # AlreadyExists


def test_defaults_are_printed_when_no_sla_is_given_and_a_failed_run_is_not_graded(runs, tmp_path):
    from vectrixdb.export.files import export_run

    folder, ids = runs
    (path,) = export_run(ids["failed"], folder, pdf=str(tmp_path / "failed.pdf"))
    text = text_of(path)
    assert "defaults (no SLA file given)" in text and "Overall grade –: not graded: the run is failed" in text
    for name, rule in certify.DEFAULT_SLA.items():
        assert f"{name} ≥ {rule['min']:g}" in text or f"{name}, read as {name}@10 ≥ {rule['min']:g}" in text
    assert "SLA verdict: MEETS SLA (2 of 2 applicable thresholds met; 6 do not apply to a Retrieval evaluation)" in text
    (chunking,) = export_run(ids["chunking"], folder, pdf=str(tmp_path / "chunking.pdf"))
    text = text_of(chunking)
    assert "Techniques (decided by found" in text and "recursive" in text and "tie" in text
    assert_figures_in_pdf(PdfReader(chunking), load_run(folder, ids["chunking"]))
    (retrieval,) = export_run(ids["retrieval_report"], folder, pdf=str(tmp_path / "retrieval.pdf"))
    assert "came back instead: savings.txt page 1: Savings accounts" in text_of(retrieval)
    (baseline,) = export_run(ids["retrieval"], folder, pdf=str(tmp_path / "baseline.pdf"))
    text = text_of(baseline)
    assert "2 question(s) with something missed" in text
    assert "pages: missed card-fraud.md#page=2; came back instead mortgage-rates.md#page=3" in text


def test_the_grade_rule_and_sla_files(runs, tmp_path):
    folder, ids = runs
    report = load_run(folder, ids["better"])
    assert certify.grade(report, {})["letter"] == "A"  # capped recall 1.0 at each level; doc_f1@5 0.7 is not graded
    capped = certify.grade(report, {"doc_f1": {"min": 0.9}})
    assert capped["letter"] == "C" and "capped at C" in capped["why"]
    check = certify.compliance(report, {"doc_f1": {"min": 0.7}, "accuracy": {"min": 0.9}})
    assert [r["verdict"] for r in check["rows"]] == ["pass", "does not apply"] and check["met"]
    assert check["verdict"] == "MEETS SLA (1 of 1 applicable thresholds met; 1 does not apply to a Retrieval evaluation)"
    (tmp_path / "sla.json").write_text(json.dumps({"doc_f1": {"least": 1}}))
    with pytest.raises(BadInput, match="doc_f1"):
        certify.load_sla(str(tmp_path / "sla.json"))
    with pytest.raises(BadInput, match="no SLA file"):
        certify.load_sla(str(tmp_path / "absent.yaml"))


def test_the_offline_html_opens_from_disk_with_no_server(runs, cli, tmp_path):
    from playwright.sync_api import sync_playwright

    folder, ids = runs
    out = tmp_path / "rag.html"
    done = CliRunner().invoke(cli, ["export", ids["rag"], "--folder", folder, "--html", str(out)])
    assert done.exit_code == 0, done.output
    html = out.read_text()
    assert 'src="/' not in html and 'href="/' not in html and "http://" not in html and "https://" not in html
    assert html.count('src="data:image/png;base64,') >= 2
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        page = browser.new_page()
        asked = []

        def refuse(route):
            asked.append(route.request.url)
            route.abort()

        page.route(lambda url: not url.startswith(("file:", "data:")), refuse)
        page.goto(out.as_uri())
        assert asked == []
        assert page.locator("#grade").inner_text() == "D" and "FAILS SLA" in page.locator("#sla-verdict").inner_text()
        images = page.locator("figure img")
        assert images.count() >= 2 and all(images.nth(i).evaluate("i => i.naturalWidth > 200")
                                          for i in range(images.count()))
        page.click("#main-table a:text-is('s2')")
        assert page.url.endswith("#q-s2")
        assert "card-fraud.md#page=2" in page.locator("#q-s2 .missed-list").all_inner_texts()
        assert page.locator("#q-s5 blockquote.qtext").inner_text() == SCRIPT_QUESTION
        assert page.evaluate("document.querySelectorAll('script').length") == 0
        browser.close()


def test_the_certificate_says_when_too_few_questions_back_the_grade_and_shows_the_unjudged_share(runs, tmp_path):
    """Five questions never support a letter (certify.SUPPORT_RULE); the unjudged share of a RAG
    run is printed as an upper bound (its grade-0 labels were not recorded)."""
    from vectrixdb.export.files import export_run
    from vectrixdb.present.decisions import decisions

    folder, ids = runs
    for name in ("rag", "retrieval_report"):
        report = load_run(folder, ids[name])
        grade = certify.grade(report, certify.DEFAULT_SLA)
        (path,) = export_run(ids[name], folder, pdf=str(tmp_path / f"{name}.pdf"))
        text = text_of(path)
        assert not grade["support"]["supported"] and grade["support"]["n"] == 5
        assert f"TOO FEW QUESTIONS to support grade {grade['letter']}: with 5 questions" in text
        assert "95% Wilson interval" in text  # the rule is printed with it
        for row in decisions(report)["unjudged"]["rows"]:
            bound = "at most " if name == "rag" and row["share"] else ""
            assert f"unjudged, {row['what']} {bound}{row['share']:.0%}" in text, row
