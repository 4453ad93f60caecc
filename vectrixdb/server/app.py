"""The dashboard app: every route built from the page registry (server/registry.py; the built-in
pages are declared in server/pages_builtin.py, which lists them), the navigation from the pages'
nav labels, and the errors every page shares.

A run whose report.json cannot be used (evaluation/runs/saved.py checks each file once, where it is
read) is listed in state `unreadable` with the reason; its own routes answer 422 saying why, and
no other page is affected. A page whose view or template fails with anything but a VectrixError
answers 500 with an error page naming the page and the error; the other pages keep working. Every
request must name this server's host (server/guard.py, against DNS rebinding), and every answer
carries a Content-Security-Policy that forbids framing.

Every route is GET. (fastapi is imported at the top, not lazily: FastAPI resolves a route's
annotations itself, and `route()` gives it the view's resolved types.)
"""
from __future__ import annotations

import inspect
import logging
import re
import threading
import typing
from collections import OrderedDict
from typing import Any, Callable, Iterable

from vectrixdb.extras import needs

with needs("serve"):
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import HTMLResponse, Response
    from fastapi.staticfiles import StaticFiles
    from fastapi.templating import Jinja2Templates
    from starlette.exceptions import HTTPException as StarletteHTTPException

from vectrixdb.errors import BadInput, NotFound, VectrixError
from vectrixdb.evaluation.runs.saved import UnreadableRun
from vectrixdb.server import registry
from vectrixdb.server.guard import Guard, allowed_hosts
from vectrixdb.server.listing import Runs
from vectrixdb.server.pages import STATIC, environment
from vectrixdb.server.registry import Page, Site

log = logging.getLogger("vectrixdb.server")


class Cache:
    """The last few completed runs and their figures: a completed run never changes, but it can be
    deleted or replaced on disk, so each answer from the cache first checks that its report.json is
    still the one read (Runs.stamp): a run removed is NotFound (404), one rewritten is read again."""

    def __init__(self, runs: Runs, size: int = 16):
        self.runs, self.size, self.lock = runs, size, threading.Lock()
        self.items: OrderedDict[str, dict] = OrderedDict()

    def get(self, run_id: str) -> dict:
        with self.lock:
            entry = self.items.get(run_id)
        if entry is not None:
            if self.runs.stamp(entry["ref"]) == entry["stamp"]:
                with self.lock:
                    if run_id in self.items:
                        self.items.move_to_end(run_id)
                return entry
            with self.lock:
                self.items.pop(run_id, None)
            self.runs.forget(run_id)
        ref = self.runs.ref(run_id)
        stamp = self.runs.stamp(ref)
        if stamp is None:
            self.runs.forget(run_id)
            raise NotFound(f"no run {run_id!r} in this folder (it was removed)")
        entry = {"report": self.runs.load(run_id), "figures": None, "ref": ref, "stamp": stamp}
        if entry["report"].meta.get("status") == "completed":
            with self.lock:
                self.items[run_id] = entry
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
        return entry

    @staticmethod
    def drawn(entry: dict) -> list[dict]:
        """The figures of an entry from get(), drawn on first use and kept with it: the run page,
        its PDF and its offline copy show the same pictures, drawn once."""
        from vectrixdb.present.figures import run_figures

        if entry["figures"] is None:
            entry["figures"] = run_figures(entry["report"])
        return entry["figures"]


