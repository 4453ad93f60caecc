"""The dashboard's colours and Markdown in a real browser (Playwright driving Debian's chromium)
against the real server on loopback (issue 30 item 4): colour keys on every coloured table,
Markdown passages and answers rendered, the two answers apart, runs named in Experiments."""
import pytest

from tests.dashboard_runs import chromium_path
from tests.servers import serve_app
from tests.test_plotting import QS, judge, passages
from vectrixdb.evaluation import run_evaluation

ANSWER = "### Short answer\n\n| item | value |\n|---|---|\n| fee | $25 |\n\n<b>not bold</b>"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Three saved runs and the dashboard serving them; yields (base URL, run ids)."""
    from vectrixdb.server import create_app

    folder = str(tmp_path_factory.mktemp("pages_runs"))
    ids = {"rag": run_evaluation(lambda q: (passages(q), ANSWER), QS, judge=judge, k=2, save_to=folder,
                                 name="rag with tables")["run_id"],
           "one": run_evaluation(lambda q: passages(q)[:1], QS, k=2, save_to=folder, name="first hit only")["run_id"],
           "two": run_evaluation(passages, QS, k=2, save_to=folder, name="both hits")["run_id"]}
    with serve_app(create_app(folder)) as url:
        yield url, ids


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield browser.new_page()
        browser.close()


def test_passages_and_answers_render_markdown_and_the_two_answers_stand_apart(site, page):
    base, ids = site
    page.goto(f"{base}/runs/{ids['rag']}/question?id=q3")
    table_passage = page.locator(".passage").nth(1)
    assert table_passage.locator(".md h3").inner_text() == "Monthly fees by account"
    assert table_passage.locator(".md table td").all_inner_texts() == ["Everyday", "$5", "Premier", "$25"]
    assert "###" not in table_passage.inner_text() and "|---" not in table_passage.inner_text()
    assert page.evaluate("document.querySelectorAll('.passage script').length") == 0
    assert "<script>alert('x')</script>" in table_passage.inner_text()  # raw HTML shows as text
    generated, expected = page.locator(".answers .generated"), page.locator(".answers .expected")
    assert generated.locator("h3").inner_text() == "Short answer" and generated.locator("table").count() == 1
    assert "<b>not bold</b>" in generated.inner_text() and generated.locator("b").count() == 0
    assert expected.inner_text().endswith("$25 a month.") and "Short answer" not in expected.inner_text()
    assert generated.bounding_box()["x"] < expected.bounding_box()["x"]  # side by side, two boxes
    assert page.locator("#item-key .item.matched").count() == 1 and page.locator("#item-key .item.missed").count() == 1


def test_every_coloured_table_has_a_key_and_its_numbers_a_legible_colour(site, page):
    from vectrixdb.plotting.heatmap import heat_rgb, text_on

    base, ids = site
    page.goto(f"{base}/runs/{ids['rag']}")
    key = page.locator(".heat-key")
    assert key.count() == 1 and key.locator(".swatch").all_inner_texts() == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    cell = page.locator("#main-table td.num[style]").first
    value = float(cell.inner_text())
    colour = "rgb(0, 0, 0)" if text_on(heat_rgb(value)) == "#000000" else "rgb(255, 255, 255)"
    assert cell.evaluate("e => getComputedStyle(e).color") == colour
    assert page.locator("figure img[alt='Per-question heatmap']").count() == 1
    page.goto(base + "/")
    assert page.locator(".heat-key").count() == 1


def test_experiments_name_the_runs(site, page):
    base, ids = site
    page.goto(f"{base}/experiments?a={ids['one']}&b={ids['two']}")
    heading = page.locator("#comparison h2").first.inner_text()
    assert heading == "B both hits against A first hit only"
    assert page.locator("#changed-key").count() == 1
    assert page.locator("#comparison figure img").count() == 1
