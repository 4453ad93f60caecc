"""run_evaluation: Vecta's three evaluation types over a whole pipeline, with a saved lifecycle.

`system` is called once per question, and what it returns says what is evaluated:

- `query -> list` (ids, dicts or hits): **Retrieval**. Precision, recall and F1 by set intersection
  at chunk, page and document level over the top k results (labels.levels): documents always,
  pages when the row names pages (a chunk earns credit when any of its pages is expected), chunk
  ids when the row is labelled with them. A string `doc::n` is a chunk of doc, `doc#page=N` a page.
- `query -> str`: **Generation**. Accuracy (the answer against the row's reference) and
  groundedness (no invented facts), each from the judge: a function like answer_report's or a
  ChatWriter asked for JSON `{score, reason}`.
- `query -> (list, str)`: **RAG**, all of the above; groundedness then reads the retrieved texts.

The type is taken from the first answer and checked on every call: a system that changes what it
returns is an error naming the question. Per question the frame keeps what was retrieved against
what was expected at each level, what matched and what was missed, P/R/F1, the returned passages
(rank, chunk, document, pages, score and their first 300 characters), the answer against the
expected one, each score with the judge's reason and outcome (ok, parse_failed, ...). An
unscorable judgement is counted, never averaged in.

With save_to, the run is saved under evaluations/runs/<id>/ as it goes: pending, then running with
the questions reached so far, then completed, or failed with the error (the exception is raised
after it is recorded). report.json is written three times (pending, running after the
first question, the end); each question in between is one line appended to the run's progress
log (evaluation/runs/progress.py), so saving costs the same per question however long the run is, and
a run killed half way loads with every question it fully recorded (progress_report).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden import labels as L
from vectrixdb.evaluation.generation.answers import judge_name, model_delta, model_totals, judge_items, summarize
from vectrixdb.evaluation.golden.questions import Question, asked_text, last_turn_only, provenance, query_rule, split_label
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.generation.judges import GENERATION_METRICS
from vectrixdb.evaluation.runs.report import SET_FIGURES, Report, now, set_name, set_names_at
from vectrixdb.roles import Collection, Judge, Questions

TYPES = {"retrieval": "Retrieval", "generation": "Generation", "rag": "RAG"}
PASSAGE_CHARS = 300  # how much of each returned passage a run keeps for its drill-down


def type_of(returned: Any) -> str:
    """retrieval, generation or rag, from what a system returned; BadInput when it is none of them."""
    if isinstance(returned, str):
        return "generation"
    if isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], str) \
            and isinstance(returned[0], (list, tuple)):
        return "rag"
    if isinstance(returned, (list, tuple)):
        return "retrieval"
    raise BadInput(f"a system returns a list of ids (retrieval), a str (an answer) or (list, str) (both), "
                   f"not {type(returned).__name__}")


def run_evaluation(system: Callable[[str], Any], questions: Questions, *, judge: Judge | None = None, k: int = 10,
                   save_to: str | None = None, name: str | None = None, confidence: float = 0.95,
                   executor: str = "local", collection: Collection | None = None,
                   query: Callable[[Question], str] | None = None) -> Report:
    """Evaluate `system` on the questions (a golden path or Questions); see the module docstring.

    `collection`: where a system that returns bare chunk ids (Vecta's `query -> list[str]`) takes
    their pages and text from, so page figures are scored; without it, a question none of whose
    results names a page has its page figures undefined (with the reason in the warnings), never 0.

    executor="ray" (or a Ray address) calls the system for all questions on a Ray cluster, once
    each (it must pickle; a system is not a pure function of its settings, so its answers are not
    kept between runs); judging stays here, through the one judge and its limiter and cache.

    `query`: what the system is asked for each question, as retrieval_report takes it (a
    conversation's last user turn by default); every text is written before the first call, and the
    rule is report["query"]. The judge still reads the question with its earlier turns."""
    from vectrixdb.evaluation.runs.store import LiveRun
    from vectrixdb.executors import Cell, check_executor, run_cells

    started = now()
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise BadInput(f"k must be a positive whole number, not {k!r}")
    rule = query_rule(query)  # a query= that is not a function is refused before anything is read
    golden, questions = questions, questions_of(questions)
    texts = [asked_text(q, query) for q in questions]
    inputs = provenance(golden, questions)
    live = LiveRun(save_to, "evaluation", name) if save_to else None
    state: dict[str, Any] = {"kind": None, "rows": [], "judged": [], "collection": collection, "query": rule,
                             "talks": last_turn_only(questions, query)}
    before = model_totals(judge)
    try:
        check_executor(executor)
        answers = None
        if executor != "local":
            cells = [Cell(_call, {}, (system, text), (q.key(),), keep=False) for q, text in zip(questions, texts)]
            answers = run_cells(cells, executor, desc="questions")
        for i, q in enumerate(questions):
            judged = len(state["judged"])
            _one(q, system(texts[i]) if answers is None else answers[i], judge, k, state)
            if query is not None:  # what the system was asked, beside the question (the frame's query column)
                state["rows"][-1]["query"] = texts[i]
            if live:  # one line per question; report.json itself only once, after the first
                live.append({"row": state["rows"][-1], "judged": state["judged"][-1] if len(state["judged"]) > judged
                             else None})
                if i == 0:
                    running = _report(state, questions, judge, before, k, name, started, confidence, inputs)
                    running["confidence"] = confidence
                    live.write(running, "running")
        report = _report(state, questions, judge, before, k, name, started, confidence, inputs)
        if live:
            live.write(report, "completed")
        return report
    except BaseException as exc:
        if live:
            partial = _report(state, questions, judge, before, k, name, started, confidence, inputs)
            live.write(partial, "failed", error=f"{type(exc).__name__}: {exc}")
        raise


def _call(settings: dict, system: Callable[[str], Any], question: str) -> Any:
    """One question on a worker: what the system returned, hits made plain so they travel."""
    returned = system(question)
    plain = lambda items: [r.to_dict() if hasattr(r, "to_dict") else r for r in items]  # noqa: E731
    if isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[0], (list, tuple)):
        return (plain(returned[0]), returned[1])
    return plain(returned) if isinstance(returned, (list, tuple)) else returned


def _one(q: Question, returned: Any, judge: Any, k: int, state: dict) -> None:
    kind = type_of(returned)
    if state["kind"] is None:
        state["kind"] = kind
        if kind != "retrieval" and judge is None:
            raise BadInput(f"the system answers questions ({TYPES[kind]}), so judge= is needed to score them: a "
                           "function (metric, question, reference, answer, sources) -> 0..1 or a ChatWriter")
    elif kind != state["kind"]:
        raise BadInput(f"question {q.key()!r}: the system returned {TYPES[kind]} output, but returned "
                       f"{TYPES[state['kind']]} output before; it must return the same kind every time")
    retrieved, answer = (returned, None) if kind == "retrieval" else (None, returned) if kind == "generation" \
        else returned
    row: dict[str, Any] = {"id": q.key(), "question": q.question}
    sources: list = []
    if retrieved is not None:
        results = [L.as_result(r, i + 1) for i, r in enumerate(retrieved)][:k]
        if state.get("collection") is not None:
            results = L.with_pages([results], state["collection"])[0]
        row.update(_retrieval_detail(q, results, k))
        row["passages"] = [_passage(r, rank) for rank, r in enumerate(results, start=1)]
        sources = [r.text or r.chunk_id for r in results]
    if answer is not None:
        row.update({"answer": answer, "expected_answer": q.reference})
        got = judge_items(judge, [{"key": q.key(), "question": q.question, "reference": q.reference,
                                   "answer": answer, "sources": sources, "turns": list(q.turns)}],
                          GENERATION_METRICS)[0]
        state["judged"].append(got)
        row.update({key: value for key, value in got.items() if key not in ("id", "_outcomes")})
    state["rows"].append(row)


def _passage(result: Any, rank: int) -> dict[str, Any]:
    """What the drill-down shows of one returned result: where it is from and how it begins."""
    text = result.text or ""
    return {"rank": rank, "chunk_id": result.chunk_id, "doc_id": result.doc_id, "pages": list(result.pages),
            "score": result.score, "text": text if len(text) <= PASSAGE_CHARS else text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"}


def _retrieval_detail(q: Question, results: list, k: int) -> dict[str, Any]:
    """Expected, retrieved, matched and missed at each level, with that level's P/R/F1 at k
    (`page_f1@10`: a set figure names the k it was read at)."""
    levels = L.levels(q, results) if q.labelled else {"doc": None, "page": None, "chunk": None}
    if levels["page"] is not None and results and not any(r.pages for r in results):
        levels["page"] = None  # no result names a page: nothing to score pages by (PAGELESS), not 0
    relevant = [label for label, grade in q.graded() if grade > 0]
    chunks = {label for label in relevant if "::" in label}
    docs = {c.rsplit("::", 1)[0] for c in chunks} | {split_label(label)[0] for label in relevant if label not in chunks}
    pages = {label for label in relevant if split_label(label)[1] is not None}
    got = {"chunk": [r.chunk_id for r in results], "doc": list(dict.fromkeys(r.doc_id for r in results)),
           "page": list(dict.fromkeys(f"{r.doc_id}#page={p}" for r in results for p in r.pages))}
    want = {"chunk": sorted(chunks), "doc": sorted(docs), "page": sorted(pages)}
    out: dict[str, Any] = {}
    if levels["page"] is None and pages and results:  # a note, not a figure: compare_runs and heat skip text
        out["page note"] = "page figures undefined: no result names a page"
    for level in ("chunk", "page", "doc"):
        out[f"{level} expected"] = want[level]
        out[f"{level} retrieved"] = got[level]
        out[f"{level} matched"] = [x for x in got[level] if x in set(want[level])]
        out[f"{level} missed"] = [x for x in want[level] if x not in set(got[level])]
        for m in ("precision", "recall", "f1"):
            out[set_name(level, m, k)] = (levels[level] or {}).get(m, float("nan"))
    return out


def _report(state: dict, questions: list, judge: Any, before: dict | None, k: int, name: str | None,
            started: float, confidence: float, inputs: dict) -> Report:
    import pandas as pd

    rows, kind = state["rows"], state["kind"]
    values: dict[str, Any] = {"type": TYPES.get(kind), "name": name, "k": k, "questions": len(rows),
                              "of": len(questions), "query": state["query"], "warnings": list(state["talks"])}
    if kind in ("retrieval", "rag"):
        values["levels"] = {level: _means(rows, level, k) for level in ("doc", "page", "chunk")}
        doc = _doc_cannot_fail(rows, state.get("collection"))
        values["cannot_fail_levels"] = {"doc": doc} if doc else {}
        values["warnings"] += ([f"cannot fail: doc level: {doc}"] if doc else []) + _level_warnings(rows)
    if kind in ("generation", "rag"):
        summary = summarize(state["judged"], GENERATION_METRICS, repeats=1, confidence=confidence)
        values.update({"metrics": summary["metrics"], "ci": summary["ci"], "outcomes": summary["outcomes"],
                       "judge": judge_name(judge), "model": model_delta(judge, before)})
    frame = pd.DataFrame(rows).set_index("id") if rows else None
    report = Report("evaluation", values, frame, started=started, meta=inputs)
    report.meta["duration_s"] = round(time.time() - started, 3)
    return report


PAGELESS = ("their results name no page (bare chunk or document ids): page figures are left undefined, not 0; "
            "give run_evaluation the collection (collection=db) to read each chunk's pages, or return hits or dicts "
            "with pages")


def _doc_cannot_fail(rows: list[dict], collection: Any) -> str | None:
    """Why the document level cannot come out low (values["cannot_fail_levels"]["doc"]; its figures
    are then neither graded, coloured nor held to an SLA, and the other levels still are): every
    question expects every document the collection holds, or, without the collection, one document
    is all that any label or result names (a one-document store). None when it can."""
    labelled = [r for r in rows if r.get("doc expected")]
    if not labelled:
        return None
    if collection is not None:
        held = {d["doc_id"] for d in collection.documents()}
        if held and all(set(r["doc expected"]) >= held for r in labelled):
            return (f"every question expects every document the collection holds ({len(held)}): doc precision, "
                    "recall and F1 are 1 whenever anything is retrieved")
        return None
    named = {d for r in labelled for d in (*r["doc expected"], *r.get("doc retrieved", []))}
    if len(named) == 1:
        return (f"one document ({next(iter(named))}) is all that any label or result names: doc figures cannot tell "
                "a good retriever from a bad one here; judge by page or chunk")
    return None


def _level_warnings(rows: list[dict]) -> list[str]:
    """What left a level undefined for some questions, in words."""
    pageless = sum(1 for r in rows if r.get("page note"))
    return [f"{pageless} of {len(rows)} question(s) expect pages but {PAGELESS}"] if pageless else []


def progress_values(values: dict, records: list[dict], *, intervals: bool = False) -> dict[str, Any]:
    """The values of a run not finished, from its running report.json's values and its progress
    log's records (evaluation/runs/progress.py); bootstrap intervals only when asked (load_run asks)."""
    state = _state(values, records)
    out = {key: values.get(key) for key in ("type", "name", "k", "of", "judge") if key in values}
    out["questions"] = len(state["rows"])
    if state["kind"] in ("retrieval", "rag"):
        out["levels"] = {level: _means(state["rows"], level, values.get("k")) for level in ("doc", "page", "chunk")}
    if state["kind"] in ("generation", "rag"):
        given = values.get("confidence")
        confidence = given if isinstance(given, float) else 0.95
        if intervals:
            summary = summarize(state["judged"], GENERATION_METRICS, repeats=1, confidence=confidence)
            out.update({"metrics": summary["metrics"], "ci": summary["ci"], "outcomes": summary["outcomes"]})
        else:
            out["metrics"] = {m: _mean_of([j.get(m) for j in state["judged"]]) for m in GENERATION_METRICS}
    out["warnings"] = [f"rebuilt from the progress log: {len(state['rows'])} of {values.get('of')} questions were "
                       "recorded; what the model cost is known only when a run ends"] + _level_warnings(state["rows"])
    return out


def progress_report(report: Report, records: list[dict]) -> Report:
    """A run not finished as a Report: the questions its progress log holds, their figures and rows."""
    import pandas as pd

    state = _state(dict(report), records)
    values = progress_values(dict(report), records, intervals=True)
    frame = pd.DataFrame(state["rows"]).set_index("id") if state["rows"] else None
    out = Report("evaluation", values, frame, meta=dict(report.meta))
    return out


def _state(values: dict, records: list[dict]) -> dict[str, Any]:
    """The loop's state again from logged records (null back to NaN where the loop kept NaN)."""
    kind = {v: k for k, v in TYPES.items()}.get(str(values.get("type")))
    rows, judged = [], []
    for record in records:
        row = record.get("row")
        if not isinstance(row, dict) or "id" not in row:
            continue
        renamed = set_names_at(row, values.get("k"))  # a log written before set columns carried k
        rows.append({renamed.get(c, c): (float("nan") if str(renamed.get(c, c)).split("@")[0] in SET_FIGURES and not _real(v)
                                         else v) for c, v in row.items()})
        if isinstance(record.get("judged"), dict):
            judged.append(record["judged"])
    return {"kind": kind, "rows": rows, "judged": judged}


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _mean_of(scores: list) -> float | None:
    kept = [s for s in scores if _real(s)]
    return float(np.mean(kept)) if kept else None


def _means(rows: list[dict], level: str, k: Any) -> dict[str, float] | None:  # k as the run's values hold it
    present = [r for r in rows if not np.isnan(r.get(set_name(level, "f1", k), float("nan")))]
    if not present:
        return None
    return {m: float(np.mean([r[set_name(level, m, k)] for r in present])) for m in ("precision", "recall", "f1")}
