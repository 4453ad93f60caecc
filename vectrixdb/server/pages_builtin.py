"""The dashboard's built-in pages, each one declaration on the page registry (server/registry.py),
the same way a page outside the package is declared:

    /                               Evaluations: every run, badge, state, F1s, accuracy, groundedness,
                                    duration, questions; ?type=&state= filter, ?sort=&order= sort
    /runs/{run_id}                  one run: headline, figures, per-question table, manifest
    /runs/{run_id}/question?id=Q    one question: expected vs retrieved at each level, matched and
                                    missed, P/R/F1, answer vs expected, judged scores with reasons,
                                    and for misses what came back instead (each passage with its page)
    /runs/{run_id}/certificate.pdf  the certification PDF (built in memory, never saved)
    /runs/{run_id}/offline.html     the self-contained copy of the run page
    /evaluate?tab=TAB&run=ID        the Evaluate page, a tab per Kind.tab declared (retrieval, chunking)
    /experiments?a=ID&b=ID          compare_runs on two runs, computed on request, not saved

What a run of each kind shows (badge, headline figures, sections, figures, tab, whether it can be
compared) is read from its declaration (evaluation/runs/kinds.py); nothing here names a kind.
A run id is looked up in the listing (server/listing.py), never joined into a path, so nothing
outside the folder can be named; unknown ids are 404.
"""
from __future__ import annotations

from typing import Any

from vectrixdb.extras import needs

with needs("serve"):
    from fastapi.responses import Response

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation.runs.saved import UnreadableRun
from vectrixdb.present import views
from vectrixdb.server.registry import PAGES, Page, Site, register_page

COLUMNS = [("type", "Type"), ("status", "State"), ("name", "Name"), ("run_id", "Run"),
           ("duration_s", "Duration (s)"), ("questions", "Questions"), ("chunk_f1", "Chunk F1@k"),
           ("page_f1", "Page F1@k"), ("doc_f1", "Doc F1@k"), ("accuracy", "Accuracy"), ("groundedness", "Groundedness")]
SCORES = {"chunk_f1", "page_f1", "doc_f1", "accuracy", "groundedness"}
STATES = ("pending", "running", "completed", "failed", "unreadable")
MAX_CHANGED = 1000  # rows of the Experiments page's "questions that changed" table


def evaluations(site: Site, type: str = "", state: str = "", sort: str = "run_id", order: str = "desc") -> dict:
    rows = site.runs.rows()
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
    for r in shown:  # a column its run's kind gives a unit (Kind.units) is not a score: no heat, its unit printed
        kind = kinds.KINDS.get(r.get("kind") or "")
        r["units"] = {c: kind.unit_of(c) for c in SCORES if kind and kind.unit_of(c)}
        r["extra"] = {k: v for k, v in r.items() if k not in {c for c, _ in COLUMNS} |
                      {"kind", "extra", "units", "started", "error", "cannot_fail", "uncoloured", "headline"} and not k.endswith(" k")
                      and v is not None and v == v}
    columns = _with_k(COLUMNS, shown)
    return {"rows": shown, "columns": columns, "cell_k": {key for key, label in columns if label.endswith("@k")},
            "scores": SCORES, "types": types, "states": STATES, "counts": counts,
            "total": len(rows), "filters": {"type": type, "state": state}, "sort": sort, "order": order,
            "hidden": site.runs.unregistered()}


def _with_k(columns: list[tuple[str, str]], rows: list[dict]) -> list[tuple[str, str]]:
    """Each set-F1 column's header names the k its figures were read at ("Page F1@10"); where the
    runs shown read it at different ks the header stays "@k" and each cell names its own under it."""
    out = []
    for key, label in columns:
        ks = sorted({str(r[key + " k"]) for r in rows if str(r.get(key + " k") or "").isdigit()}, key=int)
        if label.endswith("@k") and len(ks) < 2:
            label = label[:-2] + (f"@{ks[0]}" if ks else "")
        out.append((key, label))
    return out


def run_context(site: Site, run_id: str) -> dict[str, Any]:
    """What the run page (and the Evaluate page's panel) shows of one run."""
    from vectrixdb.present import certify
    from vectrixdb.present.figures import data_uri

    entry = site.cache.get(run_id)
    report = entry["report"]
    figures = [{**f, "uri": data_uri(f["png"])} for f in site.cache.drawn(entry)]
    return {"report": report, "run_id": run_id, "meta": report.meta, "headline": views.headline(report),
            "table": views.table_of(report), "figures": figures, "manifest": views.manifest(report),
            "warnings": report.get("warnings") or [], "grade": certify.grade(report, site.rules),
            "sla": certify.compliance(report, site.rules), "sla_source": site.sla_source, "rule": certify.GRADE_RULE,
            "relation": certify.SLA_AND_GRADE,
            "extras": views.kind_view(report)}


def question(site: Site, run_id: str, id: str) -> dict:
    report = site.cache.get(run_id)["report"]
    return {"run_id": run_id, "meta": report.meta, "kind": report.kind, "report": report,
            "q": views.question_detail(report, id)}


def certificate(site: Site, run_id: str) -> Response:
    from vectrixdb.present import certificate as export

    entry = site.cache.get(run_id)  # the run page's figures, drawn once
    data = export.pdf_bytes(entry["report"], sla=(site.rules, site.sla_source), figures=site.cache.drawn(entry))
    return Response(data, media_type="application/pdf",
                    headers={"Content-Disposition": f'attachment; filename="vectrixdb-{run_id}.pdf"'})


