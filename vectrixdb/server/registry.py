"""Dashboard pages as declarations: one `Page` per page, registered once, and `create_app` builds
every route and the navigation from the registry (server/app.py names no page).

A page declares

    name        its key (unique): the nav entry it lights, and what an error about it names
    path        its URL, FastAPI style (`/runs/{run_id}`: the view takes `run_id`)
    title       the page in words ("Experiments"), for its error page and its <title> default
    view        `view(site, **params)` -> the template's context (a dict) or a finished Response;
                a callable or "module:function". `site` (Site) holds the app's runs, cache and SLA;
                every other parameter is a path or query parameter, typed and defaulted as FastAPI
                reads them (`tab: str = ""`)
    template    the Jinja template the context is rendered with (None: the view returns a Response)
    nav         the link's label in the navigation (None: no link; a path with `{...}` has none)
    under       the nav entry lit on this page when it is not its own (a run's page lights "runs")
    folder      a folder searched for its template after server/templates and present/templates (a page outside the
                package keeps its template beside its module: `folder=Path(__file__).parent`)
    html        the template's source itself, instead of template= and folder=: a page that is one
                file (its template named `page:<name>`, so it can never shadow another's)

Templates render with autoescape on (server/pages.py's one environment); a page's template
`{% extends "base.html" %}` and fills `{% block main %}` (and `{% block title %}`, else `page_title`
is the title). The app sets folder, offline, css_inline, here, links, page_title, name, status and
request itself: a view's context naming one is refused (server/app.APP_KEYS). A view returns a dict
for its template, or a Response; a path parameter it does not take, and an `under` naming no page,
are refused when create_app builds the routes. The links are in registration order.

A view that raises a VectrixError gets the app's refusal page (400, or 404 for NotFound), an
unreadable run its 422; anything else it (or its template) raises becomes an error page naming the
page and the error (500), logged with its traceback; every other page keeps working.

Where the registration line goes, as for report kinds (evaluation/runs/kinds.py): pages are the
"pages" kind of vectrixdb/registry.py (PAGES is its table); a page registers
(`register_page(Page(...))`) when its module is imported, and `declared()`, which create_app runs,
has the registry load once each: server/pages_builtin.py (the built-in pages, declared the same
way: a new page inside vectrixdb goes there), the entry points in the group `vectrixdb.pages`, and
the modules the VECTRIXDB_PAGES setting names (comma-separated, outside the package:
`VECTRIXDB_PAGES=mypkg.latency_page vectrixdb serve runs/`).
A module named there that cannot be imported, or raises anything while it is imported (a syntax
error, a clash, a SystemExit from an argparse run at import), is refused, naming it, where it was named and the error; the pages it registered
before failing are taken out again, so none of it is served, and a retry imports it afresh.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.present import render

View = Union[Callable[..., Any], str]
BUILTIN = "vectrixdb.server.pages_builtin"
SETTING = "VECTRIXDB_PAGES"


@dataclass(frozen=True)
class Page:
    """One dashboard page (the module docstring says what each field is for)."""
    name: str
    path: str
    title: str
    view: View
    template: str | None = None
    nav: str | None = None
    under: str | None = None
    folder: str | Path | None = None
    html: str | None = None

    def __post_init__(self):
        if not self.name or not self.path.startswith("/"):
            raise BadInput(f"page {self.name!r}: give a name and a path starting with '/', not {self.path!r}")
        if self.html is not None:
            if self.template is not None or self.folder is not None:
                raise BadInput(f"page {self.name!r}: give its template as html= (the source) or as template= "
                               "(a file's name, with folder=), not both")
            object.__setattr__(self, "template", INLINE + self.name)
        if self.nav and "{" in self.path:
            raise BadInput(f"page {self.name!r}: a nav link cannot fill the path parameters of {self.path!r}")

    def view_function(self) -> Callable[..., Any]:
        """The view, its "module:function" imported now."""
        if isinstance(self.view, str):
            module, _, function = self.view.partition(":")
            return getattr(importlib.import_module(module), function)
        return self.view


@dataclass(frozen=True)
class Site:
    """What every view reads: the folder's runs (server/listing.Runs), the app's cache of loaded runs
    (server/app.Cache), and the SLA thresholds with where they came from (present/certify.load_sla)."""
    runs: Any
    cache: Any
    rules: dict[str, dict[str, float]]
    sla_source: str


PAGES: dict[str, Page] = registry.table("pages")  # the registry's table of pages
_imported = registry.IMPORTED  # the modules a setting named, imported once each (tests forget theirs)
INLINE = "page:"  # the template name of a page whose template is its html= source


def inline_source(name: str) -> str | None:
    """The html= source of the registered page whose template is `name` (INLINE + its name), else None."""
    page = PAGES.get(name[len(INLINE):]) if name.startswith(INLINE) else None
    return page.html if page is not None else None


TEMPLATES = Path(__file__).parent / "templates"  # the app's own templates, searched before any page's folder
SHOWN = render.TEMPLATES  # a run's templates (present/render.py), searched next
RESERVED = "/static"  # the app's static files: no page path under it


def route_of(path: str) -> str:
    """A path with its parameters' names (and converters) left out: `/runs/{rid}` and
    `/runs/{run_id:path}` are the same route, `/runs/{}`."""
    return re.sub(r"\{[^}]*\}", "{}", path.rstrip("/") or "/")


@registry.alias
def register_page(page: Page) -> Page:
    """Add a page (registry.register("pages", page.name, page)). Refused: a name or a route registered
    twice (paths compared with their parameters' names left out; the second would shadow the first),
    a path under /static (the app's files), and a template in the page's own folder named as one in
    server/templates, present/templates or another page's folder (Jinja would find that one first, or the first
    folder's: the page would render another's)."""
    return registry.register("pages", page.name, page)


@registry.contract("pages")
def _fits(name: str, page: Any) -> None:
    if not isinstance(page, Page) or page.name != name:
        raise BadInput(f"dashboard page {name!r}: a page is a Page registered under its own name, not {page!r}")
    clash = [p.name for p in PAGES.values() if p is not page and (p.name == page.name or route_of(p.path) == route_of(page.path))]
    if clash:
        raise BadInput(f"page {page.name!r} ({page.path}) clashes with page {clash[0]!r} ({PAGES[clash[0]].path}), "
                       f"declared in {_where(PAGES[clash[0]])}: pages need their own names and paths")
    if route_of(page.path) == RESERVED or page.path.startswith(RESERVED + "/"):
        raise BadInput(f"page {page.name!r}: its path {page.path!r} is under {RESERVED}, the app's static files")
    if page.template and page.folder is not None and (Path(page.folder) / page.template).exists():
        owners = [f"{where}/templates" for where, folder in (("server", TEMPLATES), ("present", SHOWN))
                  if (folder / page.template).exists()]
        owners += [f"page {p.name!r}'s folder" for p in PAGES.values() if p.folder is not None
                   and Path(p.folder) != Path(page.folder) and (Path(p.folder) / page.template).exists()]
        if owners:
            raise BadInput(f"page {page.name!r}: its template {page.template!r} has the name of one in {owners[0]}, "
                           "which would be rendered instead; rename it")


def _where(page: Page) -> str:
    view = page.view if isinstance(page.view, str) else getattr(page.view, "__module__", "?")
    return str(view).partition(":")[0]


def unregister_page(name: str) -> None:
    """Remove a page (tests that register a page of their own take it out again)."""
    registry.unregister("pages", name)


def declared() -> dict[str, Page]:
    """PAGES after the registry has loaded them: the built-ins, the entry points in the group
    vectrixdb.pages and (once each) the modules VECTRIXDB_PAGES names."""
    registry.names("pages")
    return PAGES


def links() -> list[dict[str, str]]:
    """The navigation: {"name", "href", "label"} for each page with a nav label, in registration order."""
    return [{"name": p.name, "href": p.path, "label": p.nav} for p in PAGES.values() if p.nav]


def folders() -> list[str]:
    """The registered pages' own template folders, in registration order (server/pages.py's loader)."""
    return list(dict.fromkeys(str(p.folder) for p in PAGES.values() if p.folder is not None))
