"""The dashboard's routes: read-only pages over a folder of saved runs.

    /                               Evaluations: every run, badge, state, F1s, accuracy, groundedness,
                                    duration, questions; ?type=&state= filter, ?sort=&order= sort
    /runs/{id}                      one run: headline, figures, per-question table, manifest
    /runs/{id}/question?id=Q        one question: expected vs retrieved at each level, matched and
                                    missed, P/R/F1, answer vs expected, judged scores with reasons,
                                    and for misses what came back instead (each passage with its page)
    /runs/{id}/certificate.pdf      the certification PDF (built in memory, never saved)
    /runs/{id}/offline.html         the self-contained copy of the run page
    /evaluate?tab=TAB&run=ID        the Evaluate page, a tab per Kind.tab declared (retrieval, chunking)
    /experiments?a=ID&b=ID          compare_runs on two runs, computed on request, not saved

A run whose report.json cannot be used (evaluation/runs/saved.py checks each file once, where it is
read) is listed in state `unreadable` with the reason; its own routes answer 422 saying why, and
no other page is affected. Every request must name this server's host (server/guard.py, against
DNS rebinding), and every answer carries a Content-Security-Policy that forbids framing.

What a run of each kind shows (badge, headline figures, sections, figures, tab, whether it can be
compared) is read from its declaration (evaluation/runs/kinds.py); nothing here names a kind.

Every route is GET. (fastapi is imported at the top, not lazily: with postponed annotations
FastAPI must resolve `Request` from the module's globals.) A run id is looked up in the listing (server/listing.py), never joined into a
path, so nothing outside FOLDER can be named; unknown ids are 404.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Iterable

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from vectrixdb.errors import BadInput, NotFound, VectrixError
from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation.runs.saved import UnreadableRun
from vectrixdb.server import views
from vectrixdb.server.guard import Guard, allowed_hosts
from vectrixdb.server.listing import Runs
from vectrixdb.server.pages import STATIC, environment

COLUMNS = [("type", "Type"), ("status", "State"), ("name", "Name"), ("run_id", "Run"),
           ("duration_s", "Duration (s)"), ("questions", "Questions"), ("chunk_f1", "Chunk F1@k"),
           ("page_f1", "Page F1@k"), ("doc_f1", "Doc F1@k"), ("accuracy", "Accuracy"), ("groundedness", "Groundedness")]
SCORES = {"chunk_f1", "page_f1", "doc_f1", "accuracy", "groundedness"}
STATES = ("pending", "running", "completed", "failed", "unreadable")
MAX_CHANGED = 1000  # rows of the Experiments page's "questions that changed" table


class Cache:
    """The last few completed runs and their figures: a completed run never changes."""

    def __init__(self, runs: Runs, size: int = 16):
        self.runs, self.size, self.lock = runs, size, threading.Lock()
        self.items: OrderedDict[str, dict] = OrderedDict()

    def get(self, run_id: str) -> dict:
        with self.lock:
            if run_id in self.items:
                self.items.move_to_end(run_id)
                return self.items[run_id]
        entry = {"report": self.runs.load(run_id), "figures": None}
        if entry["report"].meta.get("status") == "completed":
            with self.lock:
                self.items[run_id] = entry
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
        return entry

    def figures(self, run_id: str) -> list[dict]:
        from vectrixdb.server.figures import run_figures

        entry = self.get(run_id)
        if entry["figures"] is None:
            entry["figures"] = run_figures(entry["report"])
        return entry["figures"]


def empty_tab(tab: str, picked: tuple[str, ...]) -> str:
    """What an Evaluate tab says with no run to show: the kinds declaring it, in words, and their folders."""
    words = [kinds.KINDS[name].words({}) for name in picked]
    where = " and ".join(sorted({f"{kinds.KINDS[name].folder}/runs/" for name in picked}))
    shows = f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else words[0]
    return f"No saved run for the {tab} tab in this folder. It shows {shows}, saved (save_to=FOLDER) under {where}."


def create_app(folder: str, *, sla: str | None = None, hosts: Iterable[str] | None = None):
    """The FastAPI app over FOLDER (local, s3:// or Blob); `sla` a JSON/YAML thresholds file;
    `hosts` the Host names it answers to (server/guard.py; default: the loopback names)."""
    from vectrixdb.export import certify, files as export
    from vectrixdb.server.figures import data_uri

    runs = Runs(folder)
    cache = Cache(runs)
    rules, source = certify.load_sla(sla)
    templates = Jinja2Templates(env=environment())
    app = FastAPI(title="vectrixdb dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.state.runs = runs
    app.add_middleware(Guard, hosts=allowed_hosts("127.0.0.1") if hosts is None else hosts)

    def page(request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        context.update(folder=runs.folder, offline=False, css_inline=None)
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

    @app.get("/", response_class=HTMLResponse)
    def evaluations(request: Request, type: str = "", state: str = "", sort: str = "run_id", order: str = "desc"):
        rows = runs.rows()
        for r in rows:  # a set F1 sits in its column with the k it was read at beside it (`doc_f1@10`)
            for key in [k for k in r if k.split("@")[0] in SCORES and "@" in k]:
                r[key.split("@")[0]], r[key.split("@")[0] + " k"] = r.pop(key), key.split("@")[1]
        types = kinds.badges()  # every kind's declared badges: the Type filter offers each
        counts = {t: sum(r["type"] == t for r in rows) for t in types}
        shown = [r for r in rows if (not type or (r["type"] or "Unknown") == type) and (not state or r["status"] == state)]
        if sort not in {c for c, _ in COLUMNS} | {"started"}:
            raise BadInput(f"cannot sort by {sort!r}; choose one of started, {', '.join(c for c, _ in COLUMNS)}")
        present = [r for r in shown if r.get(sort) is not None]
        present.sort(key=lambda r: (str(r[sort]) if isinstance(r[sort], str) else r[sort]), reverse=order != "asc")
        shown = present + [r for r in shown if r.get(sort) is None]  # undefined last either way
        for r in shown:
            r["extra"] = {k: v for k, v in r.items() if k not in {c for c, _ in COLUMNS} |
                          {"kind", "extra", "started", "error"} and not k.endswith(" k") and v is not None and v == v}
        return page(request, "runs.html", rows=shown, columns=COLUMNS, scores=SCORES, types=types, states=STATES,
                    counts=counts, total=len(rows), filters={"type": type, "state": state}, sort=sort, order=order,
                    hidden=runs.unregistered())

    def run_context(run_id: str) -> dict[str, Any]:
        report = cache.get(run_id)["report"]
        figures = [{**f, "uri": data_uri(f["png"])} for f in cache.figures(run_id)]
        return {"report": report, "run_id": run_id, "meta": report.meta, "headline": views.headline(report),
                "table": views.table_of(report), "figures": figures, "manifest": views.manifest(report),
                "warnings": report.get("warnings") or [], "grade": certify.grade(report, rules),
                "sla": certify.compliance(report, rules), "sla_source": source, "rule": certify.GRADE_RULE,
                "extras": views.kind_view(report)}

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: str):
        return page(request, "run.html", **run_context(run_id))

    @app.get("/runs/{run_id}/question", response_class=HTMLResponse)
    def question_page(request: Request, run_id: str, id: str):
        report = cache.get(run_id)["report"]
        return page(request, "question.html", run_id=run_id, meta=report.meta, kind=report.kind, report=report,
                    q=views.question_detail(report, id))

    @app.get("/runs/{run_id}/certificate.pdf")
    def certificate(run_id: str):
        data = export.pdf_bytes(cache.get(run_id)["report"], sla=(rules, source))
        return Response(data, media_type="application/pdf",
                        headers={"Content-Disposition": f'attachment; filename="vectrixdb-{run_id}.pdf"'})

    @app.get("/runs/{run_id}/offline.html")
    def offline(run_id: str):
        text = export.html_text(cache.get(run_id)["report"], sla=(rules, source))
        return Response(text, media_type="text/html",
                        headers={"Content-Disposition": f'attachment; filename="vectrixdb-{run_id}.html"'})

    @app.get("/evaluate", response_class=HTMLResponse)
    def evaluate_page(request: Request, tab: str = "", run: str = ""):
        tabs = list(dict.fromkeys(k.tab for k in kinds.KINDS.values() if k.tab))  # declared, in registration order
        tab = tab or (tabs[0] if tabs else "")
        if tab not in tabs:
            raise BadInput(f"no tab {tab!r}; the tabs are {', '.join(tabs)}")
        picked = tuple(name for name, k in kinds.KINDS.items() if k.tab == tab)  # the kinds declaring this tab
        choices = [r for r in runs.rows() if r["kind"] in picked]
        done = [r["run_id"] for r in choices if r["status"] == "completed"]
        chosen, context = run, run_context(run) if run else None
        for candidate in [] if run else done:  # the newest completed run that can be read
            try:
                chosen, context = candidate, run_context(candidate)
                break
            except UnreadableRun:
                continue
        if context and context["report"].kind not in picked:
            raise BadInput(f"run {chosen} is a {context['report'].kind} run, not one for the {tab} tab")
        return page(request, "evaluate.html", tab=tab, choices=choices, chosen=chosen, ctx=context, tabs=tabs,
                    empty=empty_tab(tab, picked))

    @app.get("/experiments", response_class=HTMLResponse)
    def experiments(request: Request, a: str = "", b: str = ""):
        from vectrixdb.evaluation.runs.experiments import compare_runs
        from vectrixdb.server.decisions import comparison_rows
        from vectrixdb.server.figures import png

        rows = runs.rows()
        declared = [(r, kinds.KINDS.get(r["kind"])) for r in rows]  # a kind nobody registered: neither list
        choices = [r for r, k in declared if k and k.comparable and r["status"] == "completed"]
        saved = [r for r, k in declared if k and k.saved_comparison]
        result, error = None, None
        if a and b:
            try:
                exp = compare_runs(cache.get(a)["report"], cache.get(b)["report"])
                exp["a"], exp["b"] = a, b
                changed = exp.tables["changed"]
                result = {"table": views.table_of(exp), "values": dict(exp), "plot": data_uri(png(exp.plot)),
                          "measures": comparison_rows(exp),
                          "changed": changed.head(MAX_CHANGED).to_dict(orient="records"), "changed_total": len(changed)}
            except BadInput as exc:
                error = str(exc)
        return page(request, "experiments.html", choices=choices, saved=saved, a=a, b=b, result=result, error=error)

    return app