def offline(site: Site, run_id: str) -> Response:
    from vectrixdb.present import certificate as export

    entry = site.cache.get(run_id)
    text = export.html_text(entry["report"], sla=(site.rules, site.sla_source), figures=site.cache.drawn(entry))
    return Response(text, media_type="text/html",
                    headers={"Content-Disposition": f'attachment; filename="vectrixdb-{run_id}.html"'})


def empty_tab(tab: str, picked: tuple[str, ...]) -> str:
    """What an Evaluate tab says with no run to show: the kinds declaring it, in words, and their folders."""
    words = [kinds.KINDS[name].words({}) for name in picked]
    where = " and ".join(sorted({f"{kinds.KINDS[name].folder}/runs/" for name in picked}))
    shows = f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else words[0]
    return f"No saved run for the {tab} tab in this folder. It shows {shows}, saved (save_to=FOLDER) under {where}."


def evaluate(site: Site, tab: str = "", run: str = "") -> dict:
    tabs = list(dict.fromkeys(k.tab for k in kinds.KINDS.values() if k.tab))  # declared, in registration order
    tab = tab or (tabs[0] if tabs else "")
    if tab not in tabs:
        raise BadInput(f"no tab {tab!r}; the tabs are {', '.join(tabs)}")
    picked = tuple(name for name, k in kinds.KINDS.items() if k.tab == tab)  # the kinds declaring this tab
    choices = [r for r in site.runs.rows() if r["kind"] in picked]
    done = [r["run_id"] for r in choices if r["status"] == "completed"]
    chosen, context = run, run_context(site, run) if run else None
    for candidate in [] if run else done:  # the newest completed run that can be read
        try:
            chosen, context = candidate, run_context(site, candidate)
            break
        except UnreadableRun:
            continue
    if context and context["report"].kind not in picked:
        raise BadInput(f"run {chosen} is a {context['report'].kind} run, not one for the {tab} tab")
    return {"tab": tab, "choices": choices, "chosen": chosen, "ctx": context, "tabs": tabs,
            "empty": empty_tab(tab, picked)}


def experiments(site: Site, a: str = "", b: str = "") -> dict:
    from vectrixdb.evaluation.runs.experiments import compare_runs
    from vectrixdb.present.decisions import comparison_rows
    from vectrixdb.present.figures import data_uri, png

    rows = site.runs.rows()
    declared = [(r, kinds.KINDS.get(r["kind"])) for r in rows]  # a kind nobody registered: neither list
    choices = [r for r, k in declared if k and k.comparable and r["status"] == "completed"]
    saved = [r for r, k in declared if k and k.saved_comparison]
    measures = {r["run_id"]: measures_of(site, r["run_id"]) for r in choices}
    choices = [r for r in choices if measures[r["run_id"]]]  # nothing to pair on: never offered
    for r in choices:
        r["measures"] = sorted(measures[r["run_id"]])
    offered_b = [r for r in choices if not a or a not in measures or measures[r["run_id"]] & measures[a]]
    unpaired = len(choices) - len(offered_b)
    result, error = None, None
    if a and b:
        try:
            exp = compare_runs(site.cache.get(a)["report"], site.cache.get(b)["report"])
            exp["a"], exp["b"] = a, b
            changed = exp.tables["changed"]
            result = {"table": views.table_of(exp), "values": dict(exp), "plot": data_uri(png(exp.plot)),
                      "measures": comparison_rows(exp),
                      "changed": changed.head(MAX_CHANGED).to_dict(orient="records"), "changed_total": len(changed)}
        except BadInput as exc:
            error = str(exc)
    return {"choices": choices, "offered_b": offered_b, "unpaired": unpaired, "saved": saved, "a": a, "b": b,
            "result": result, "error": error}


_MEASURES: dict[tuple[str, Any], frozenset[str]] = {}  # (run id, report stamp) -> its measures; a run never changes
MAX_MEASURES = 4096


def measures_of(site: Site, run_id: str) -> frozenset[str]:
    """The measures compare_runs can pair a run on (its per-question numeric columns), empty when it
    has none or cannot be read; remembered per run and report stamp, read around the page cache so
    listing the choices does not push the runs being looked at out of it."""
    from vectrixdb.evaluation.runs.paired import paired_measures, per_question_table

    try:
        stamp = site.runs.stamp(site.runs.ref(run_id))
        known = _MEASURES.get((run_id, stamp))
        if known is None:
            table = per_question_table(site.runs.load(run_id))
            known = frozenset(paired_measures(table, table))
            if len(_MEASURES) >= MAX_MEASURES:
                _MEASURES.clear()
            _MEASURES[(run_id, stamp)] = known
        return known
    except Exception:  # noqa: BLE001 - an unreadable or tableless run is simply not offered
        return frozenset()


for _page in (
    Page("runs", "/", "Evaluations", evaluations, "runs.html", nav="Evaluations"),
    Page("run", "/runs/{run_id}", "Run", run_context, "run.html", under="runs"),
    Page("question", "/runs/{run_id}/question", "Question", question, "question.html", under="runs"),
    Page("certificate", "/runs/{run_id}/certificate.pdf", "Certification PDF", certificate),
    Page("offline", "/runs/{run_id}/offline.html", "Offline copy", offline),
    Page("evaluate", "/evaluate", "Evaluate", evaluate, "evaluate.html", nav="Evaluate"),
    Page("experiments", "/experiments", "Experiments", experiments, "experiments.html", nav="Experiments"),
):
    _known = PAGES.get(_page.name)  # imported again (a reload): already declared here; a user's page of a
    if _known is None or getattr(_known.view, "__module__", None) != __name__:  # built-in's name is refused
        register_page(_page)
