"""A dashboard page is one declaration on the page registry (vectrixdb/server/registry.py): a toy page
declared in one file (tests/pages/toy_page.py, its template beside it) and named by one setting is
served over a real loopback uvicorn, linked from the navigation, escapes what it shows, and a page
that raises answers with an error page naming it while every other page keeps working."""
from __future__ import annotations

import sys

import httpx
import pytest

from tests.servers import serve_app
from vectrixdb.errors import BadInput
from vectrixdb.server import registry

TOY = "tests.pages.toy_page"


def _forget() -> None:
    for name in ("toy", "broken_toy", "empty_toy"):
        registry.unregister_page(name)
    registry._imported.discard(TOY)
    sys.modules.pop(TOY, None)


@pytest.fixture
def toy_pages(monkeypatch):
    """The toy module named in VECTRIXDB_PAGES (its one registration line), forgotten afterwards."""
    _forget()
    monkeypatch.setenv(registry.SETTING, TOY)
    yield
    _forget()


def test_a_page_declared_in_one_file_is_served_linked_and_escaped(toy_pages, tmp_path):
    from vectrixdb.server import create_app

    with serve_app(create_app(str(tmp_path))) as url:
        got = httpx.get(url + "/toy", params={"repeat": 2}, timeout=30)
        assert got.status_code == 200 and '<h1 id="toy">Toy page</h1>' in got.text
        assert "<title>Toy page · vectrixdb</title>" in got.text and "0 run(s) in this folder." in got.text
        assert got.text.count("<li class=\"said\">&lt;script&gt;alert(&#39;toy&#39;)&lt;/script&gt;</li>") == 2
        assert "<script>" not in got.text  # autoescape: the data is text, never markup
        assert '<a href="/toy" class="here">Toy</a>' in got.text  # its own link, lit on its page
        home = httpx.get(url + "/", timeout=30)
        assert home.status_code == 200
        nav = home.text.split("<nav>", 1)[1].split("</nav>", 1)[0]  # built-ins first, then the toy, in order
        assert [part.split('"', 1)[0] for part in nav.split('href="')[1:]] == ["/", "/evaluate", "/experiments",
                                                                             "/toy", "/toy/broken"]
        assert '<a href="/" class="here">Evaluations</a>' in nav and '<a href="/toy" >Toy</a>' in nav


def test_a_page_that_raises_gets_an_error_page_naming_it_and_the_others_keep_working(toy_pages, tmp_path):
    from vectrixdb.server import create_app

    with serve_app(create_app(str(tmp_path))) as url:
        broken = httpx.get(url + "/toy/broken", timeout=30)
        assert broken.status_code == 500 and "<h1>The Broken toy page failed</h1>" in broken.text
        assert ("Page &#39;broken_toy&#39; (/toy/broken) raised ValueError: the broken toy page fails on purpose. "
                "The other pages are unaffected") in broken.text
        assert '<a href="/toy/broken" class="here">Broken</a>' in broken.text  # the page's own frame, nav and all
        empty = httpx.get(url + "/toy/empty", timeout=30)  # a template that fails is the page's error too
        assert empty.status_code == 500 and "Page &#39;empty_toy&#39; (/toy/empty) raised UndefinedError: " \
            "&#39;runs&#39; is undefined" in empty.text
        for path in ("/", "/toy", "/evaluate", "/experiments"):
            assert httpx.get(url + path, timeout=30).status_code == 200, path
        assert httpx.get(url + "/runs/nope", timeout=30).status_code == 404  # a refusal is still a refusal


def test_the_registry_refuses_clashes_and_unimportable_modules(monkeypatch):
    registry.declared()
    with pytest.raises(BadInput, match="page 'again' \\(/\\) clashes with page 'runs' \\(/\\)"):
        registry.register_page(registry.Page("again", "/", "Again", lambda site: {}, "runs.html"))
    with pytest.raises(BadInput, match="a nav link cannot fill the path parameters"):
        registry.Page("x", "/runs/{run_id}/x", "X", lambda site, run_id: {}, "x.html", nav="X")
    monkeypatch.setenv(registry.SETTING, "vx_no_such_page_module")
    with pytest.raises(BadInput, match="VECTRIXDB_PAGES names 'vx_no_such_page_module', which cannot be imported"):
        registry.declared()


