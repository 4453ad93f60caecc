"""What the pages show, taken from a Report through its saved contract only (values, frame, tables,
meta; the kind's declaration, evaluation/runs/kinds.py, says which table has one row per question and
which section and tables its run page adds). Plain dicts and lists go to the
templates; escaping is the templates' job (Jinja2 autoescape), so nothing here builds HTML.
"""
from __future__ import annotations

import math
from typing import Any

from vectrixdb.errors import NotFound
from vectrixdb.evaluation.runs.kinds import KINDS, call, with_unit
from vectrixdb.plotting.heatmap import key_scores, score_columns

LEVELS = ("chunk", "page", "doc")
MAX_ROWS = 1000


def fmt(value: Any, unit: str | None = None) -> str:
    """A cell as text: 3 decimals for fractions, a dash for undefined, lists joined; a number with
    a unit (its kind's `units`: not a score) with that unit (kinds.with_unit)."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()  # a NumPy scalar
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit and isinstance(value, (int, float)):
        return with_unit(value, unit)
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value) if value else "—"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


def question_table(report):
    """The run's table with one row per question, or None (report.KINDS decides which)."""
    which = KINDS[report.kind].questions
    if which == "frame":
        return report.frame
    return report.tables.get(which) if which else None


def table_of(report) -> dict[str, Any] | None:
    """The run page's main table: per question when the kind has one (rows link to a drill-down;
    F1 stands for its precision and recall there, which the drill-down shows), else the report's
    frame (builds, setups, measures)."""
    questions = question_table(report)
    frame = questions if questions is not None else report.frame
    if frame is None or not len(frame):
        return None
    if questions is not None and "question" not in frame and golden_questions(report):
        asked = golden_questions(report)  # a run that kept only ids (a chunking comparison): its recorded golden file's text
        frame = frame.assign(question=[(asked.get(str(i)) or {}).get("question") for i in frame.index])
    kind = KINDS[report.kind]
    measured = [c for c in frame.columns if kind.unit_of(c)]  # declared not a score: its unit, no colour
    scores = [c for c in score_columns(frame) if c not in measured]
    if questions is not None and scores:
        missed = [f"{level} missed" for level in LEVELS if f"{level} missed" in frame and
                  f"{level} expected" in frame and frame[f"{level} expected"].map(len).any()]
        keys = [c for c in key_scores(frame) if c not in measured]
        numbers = [c for c in measured if is_number_column(frame[c])]
        columns = (["question"] if "question" in frame else []) + keys + numbers + missed
    else:
        columns = [c for c in frame.columns if not frame[c].map(lambda v: isinstance(v, (list, dict))).any()][:14]
    shown = frame.head(MAX_ROWS)
    units = [kind.unit_of(c) for c in columns]
    rows = [{"id": str(index), "cells": [fmt(row[c], u) for c, u in zip(columns, units)],
             "scores": [score_value(row[c]) if c in scores and questions is not None else None for c in columns]}
            for index, row in shown.iterrows()]
    return {"columns": [str(c) for c in columns], "numeric": [_numeric(frame[c]) for c in columns], "units": units,
            "rows": rows, "total": len(frame), "shown": len(shown), "index": frame.index.name or "",
            "drill": questions is not None}


def is_number_column(values) -> bool:
    """Whether a column holds numbers (not yes/no): one with a unit is then shown as a number."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return bool(is_numeric_dtype(values)) and not is_bool_dtype(values)


def _numeric(values) -> bool:
    from pandas.api.types import is_numeric_dtype

    return bool(is_numeric_dtype(values))


def score_value(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def headline(report) -> list[tuple[str, str]]:
    """The run's headline figures as (name, text) pairs."""
    from vectrixdb.present.certify import figures

    from vectrixdb.present.certify import attainable, failless

    kind = KINDS[report.kind]
    out = []
    for name, value in figures(report, aliases=False).items():
        best = None if kind.unit_of(name) else attainable(report, name)
        note = " (cannot fail)" if failless(report, name) else f" (best {best:.2f} on these labels)" if best else ""
        out.append((name, fmt(value, kind.unit_of(name)) + note))
    return out


def question_index(report) -> dict[str, Any]:
    """Where each question is, built once per report and kept on it: question id -> row position
    in the per-question table, and -> its misses. A page or an export that shows n questions then
    costs n look-ups, not n scans of every question (10,000 questions: a scan each was quadratic)."""
    cached = report.__dict__.get("_question_index")
    table = question_table(report)
    if cached is None or cached["table"] is not table:
        positions: dict[str, int] = {}
        for position, index in enumerate(table.index if table is not None else []):
            positions.setdefault(str(index), position)
        misses: dict[str, list] = {}
        for miss in report.get("misses") or []:
            if isinstance(miss, dict):
                misses.setdefault(str(miss.get("id")), []).append(miss)
        cached = {"table": table, "positions": positions, "misses": misses}
        report.__dict__["_question_index"] = cached
    return cached


