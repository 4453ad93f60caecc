"""What a saved run's hand-over files say: the certification PDF as data and bytes, and the
self-contained HTML copy as text. The dashboard serves them (server/pages_builtin.py) and
`vectrixdb export` writes them (export/files.py); neither builds them itself.

The PDF (reportlab, laid out by present/pdf.py) holds the overall grade with the rule that gave it,
SLA compliance against the thresholds given (certify.DEFAULT_SLA, printed as such, when none),
the headline and per-question figures as colour-coded tables, the run's own matplotlib figures,
the run's manifest and an appendix of misses. The HTML copy is the dashboard's run page with
every question's drill-down below it, its stylesheet inlined and its figures as data URIs, so it
opens from disk with no server. Both read the run through the report contract only.
"""
from __future__ import annotations

import time
from typing import Any

from vectrixdb.present import certify
from vectrixdb.present.decisions import UPPER_BOUND

MAX_APPENDIX = 200
MAX_HEATMAP_ROWS = 40
MAX_OFFLINE_QUESTIONS = 2000


def _rules(sla: Any) -> tuple[dict, str]:
    if isinstance(sla, tuple):
        return sla
    return certify.load_sla(sla)


def certificate(report, sla: Any = None, figures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What the PDF says, as plain data (present/pdf.build lays it out). `figures` are the run's
    figures (present/figures.run_figures) when the caller has drawn them already, else drawn here."""
    from vectrixdb.version import __version__
    from vectrixdb.present import views
    from vectrixdb.present.figures import run_figures
    from vectrixdb.plotting.heatmap import key_scores

    from vectrixdb.evaluation.runs.kinds import kind_of

    rules, source = _rules(sla)
    meta, run_id = report.meta, report.meta.get("run_id")
    check = certify.compliance(report, rules)
    for row in check["rows"]:
        row["actual_text"] = views.fmt(row["actual"])
    kind = kind_of(report.kind)
    headline = [figure_row(k, v, kind.unit_of(k), certify.attainable(report, k)) if not certify.failless(report, k)
                else (k, f"{views.fmt(v)} (cannot fail)", None) for k, v in certify.figures(report, aliases=False).items()]
    headline += _unjudged_rows(report)
    heatmap = None
    table = views.question_table(report)
    keys = [c for c in key_scores(table) if not kind.unit_of(c)] if table is not None and len(table) else []
    if keys:  # the score columns, then (uncoloured, with their unit) the numbers the kind says are not scores
        columns = (keys + [c for c in table.columns if kind.unit_of(c) and views.is_number_column(table[c])])[:10]
        units = [kind.unit_of(c) for c in columns]
        shown = table.head(MAX_HEATMAP_ROWS)
        heatmap = {"columns": [str(c) for c in columns], "units": units,
                   "note": f"{len(shown)} of {len(table)} questions; scores red 0, green 1, grey undefined; "
                           "precision and F1 coloured by their share of the best the question's labels allow"
                           + ("; a column with a unit is not a score and is not coloured" if any(units) else ""),
                   "rows": [{"id": str(i)[:40], "cells": [views.fmt(r[c], u) for c, u in zip(columns, units)],
                             "scores": [None if certify.failless(report, str(c)) else
                                        certify.heat_value(str(c), r[c], _row_of(report, i)) for c in columns]}
                            for i, r in shown.iterrows()]}
    appendix = misses(report)
    measured = views.system(report)  # the system the run measured, when it recorded one
    return {"title": f"vectrixdb certification: run {run_id}",
            "subtitle": f"{meta.get('name') or report.get('name') or report.kind + ' run'} · "
                        f"{'measured ' + measured + ' · ' if measured else ''}run {run_id} · "
                        f"{report.kind} · {meta.get('status')} · {meta.get('questions')} questions · "
                        f"started {meta.get('started') or '—'} · exported {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "graded": kind.graded, "what": kind.words(dict(report)), "cannot_fail": (report.get("cannot_fail") or []) + [
                f"{level} level: {why}" for level, why in (report.get("cannot_fail_levels") or {}).items()],
            "grade": certify.grade(report, rules), "rule": certify.GRADE_RULE, "relation": certify.SLA_AND_GRADE, "sla": check, "sla_source": source,
            "headline": headline, "heatmap": heatmap, "extra": _extra_tables(report),
            "figures": run_figures(report) if figures is None else figures,
            "manifest": views.manifest(report), "appendix": appendix[:MAX_APPENDIX],
            "appendix_note": (f"{len(appendix)} question(s) with something missed or judged wrong"
                              + (f"; the first {MAX_APPENDIX} are listed" if len(appendix) > MAX_APPENDIX else "")
                              if appendix else "No misses recorded for this run."),
            "footer": f"vectrixdb {__version__} · run {run_id}"}


def _row_of(report, key) -> dict:
    """A question's row of the run's own frame (its expected items), {} when the frame lacks it."""
    frame = report.frame
    return frame.loc[key].to_dict() if frame is not None and key in frame.index else {}


def figure_row(name: str, value: float, unit: str | None, best: float | None = None) -> tuple[str, str, float | None]:
    """A headline row of the certificate: (name, text, the value its cell is coloured by, or None
    for no colour). A figure with a unit (Kind.units) is printed with it and never coloured; so is
    a coverage figure (measures.py's direction: unjudged@k says how much nobody judged, not how
    good the run is). A figure whose best on these labels is below 1 (`best`: set precision and
    F1, certify.attainable) is coloured by how near it comes to that best, and says it. Otherwise
    a score is coloured when it is a quality figure, a figure at k or a set F1 (`QUALITY`)."""
    from vectrixdb.evaluation.retrieval.measures import direction_of
    from vectrixdb.present import views

    if unit:
        return name, views.fmt(value, unit), None
    if direction_of(name) != "higher":
        return name, views.fmt(value), None
    if best is not None:
        return name, f"{views.fmt(value)} (best {best:.2f} on these labels)", min(value / best, 1.0) if best else None
    scored = name in certify.QUALITY or "@" in name or name.endswith("_f1")
    return name, views.fmt(value), value if scored else None


def _unjudged_rows(report) -> list[tuple[str, str, None]]:
    """The certificate's unjudged share of a retrieval or RAG run (present/decisions.py), as headline
    rows ("unjudged, top 10 by page", "38%"; "at most" where grade-0 labels were not recorded)."""
    from vectrixdb.present.decisions import decisions

    got = decisions(report)
    if not got:
        return []
    holes = got["unjudged"]
    bound = "at most " if holes["note"] == UPPER_BOUND else ""
    rows = [(f"unjudged, {r['what']}", f"{bound if r['share'] else ''}{r['share']:.0%}" if r["share"] is not None
             else "—", None) for r in holes["rows"]]
    return rows or [("unjudged", holes["note"] or "not recorded", None)]


def _extra_tables(report) -> list[dict[str, Any]]:
    """Tables a kind adds to its certificate (Show.certificate, present/shows.py), [{"title", "rows"}]."""
    from vectrixdb.evaluation.runs.kinds import call, kind_of
    from vectrixdb.present import shows

    shown = shows.of(kind_of(report.kind))
    return list(call(shown.certificate, report)) if shown.certificate else []


def setup_tables(report) -> list[dict[str, Any]]:
    """An `evaluate` run's certificate table: every setup it searched with, best first, each figure
    with its 95% interval and the latency (the grade is the first row's)."""
    from vectrixdb.present import views

    frame = report.frame
    if frame is None or not len(frame):
        return []
    figures = [c for c in frame.columns if c not in ("mode", "vectors", "rerank", "median_ms", "p95_ms")
               and not str(c).endswith((" low", " high"))]
    rows = [["mode", "vectors", "rerank"] + [f"{c} [95% CI]" if f"{c} low" in frame else c for c in figures]
            + ["median ms", "p95 ms"]]
    for _, r in frame.iterrows():
        cells = [str(r["mode"]), str(r["vectors"]), str(r["rerank"])]
        for c in figures:
            low, high = r.get(f"{c} low"), r.get(f"{c} high")
            bounds = f" [{views.fmt(low)}, {views.fmt(high)}]" if f"{c} low" in frame and low == low and low is not None else ""
            cells.append(views.fmt(r[c]) + bounds)
        rows.append(cells + [views.fmt(r["median_ms"], "ms"), views.fmt(r["p95_ms"], "ms")])
    return [{"title": f"Setups ({len(frame)}, best first; the grade is the first's)", "rows": rows}]


def chunking_tables(report) -> list[dict[str, Any]]:
    """A chunking comparison's certificate tables: its techniques and its cost."""
    from vectrixdb.present import views

    view = views.chunking_view(report)
    right = view["decided_by"] == "answered right"
    rows = [["technique", "best build", "found", "answered right", "chunks", "p vs best", ""]]
    rows += [[t["name"], t["build"], t["found"], t["right"] if right else "— (no model)", views.fmt(t["chunks"]), t["p"],
              "best" if t["best"] else "tie" if t["tie"] else ""] for t in view["techniques"]]
    return [{"title": f"Techniques (decided by {view['decided_by']}, {view['budget']} characters per question)",
             "rows": rows}, {"title": "Cost", "rows": [["item", "value"]] + [list(r) for r in view["cost"]]}]


def misses(report) -> list[dict[str, Any]]:
    """One entry per question that missed something: its title and lines, each plain text or
    {"label", "markdown"} for a passage or an answer (the PDF renders its Markdown). What counts is
    the kind's (Show.appendix, present/shows.py); by default the run's recorded misses (miss_entries)."""
    from vectrixdb.evaluation.runs.kinds import call, kind_of
    from vectrixdb.present import shows

    shown = shows.of(kind_of(report.kind))
    return list(call(shown.appendix, report)) if shown.appendix else miss_entries(report)


def chunking_appendix(report) -> list[dict[str, Any]]:
    """A chunking comparison's appendix: each question its best build did not find (or answer right)."""
    out: list[dict[str, Any]] = []
    if not (report.get("best") and "outcomes" in report.tables):
        return miss_entries(report)
    best = report["best"]
    column = f"{best['name']}/{best['chunk_size']}/{'heading' if best['embed_heading'] else 'plain'}"
    outcomes = report.tables["outcomes"]
    if column in outcomes:
        for qid, ok in outcomes[column].items():
            if not bool(ok):
                out.append({"title": f"{qid}", "lines": [f"not {report.get('decided_by')} by the best build {column}"]})
    return out


def miss_entries(report) -> list[dict[str, Any]]:
    """The run's recorded misses (`misses`): the question, what was expected, what came back instead."""
    from vectrixdb.present import views
    from vectrixdb.present.markdown import excerpt

    out = []
    for miss in report.get("misses") or []:
        lines: list[Any] = [f"question: {miss.get('question')}", f"expected: {views.fmt(miss.get('expected'))}; "
                 f"first right result at rank {views.fmt(miss.get('first_right_rank'))}", "came back instead:"]
        lines += [{"label": f"{g.get('doc_id')} page {views.fmt(list(g.get('pages') or []))}:",
                   "markdown": excerpt(g.get("text") or "")} for g in miss.get("got") or []]  # drawn as Markdown
        out.append({"title": str(miss.get("id")), "lines": lines})
    return out


def evaluation_appendix(report) -> list[dict[str, Any]]:
    """A run_evaluation run's appendix: its misses, then each question with a level missed or a
    judged score below 1 (its answers as Markdown)."""
    from vectrixdb.present import views

    out = miss_entries(report)
    if views.question_table(report) is None:
        return out
    for q in views.question_details(report):  # one pass over the table: linear in the questions
        qid = q["id"]
        missed = [level for level in q["levels"] if level["missed"]]
        wrong = [j for j in q["judged"] if j["value"] is not None and j["value"] < 1]
        if not missed and not wrong:
            continue
        lines: list[Any] = [f"question: {q['question']}"]  # text, or {"label", "markdown"} drawn as Markdown
        for level in missed:
            lines.append(f"{level['name']}: missed {views.fmt(level['missed'])}; came back instead "
                         f"{views.fmt(level['instead'])}")
        if q["answer"] is not None:  # each answer on its own, as Markdown
            lines += [{"label": "generated answer:", "markdown": str(q["answer"])},
                      {"label": "expected answer:", "markdown": views.fmt(q["expected_answer"])}]
        lines += [f"{j['metric']} {j['score']}: {j['reason']}" for j in wrong]
        out.append({"title": str(qid), "lines": lines})
    return out


def pdf_bytes(report, *, sla: Any = None, figures: list[dict[str, Any]] | None = None) -> bytes:
    """The certification PDF of a report, in memory (`figures`: as certificate() takes them)."""
    from vectrixdb.present.pdf import build

    return build(certificate(report, sla, figures))


def html_text(report, *, sla: Any = None, figures: list[dict[str, Any]] | None = None) -> str:
    """The run page and every question's drill-down as one self-contained HTML document
    (`figures`: the run's figures when the caller has drawn them, as certificate() takes them)."""
    from vectrixdb.present import views
    from vectrixdb.present.figures import data_uri, run_figures
    from vectrixdb.present.render import css, render

    rules, source = _rules(sla)
    table = views.question_table(report)
    ids = [str(i) for i in table.index[:MAX_OFFLINE_QUESTIONS]] if table is not None else []
    return render("offline.html", offline=True, css_inline=css(), folder="", made=time.strftime("%Y-%m-%d %H:%M UTC"),
                  report=report, run_id=report.meta.get("run_id"), meta=report.meta, headline=views.headline(report),
                  table=views.table_of(report), manifest=views.manifest(report),
                  figures=[{**f, "uri": data_uri(f["png"])} for f in (run_figures(report) if figures is None else figures)],
                  warnings=report.get("warnings") or [], grade=certify.grade(report, rules),
                  sla=certify.compliance(report, rules), sla_source=source, rule=certify.GRADE_RULE,
                  relation=certify.SLA_AND_GRADE, extras=views.kind_view(report),
                  questions=list(views.question_details(report, MAX_OFFLINE_QUESTIONS)),
                  more=(len(table) - len(ids)) if table is not None else 0)