def test_every_built_in_page_is_on_the_registry(tmp_path):
    """The built-ins are declarations like any other: every route of the app is one of them."""
    from vectrixdb.server import create_app

    app = create_app(str(tmp_path))
    routes = {r.path for r in app.routes if getattr(r, "methods", None)}
    assert routes == {p.path for p in registry.declared().values()}
    assert {"/", "/runs/{run_id}", "/runs/{run_id}/question", "/runs/{run_id}/certificate.pdf",
            "/runs/{run_id}/offline.html", "/evaluate", "/experiments"} <= routes


def test_clashes_are_refused_by_route_reserved_path_and_template_name(tmp_path):
    """Reviewer's cases: `/runs/{rid}` beside the built-in `/runs/{run_id}`, a page under /static, and a page's
    own `run.html` (server/templates' would be rendered instead) were accepted in silence."""
    from vectrixdb.server.registry import Page, register_page

    registry.declared()
    with pytest.raises(BadInput, match=r"page 'mine' \(/runs/\{rid\}\) clashes with page 'run' \(/runs/\{run_id\}\)"):
        register_page(Page("mine", "/runs/{rid}", "Mine", lambda site, rid: {}, "mine.html"))
    with pytest.raises(BadInput, match="under /static, the app's static files"):
        register_page(Page("mine", "/static/mine", "Mine", lambda site: {}, "mine.html"))
    (tmp_path / "run.html").write_text("{% extends 'base.html' %}")
    with pytest.raises(BadInput, match="its template 'run.html' has the name of one in server/templates.*rename it"):
        register_page(Page("own", "/own", "Own", lambda site: {}, "run.html", folder=tmp_path))
    assert not {"mine", "own"} & set(registry.PAGES)


def test_a_user_page_with_a_built_in_name_is_refused_not_skipped():
    """Reviewer's case: a page named 'run' registered before the built-ins removed the built-in run page."""
    import importlib

    from vectrixdb.server import pages_builtin
    from vectrixdb.server.registry import Page, register_page

    registry.declared()
    registry.unregister_page("run")
    register_page(Page("run", "/my-run", "My run", lambda site: {}, "mine.html"))
    try:
        with pytest.raises(BadInput, match=r"page 'run' \(/runs/\{run_id\}\) clashes with page 'run' \(/my-run\)"):
            importlib.reload(pages_builtin)
    finally:
        registry.unregister_page("run")
        importlib.reload(pages_builtin)  # the built-in run page back; the others, already declared here, kept
    assert registry.PAGES["run"].path == "/runs/{run_id}"