def question_details(report, limit: int | None = None):
    """question_detail for each question in table order (the first `limit`), reading the table
    once row by row (itertuples) rather than looking each row up: what the exports loop over."""
    table = question_table(report)
    if table is None:
        return
    shown = table if limit is None else table.head(limit)
    columns = list(table.columns)
    for qid, values in zip(shown.index, shown.itertuples(index=False, name=None)):
        yield question_detail(report, str(qid), dict(zip(columns, values)))


def _set_figure(row: dict, name: str) -> Any:
    """A set figure of a question row by its name without k (`page_f1` finds `page_f1@10`)."""
    return next((v for c, v in row.items() if str(c).split("@")[0] == name), None)


def question_detail(report, qid: str, row: dict | None = None) -> dict[str, Any]:
    """Everything known about one question of a run: see the module docstring of server.pages_builtin.
    `row` is its table row as a dict when the caller has it (question_details)."""
    table = question_table(report)
    if table is None:
        raise NotFound(f"a {report.kind} run has no per-question table")
    index = question_index(report)
    if qid not in index["positions"]:
        raise NotFound(f"no question {qid!r} in run {report.meta.get('run_id')}")
    if row is None:
        row = table.iloc[index["positions"][qid]].to_dict()
    get = row.get
    levels = []
    for level in LEVELS:
        if f"{level} expected" not in row:
            continue
        matched = set(get(f"{level} matched") or [])
        levels.append({"name": {"doc": "documents", "page": "pages", "chunk": "chunks"}[level],
                       "expected": list(get(f"{level} expected") or []),
                       "retrieved": [{"id": x, "matched": x in matched} for x in get(f"{level} retrieved") or []],
                       "matched": list(get(f"{level} matched") or []), "missed": list(get(f"{level} missed") or []),
                       "instead": [x for x in get(f"{level} retrieved") or [] if x not in matched],
                       "prf": [fmt(_set_figure(row, f"{level}_{m}")) for m in ("precision", "recall", "f1")]})
    judged = [{"metric": c[:-len(" reason")], "score": fmt(get(c[:-len(" reason")])), "reason": fmt(get(c)),
               "value": score_value(get(c[:-len(" reason")])),
               "outcome": fmt(get(c[:-len(" reason")] + " outcome"))} for c in row if str(c).endswith(" reason")]
    misses = index["misses"].get(qid, [])
    used = {"question", "answer", "expected_answer", "passages"} | {c for c in row if str(c).startswith(LEVELS)}
    used |= {c for c in row for j in judged if str(c).startswith(j["metric"])}
    builds = _builds(report, row, qid)
    used |= {b["name"] for b in builds}
    other = [(str(c), fmt(row[c])) for c in row if c not in used]
    golden = golden_questions(report).get(qid) if get("question") is None else None
    text = fmt(get("question")) if get("question") is not None else (golden or {}).get("question") or qid
    return {"id": qid, "question": text, "golden": golden, "builds": builds,
            "handed_recorded": bool(builds) and all(b["handed"] is not None for b in builds), "levels": levels,
            "answer": get("answer"), "expected_answer": get("expected_answer"), "judged": judged,
            "misses": [_miss(m) for m in misses], "other": other,
            "passages": [{"rank": p.get("rank"), "doc_id": p.get("doc_id"), "chunk_id": p.get("chunk_id"),
                          "pages": fmt(list(p.get("pages") or [])), "score": fmt(p.get("score")),
                          "text": p.get("text") or ""} for p in _listed(get("passages"))]}


def _builds(report, row: dict, qid: str) -> list[dict[str, Any]]:
    """A comparison's per-question row of builds (compare_chunking's `outcomes`: build -> whether what
    it handed over held the evidence, or the answer was right): one entry per build, else []. Each
    has what the build handed over (chunking/handed.py's passages), None when the run did not keep it."""
    from vectrixdb.evaluation.chunking.handed import passages

    if KINDS[report.kind].questions != "outcomes" or not row:
        return []
    values = {str(c): v.item() if hasattr(v, "item") else v for c, v in row.items()}
    if not all(isinstance(v, bool) for v in values.values()):
        return []
    record = report.get("handed")
    return [{"name": c, "found": v, "handed": passages(record, c, qid)} for c, v in values.items()]


MAX_GOLDEN_BYTES = 64 << 20


def golden_questions(report) -> dict[str, dict[str, Any]]:
    """The questions of the golden file the run recorded (meta `golden`, checked against its recorded
    `golden_sha256`), by id: text, expected labels, evidence and reference. A run that kept only the
    question ids (a chunking comparison) shows its questions through this. {} when the run recorded no
    file, the file is gone, remote, too big, changed since the run, or does not read as a golden file.
    Read once per report and kept on it."""
    cached = report.__dict__.get("_golden_questions")
    if cached is not None:
        return cached
    out: dict[str, dict[str, Any]] = {}
    meta = report.meta if isinstance(report.meta, dict) else {}
    path, digest = meta.get("golden"), meta.get("golden_sha256")
    if isinstance(path, str) and isinstance(digest, str) and "://" not in path:
        out = _read_golden(path, digest)
    report.__dict__["_golden_questions"] = out
    return out


