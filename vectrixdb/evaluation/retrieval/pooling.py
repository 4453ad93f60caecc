"""pool: the results nobody judged, from several runs, for a person to judge first what matters most.

TREC builds its judgements by pooling (Voorhees & Harman, "TREC", 2005): the top `depth` results
of every run are merged and each result not yet judged is put in front of an assessor. Here a
result is judged when one of the question's labels names it at the pool's grain, relevant or of
grade 0 (judged not relevant, the golden format's `{"a.pdf#page=3": 0}`); at by="page" a page of
a document the row labels as a whole is judged too. Everything else in any run's top `depth` is
pooled, with the runs that found it and their ranks, ordered by how many runs found it (more
first), then by its best rank, then by question, so judging from the top covers first what moves
the most measures.

A run is a retrieval Report (its frame's `retrieved` ids, read to the largest k it kept), a
retriever (a Vectrix, a principal's view or a callable `query -> results`, searched here to
`depth`), or {question key: ranked ids at the grain}. At by="page" a chunk's pages come from its
hit, or from `collection` for bare chunk ids.

`review_rows(report, questions, db)` are the pooled rows as LabelReview takes them
(widgets.pool_review draws them); `merge(review, questions)` turns its decisions into graded labels (accepted ones grade 1, the others of an accepted or
rejected row grade 0, undecided rows unchanged). `draft_rows` writes the pooled labels as draft
rows (grade 1 each, `draft: true`) for anyone who edits the file by hand.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden import labels as L
from vectrixdb.evaluation.golden.grain import CHUNK, DOC, PAGE, Grain, grain_of
from vectrixdb.evaluation.golden.questions import Question, label_document, provenance, split_label
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.runs.report import Report, now
from vectrixdb.roles import Collection, Questions

DEPTH = 10
POOLED = (DOC, PAGE, CHUNK)  # the grains whose labels name results


def pool(runs: Mapping[str, Any], questions: Questions, *, depth: int = DEPTH, by: str | Grain | None = None,
         collection: Collection | None = None) -> Report:
    """The unjudged results in the top `depth` of each run, one row per (question, result):
    `found_by` (run names, best rank first), `runs` (how many), `best_rank` and `ranks`. `by`: the
    grain; when not given, that of the first saved report among the runs, else the one the labels
    ask for (scoring.grain_of)."""
    import pandas as pd

    started = now()
    if by is None:
        reports = [run for run in (runs.values() if isinstance(runs, Mapping) else []) if isinstance(run, Report)]
        by = reports[0].get("by") if reports else None
        by = by if by is not None else grain_of(questions_of(questions, collection))[0]
    grain = Grain.of(by, POOLED, who="pool judges")
    if not isinstance(runs, Mapping) or not runs:
        raise BadInput("runs: give {name: run} with at least one run (a retrieval Report, a retriever, or "
                       "{question key: ranked ids})")
    depth = int(depth)
    if depth < 1:
        raise BadInput(f"depth counts results from 1, not {depth}")
    golden, questions = questions, questions_of(questions, collection)
    inputs = provenance(golden, questions, collection)
    warnings: list[str] = []
    found: dict[tuple[str, str], dict[str, int]] = {}
    contributed = {}
    for name, run in runs.items():
        ranked = _ranked(str(name), run, questions, depth, grain, collection, warnings)
        mine = 0
        for q in questions:
            judged = grain.judges(q)
            for rank, label in enumerate(ranked.get(q.key(), [])[:depth], 1):
                if not judged(label):
                    ranks = found.setdefault((q.key(), label), {})
                    mine += not ranks
                    ranks.setdefault(str(name), rank)
        contributed[str(name)] = mine
    order = {q.key(): i for i, q in enumerate(questions)}
    text = {q.key(): q.question for q in questions}
    rows: list[dict[str, Any]] = [{"id": key, "question": text[key], "label": label,
             "found_by": sorted(ranks, key=lambda run: ranks[run]), "runs": len(ranks), "best_rank": min(ranks.values()),
             "ranks": dict(sorted(ranks.items(), key=lambda kv: kv[1]))}
            for (key, label), ranks in found.items()]
    rows.sort(key=lambda r: (-r["runs"], r["best_rank"], order[r["id"]], r["label"]))
    columns = ["id", "question", "label", "found_by", "runs", "best_rank", "ranks"]
    frame = pd.DataFrame(rows, columns=columns)
    values = {"by": grain.name, "depth": depth, "runs": list(contributed), "questions": len(questions),
              "pooled": len(rows), "pooled_questions": len({r["id"] for r in rows}), "first_found": contributed,
              "order": "found by more runs first, then best rank, then question order",
              "warnings": warnings}
    return Report("pool", values, frame, started=started, meta=inputs)


def _ranked(name: str, run: Any, questions: list[Question], depth: int, grain: Grain, collection: Any,
            warnings: list[str]) -> dict[str, list[str]]:
    """{question key: ranked labels at the grain} of one run."""
    if isinstance(run, Report):
        if run.kind != "retrieval" or run.frame is None:
            raise BadInput(f"run {name!r}: a {run.kind} report without a per-question frame cannot be pooled; give a "
                           "retrieval report")
        if not grain.pools(run["by"]):
            raise BadInput(f"run {name!r} was judged by={run['by']!r}; pool it by={run['by']!r} or rerun it "
                           f"by={grain.name!r}")
        kept = run.get("retrieved_depth") or max(run["k"])  # runs saved before kept their largest k only
        if kept < depth:
            warnings.append(f"run {name!r} kept its top {kept} only, not {depth}: pooled to {kept}")
        results = {key: [L.as_result(x, i + 1) for i, x in enumerate(_ids(ids))]
                   for key, ids in run.frame["retrieved"].items()}
    elif isinstance(run, Mapping):
        results = {str(key): [L.as_result(x, i + 1) for i, x in enumerate(ids)] for key, ids in run.items()}
    else:
        from vectrixdb.evaluation.retrieval.scoring import _is_collection, _retriever

        search = _retriever(run, {})
        collection = collection if collection is not None else run if _is_collection(run) else None
        results = {q.key(): L.distinct([L.as_result(x, i + 1) for i, x in
                                        enumerate(search(q.question, grain.search_depth(depth)))])[0]
                   for q in questions}
    if grain.names_pages and collection is not None:
        keys = list(results)
        results = dict(zip(keys, L.with_pages([results[k] for k in keys], collection)))
    out = {key: grain.ids(res) for key, res in results.items()}
    if grain.names_pages and any(res and not labels for res, labels in zip(results.values(), out.values())):
        warnings.append(f"run {name!r}: some results name no page and are not pooled by='page'; give the collection "
                        "(collection=db) so chunk ids take their pages")
    return out


def _ids(ids: Any) -> list:
    """A frame's ranked ids; a table read back from questions.csv holds them as a list's text (with
    the spreadsheet guard undone here too, when it was read by pandas alone: runs/questions_csv.py)."""
    import ast

    from vectrixdb.evaluation.runs.questions_csv import unguard

    return list(ast.literal_eval(unguard(ids))) if isinstance(ids, str) else list(ids)


def review_rows(report: Report, questions: Questions, db: Collection | None = None) -> list[dict]:
    """The pooled results as LabelReview rows (one per question, its pooled labels in pool order;
    `score` is the share of the runs that found each; `text` the page, chunk or document opening
    from `db` when given)."""
    by_key = {q.key(): q for q in questions_of(questions, db)}
    n_runs = max(len(report["runs"]), 1)
    rows: dict[str, dict] = {}
    for r in report.frame.to_dict("records"):
        row = rows.setdefault(r["id"], {"key": r["id"], "question": by_key[r["id"]], "suggestions": []})
        doc, page = split_label(r["label"])
        row["suggestions"].append({"label": r["label"], "pages": (page,) if page else (), "score": r["runs"] / n_runs,
                                   "text": _text(db, r["label"]) if db is not None else ""})
    return list(rows.values())


def _text(db: Any, label: str) -> str:
    doc, page = split_label(label)
    if "::" in doc and label not in {d["doc_id"] for d in db.documents()}:
        from vectrixdb.evaluation.golden.label_check import chunks_of

        return next((c["text"] for c in chunks_of(db, [label_document(doc)]) if c["chunk_id"] == doc), "")
    document = db.document(doc)
    if document is None:
        return ""
    if page is None:
        return document.markdown[:1200]
    return next((document.markdown[p.start:p.end] for p in document.pages if p.number == page), "")


def merge(widget: Any, questions: Questions) -> list[Question]:
    """Questions with a review's decisions added as graded labels: the labels a person kept grade
    1, the row's other pooled labels grade 0 (judged not relevant); a rejected row grades all of
    them 0; an undecided row adds nothing. A label the row already grades keeps its grade."""
    decided = {widget.rows[i]["key"]: (kind, labels, widget.rows[i]) for i, (kind, labels) in widget.decisions.items()}
    out = []
    for q in questions_of(questions):
        if q.key() not in decided:
            out.append(q)
            continue
        kind, kept, row = decided[q.key()]
        graded = dict(q.graded())
        for label in [*kept, *(s["label"] for s in row["suggestions"])]:
            graded.setdefault(label, 1.0 if label in kept else 0.0)
        out.append(replace(q, id=q.id or q.key(), expected=tuple(graded), grades=tuple(graded.values()), draft=False))
    return out


def draft_rows(report: Report, questions: Questions) -> list[Question]:
    """Each question with pooled results, its pooled labels added at grade 1 and `draft: true`
    (nobody has judged them yet: check_golden notes drafts, reports warn of them)."""
    pooled: dict[str, list[str]] = {}
    for key, label in zip(report.frame["id"], report.frame["label"]):
        pooled.setdefault(key, []).append(label)
    out = []
    for q in questions_of(questions):
        if q.key() in pooled:
            graded = dict(q.graded())
            for label in pooled[q.key()]:
                graded.setdefault(label, 1.0)
            q = replace(q, id=q.id or q.key(), expected=tuple(graded), grades=tuple(graded.values()), draft=True)
        out.append(q)
    return out