def test_a_module_that_raises_while_imported_is_refused_whole_and_named(tmp_path, monkeypatch):
    """Reviewer's cases: a page (or kind) module with a syntax error, or one failing half-way, was left marked
    imported (skipped on the next try) with the pages it registered before failing served."""
    from vectrixdb.evaluation.runs import kinds

    (tmp_path / "vx_half_pages.py").write_text(
        "from vectrixdb.server.registry import Page, register_page\n"
        "register_page(Page('half', '/half', 'Half', lambda site: {}, 'x.html'))\n"
        "raise RuntimeError('fails half-way')\n")
    (tmp_path / "vx_bad_kinds.py").write_text("def oops(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(registry.SETTING, "vx_half_pages")
    monkeypatch.setenv(kinds.SETTING, "vx_bad_kinds")
    for _ in range(2):  # refused again on a retry, never skipped
        with pytest.raises(BadInput, match=r"VECTRIXDB_PAGES names 'vx_half_pages', which cannot be imported "
                                           r"\(RuntimeError: fails half-way\)"):
            registry.declared()
        assert "half" not in registry.PAGES and "vx_half_pages" not in registry._imported
        with pytest.raises(BadInput, match=r"VECTRIXDB_KINDS names 'vx_bad_kinds', which cannot be imported "
                                           r"\(SyntaxError: "):
            kinds.declared()
        assert "vx_bad_kinds" not in kinds._imported


def test_a_view_that_breaks_the_view_rules_is_refused_by_name(tmp_path):
    """Reviewer's cases (attack_pages /key/*, /nonetpl, /pm, /undertypo, /needsq): a context key the app sets
    itself, a dict with no template, a path parameter the view lacks, `under=` naming nothing, a bad query."""
    from vectrixdb.server import create_app
    from vectrixdb.server.registry import Page, register_page

    registry.declared()
    added = [register_page(Page("vx_key", "/vx/key", "Key", lambda site: {"status": 1}, "toy_page.html",
                                folder=tmp_path)),
             register_page(Page("vx_notpl", "/vx/notpl", "No template", lambda site: {"a": 1})),
             register_page(Page("vx_q", "/vx/q", "Needs q", lambda site, q: {}, "toy_page.html", folder=tmp_path))]
    try:
        with serve_app(create_app(str(tmp_path))) as url:
            key = httpx.get(url + "/vx/key", timeout=30)
            assert key.status_code == 400 and "page &#39;vx_key&#39;: its view&#39;s context key(s) [&#39;status&#39;]" \
                " are the app&#39;s own" in key.text
            notpl = httpx.get(url + "/vx/notpl", timeout=30)
            assert notpl.status_code == 500 and "returned dict with no template: a view returns a dict for its " \
                "template, or a Response" in notpl.text
            needs = httpx.get(url + "/vx/q", timeout=30)
            assert needs.status_code == 422 and "text/html" in needs.headers["content-type"]
            assert "Page &#39;vx_q&#39; (/vx/q) cannot take these parameters: query.q: Field required" in needs.text
        for page, match in ((Page("vx_pm", "/vx/pm/{n}", "Pm", lambda site: {}, "toy_page.html"),
                             r"its path '/vx/pm/\{n\}' has parameter\(s\) \['n'\] its view does not take"),
                            (Page("vx_under", "/vx/under", "Under", lambda site: {}, "toy_page.html", under="rnus"),
                             r"under='rnus' names no registered page")):
            register_page(page)
            try:
                with pytest.raises(BadInput, match=rf"page '{page.name}': {match}"):
                    create_app(str(tmp_path))
            finally:
                registry.unregister_page(page.name)
    finally:
        for page in added:
            registry.unregister_page(page.name)


def test_a_page_with_its_template_inline_is_one_file(tmp_path):
    """html= carries the template's source, so a page needs no template file; its template's name
    (page:<name>) can never shadow another's, and html= with template= or folder= is refused."""
    from vectrixdb.server import create_app

    registry.declared()
    page = registry.Page("inline_toy", "/inline", "Inline toy", lambda site: {"said": "<b>bold</b>"}, nav="Inline",
                         html='{% extends "base.html" %}{% block main %}<p id="said">{{ said }}</p>{% endblock %}')
    assert page.template == "page:inline_toy"
    with pytest.raises(BadInput, match="not both"):
        registry.Page("both", "/both", "Both", lambda site: {}, "runs.html", html="<p></p>")
    registry.register_page(page)
    try:
        with serve_app(create_app(str(tmp_path))) as url:
            got = httpx.get(url + "/inline", timeout=30)
            assert got.status_code == 200 and '<p id="said">&lt;b&gt;bold&lt;/b&gt;</p>' in got.text
            assert '<a href="/inline" class="here">Inline</a>' in got.text
            assert httpx.get(url + "/", timeout=30).status_code == 200
    finally:
        registry.unregister_page("inline_toy")