def _read_golden(path: str, digest: str) -> dict[str, dict[str, Any]]:
    import hashlib
    from pathlib import Path

    from vectrixdb.evaluation.golden.files import load_questions

    try:
        file = Path(path)
        if not file.is_file() or file.stat().st_size > MAX_GOLDEN_BYTES:
            return {}
        if hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            return {}
        questions = load_questions(str(file))
    except Exception:  # noqa: BLE001 - a file that does not read as a golden file shows nothing, never an error
        return {}
    return {q.key(): {"question": q.question, "expected": list(q.expected), "evidence": list(q.evidence),
                      "reference": q.reference} for q in questions}


def _listed(value: Any) -> list[dict]:
    """A per-question column of dicts as a list (runs saved before the column existed have none)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, (list, tuple)) else []


def _miss(miss: dict) -> dict[str, Any]:
    got = [{"doc_id": g.get("doc_id"), "pages": fmt(list(g.get("pages") or [])), "score": fmt(g.get("score")),
            "text": g.get("text") or ""} for g in miss.get("got") or []]
    return {"expected": fmt(miss.get("expected")), "first_right_rank": fmt(miss.get("first_right_rank")), "got": got}


def system(report) -> str | None:
    """The system a run measured, in words (adapters.system_words: `chroma: collection uber, embedding
    model ...`, `function my_rag:search`); None when the run recorded none (runs saved before it did)."""
    from vectrixdb.evaluation.retrieval.adapters import system_words

    return system_words(report.meta)


def manifest(report) -> list[tuple[str, str]]:
    """What the run was: ids, versions, dates, inputs and settings; unrecorded items say so."""
    meta, values = report.meta, dict(report)
    unknown = "not recorded by this run"

    def first(*names):
        for name in names:
            for where in (values, meta):
                if where.get(name) not in (None, "", {}):
                    return fmt(where[name])
        return unknown

    settings = {k: values[k] for k in ("type", "by", "k", "depth", "budget", "alpha", "decided_by", "search",
                                       "confidence", "setups") if values.get(k) not in (None, {}, [])}
    return [("run id", fmt(meta.get("run_id"))), ("kind", report.kind), ("name", first("name")),
            ("system measured", system(report) or unknown), ("status", fmt(meta.get("status"))),
            ("started", fmt(meta.get("started"))),
            ("finished", fmt(meta.get("finished"))), ("duration (s)", fmt(meta.get("duration_s"))),
            ("questions", fmt(meta.get("questions"))),
            ("golden file", first("golden")), ("golden file SHA-256", first("golden_sha256")),
            ("questions SHA-256", first("questions_sha256")),
            ("collection", first("collection")), ("collection generation", first("collection_generation")),
            ("embedding model", first("embedding_model")), ("model", first("chat_model", "model_name", "judge")),
            ("model cost", first("model")), ("settings", fmt(settings) if settings else unknown),
            ("schema version", fmt(meta.get("schema_version"))), ("vectrixdb version", fmt(meta.get("vectrixdb"))),
            ("host", first("host"))]


def chunking_view(report) -> dict[str, Any]:
    """The Chunking tab's tables: techniques (best build, found, answered right, tie), cost, skipped."""
    techniques = [{"name": t["name"], "build": f"{t['chunk_size']} chars{' + heading' if t.get('embed_heading') else ''}",
                   "found": f"{t['found']} / {t['of']}", "right": f"{t['right']} / {t['of']}",
                   "chunks": t.get("chunks"), "p": fmt(t.get("p_value")), "tie": t.get("tie"),
                   "best": i == 0} for i, t in enumerate(report.get("techniques") or [])]
    cost = report.get("cost") or {}
    seconds = cost.get("seconds") or {}
    cost_rows = [(k.replace("_", " "), fmt(v)) for k, v in cost.items() if k != "seconds"]
    cost_rows += [(f"seconds {k}", fmt(v)) for k, v in seconds.items()]
    if report.get("model"):
        cost_rows.append(("model", fmt(report["model"])))
    return {"techniques": techniques, "cost": cost_rows, "skipped": report.get("skipped") or [],
            "decided_by": report.get("decided_by"), "budget": report.get("budget"), "alpha": report.get("alpha")}


def kind_view(report) -> dict[str, Any]:
    """What the run page (and the offline copy) adds for the run's kind: `graded` (lead with grade
    and SLA, its declaration), and from how it is shown (present/shows.py) `section` (a template)
    with its `view`, and `tables` (the
    kind's certificate tables, shown on the page when it has no section of its own)."""
    from vectrixdb.present import shows

    kind = KINDS[report.kind]
    shown = shows.of(kind)
    view = call(shown.view, report) if shown.view else None
    tables = call(shown.certificate, report) if shown.certificate and not shown.section else []
    return {"graded": kind.graded, "section": shown.section, "view": view, "tables": tables}
