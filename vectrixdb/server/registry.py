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
    folder      a folder searched for its template after server/templates (a page outside the
                package keeps its template beside its module: `folder=Path(__file__).parent`)

Templates render with autoescape on (server/pages.py's one environment); a page's template may
`{% extends "base.html" %}` and read `page_title`. The links are in registration order.

A view that raises a VectrixError gets the app's refusal page (400, or 404 for NotFound), an
unreadable run its 422; anything else it (or its template) raises becomes an error page naming the
page and the error (500), logged with its traceback; every other page keeps working.

Where the registration line goes, as for report kinds (evaluation/runs/kinds.py): a page registers
(`register_page(Page(...))`) when its module is imported, and `declared()`, which create_app runs,
imports once each: BUILTIN (server/pages_builtin.py, the built-in pages, declared the same way),
the package's own page modules in MODULES, and the modules the VECTRIXDB_PAGES setting names
(comma-separated, outside the package: `VECTRIXDB_PAGES=mypkg.latency_page vectrixdb serve runs/`).
A module named there that cannot be imported is refused, naming it and where it was named.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Union

from vectrixdb.errors import BadInput

View = Union[Callable[..., Any], str]
BUILTIN = "vectrixdb.server.pages_builtin"
MODULES: tuple[str, ...] = ()  # the package's page modules beyond the built-ins: one string here adds one
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

    def __post_init__(self):
        if not self.name or not self.path.startswith("/"):
            raise BadInput(f"page {self.name!r}: give a name and a path starting with '/', not {self.path!r}")
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
    (server/app.Cache), and the SLA thresholds with where they came from (export/certify.load_sla)."""
    runs: Any
    cache: Any
    rules: dict[str, dict[str, float]]
    sla_source: str


PAGES: dict[str, Page] = {}
_imported: set[str] = set()


def register_page(page: Page) -> Page:
    """Add a page; a name or a path registered twice is refused (the second would shadow the first)."""
    clash = [p.name for p in PAGES.values() if p.name == page.name or p.path == page.path]
    if clash:
        raise BadInput(f"page {page.name!r} ({page.path}) clashes with page {clash[0]!r} ({PAGES[clash[0]].path})")
    PAGES[page.name] = page
    return page


def unregister_page(name: str) -> None:
    """Remove a page (tests that register a page of their own take it out again)."""
    PAGES.pop(name, None)


def declared() -> dict[str, Page]:
    """PAGES after importing (once each) BUILTIN, MODULES and the modules VECTRIXDB_PAGES names."""
    named = [(BUILTIN, "registry.BUILTIN")] + [(m, "registry.MODULES") for m in MODULES]
    named += [(m.strip(), SETTING) for m in os.environ.get(SETTING, "").split(",") if m.strip()]
    for module, where in named:
        if module in _imported:
            continue
        _imported.add(module)
        try:
            importlib.import_module(module)
        except ImportError as exc:
            _imported.discard(module)
            raise BadInput(f"{where} names {module!r}, which cannot be imported ({exc}); "
                           "name a module that declares dashboard pages") from None
    return PAGES


def links() -> list[dict[str, str]]:
    """The navigation: {"name", "href", "label"} for each page with a nav label, in registration order."""
    return [{"name": p.name, "href": p.path, "label": p.nav} for p in PAGES.values() if p.nav]


def folders() -> list[str]:
    """The registered pages' own template folders, in registration order (server/pages.py's loader)."""
    return list(dict.fromkeys(str(p.folder) for p in PAGES.values() if p.folder is not None))