def create_app(folder: str, *, sla: str | None = None, hosts: Iterable[str] | None = None):
    """The FastAPI app over FOLDER (local, s3:// or Blob); `sla` a JSON/YAML thresholds file;
    `hosts` the Host names it answers to (server/guard.py; default: the loopback names)."""
    from vectrixdb.present import certify

    from vectrixdb.evaluation.runs import kinds

    kinds.declared()  # a VECTRIXDB_KINDS module that fails is refused now, naming it, not at the first request
    runs = Runs(folder)
    rules, source = certify.load_sla(sla)
    site = Site(runs, Cache(runs), rules, source)
    templates = Jinja2Templates(env=environment())
    app = FastAPI(title="vectrixdb dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.state.runs = runs
    app.add_middleware(Guard, hosts=allowed_hosts("127.0.0.1") if hosts is None else hosts)
    pages = registry.declared()

    def page(request: Request, name: str, status: int = 200, here: str = "", **context) -> HTMLResponse:
        context.update(folder=runs.folder, offline=False, css_inline=None, here=here, links=registry.links())
        return templates.TemplateResponse(request, name, context, status_code=status)

    @app.exception_handler(VectrixError)
    def refused(request: Request, exc: VectrixError):
        status = 404 if isinstance(exc, NotFound) else 400
        return page(request, "error.html", status, message=str(exc), title="Not found" if status == 404 else "Refused")

    @app.exception_handler(UnreadableRun)
    def unreadable(request: Request, exc: UnreadableRun):
        return page(request, "error.html", 422, title=f"Run {exc.run_id} cannot be read",
                    message=f"Its report.json cannot be used: {exc.reason}. The other runs are unaffected; mend or "
                            "remove this file to see the run.")

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, exc: StarletteHTTPException):
        return page(request, "error.html", exc.status_code, message=str(exc.detail), title=str(exc.detail))

    @app.exception_handler(RequestValidationError)
    def bad_parameter(request: Request, exc: RequestValidationError):
        route = request.scope.get("route")
        named = pages.get(getattr(route, "name", ""))
        what = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        return page(request, "error.html", 422, here=named.under or named.name if named else "", title="Refused",
                    message=f"Page {named.name if named else '?'!r} ({named.path if named else request.url.path}) "
                            f"cannot take these parameters: {what}")

    for declared in pages.values():
        if declared.under is not None and declared.under not in pages:
            raise BadInput(f"page {declared.name!r}: under={declared.under!r} names no registered page "
                           f"({', '.join(pages)})")
        app.add_api_route(declared.path, route(declared, site, page), methods=["GET"], name=declared.name,
                          response_class=HTMLResponse if declared.template else Response)
    return app


PASSED = (VectrixError, UnreadableRun, StarletteHTTPException)  # answered by the app's own handlers
APP_KEYS = frozenset({"folder", "offline", "css_inline", "here", "links", "page_title", "request", "name", "status"})
VIEW_RULE = "a view returns a dict for its template, or a Response"


def route(declared: Page, site: Site, page: Callable[..., HTMLResponse]) -> Callable[..., Response]:
    """The endpoint of one page: it calls the view with the site and the request's parameters, and
    renders the template with what it returns. FastAPI reads the parameters from the signature it is
    given: the view's own, less `site`, with its annotations resolved (postponed annotations are
    strings FastAPI would look up in this module), after a `request`."""
    view = declared.view_function()
    signature = inspect.signature(view)
    try:
        hints = typing.get_type_hints(view)
    except NameError as exc:  # an annotation naming what its module does not import at run time
        raise BadInput(f"page {declared.name!r}: the annotations of its view cannot be resolved ({exc})") from None
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in list(signature.parameters.values())[1:]]
    here = declared.under or declared.name
    taken = {p.name for p in params}
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        missing = [n for n in re.findall(r"\{(\w+)", declared.path) if n not in taken]
        if missing:
            raise BadInput(f"page {declared.name!r}: its path {declared.path!r} has parameter(s) {missing} "
                           "its view does not take; a view takes every parameter of its path")

    def failed(request: Request, what: str) -> Response:
        return page(request, "error.html", 500, here=here, title=f"The {declared.title} page failed",
                    message=f"Page {declared.name!r} ({declared.path}) {what}. "
                            "The other pages are unaffected; the server's log has the traceback.")

    def endpoint(request: Request, **params: Any) -> Response:
        try:
            got = view(site, **params)
            if isinstance(got, Response):
                return got
            if not isinstance(got, dict) or declared.template is None:  # a broken view, as one that raises
                log.error("dashboard page %r (%s) broke the view rule", declared.name, declared.path)
                return failed(request, f"raised TypeError: it returned {type(got).__name__}"
                                       f"{' with no template' if declared.template is None else ''}: {VIEW_RULE}")
            ours = sorted(set(got) & APP_KEYS)
            if ours:
                raise BadInput(f"page {declared.name!r}: its view's context key(s) {ours} are the app's own "
                               f"({', '.join(sorted(APP_KEYS))}); a view names its template's data otherwise")
            return page(request, declared.template, here=here, page_title=declared.title, **got)
        except PASSED:
            raise
        except Exception as exc:  # a broken page says so by name, and takes no other page with it
            log.exception("dashboard page %r (%s) failed", declared.name, declared.path)
            return failed(request, f"raised {type(exc).__name__}: {exc}")

    request = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request)
    endpoint.__signature__ = signature.replace(parameters=[request, *params],  # type: ignore[attr-defined]
                                               return_annotation=Response)
    endpoint.__name__ = f"page_{declared.name}"
    return endpoint
