"""compare_chunking: the six techniques handed the same number of characters, with exact tests.

A sweep ranks builds by where the right chunk landed, which favours small chunks (more of them fit
in a top 10). Here every build hands over its best hits for each question, best first, until
`budget` characters are spent (the last one cut to fit), and a question is *found* when the row's
evidence quotes are all in the handed text (a quote cut across two handed chunks counts when both
were handed: handed spans that touch are joined before looking), or, for a row without evidence,
when a page (or document) it expects is among the handed text. What each build handed each question,
and where the evidence lies in it, is kept as `report["handed"]` (evaluation/chunking/handed.py:
references, and each handed character once), so a saved run's question page can show it.

Plan: the registered techniques that need no option of their own (chunking.plain: the six built-in,
in the registry's order, and any registered from outside) x three sizes (500, 1,000, 2,000;
parent-child's small chunks 250, 500, 1,000) x heading path embedded or not = 36 builds, overlap a fifth of the size. Each technique is
ranked by its best build (more found; equal counts go to fewer chunks). Each pair of techniques'
best builds gets an exact McNemar test on the questions only one of them found; a technique whose
gap to the best could be luck (p >= alpha) is marked a tie.

With a model (chat=, or CompareConfig's answer= and judge=; evaluation/generation/reader.py), each build's
handed characters are all the answer may be written from, the answer is judged for correctness
against the golden reference, and *answered right* decides the ranking and the exact tests; found
is kept beside it, and the model's calls, tokens, cost and unscorable outcomes are in
`report["model"]`; `report["verdicts"]` holds every answer with its score and the judge's reason, one
row per build and question, to read the verdicts that decided. Unscorable answers are counted per build; when none was scorable, `best` is
None with the reason (evaluation/chunking/models.py). Ties in the ranking go to fewer chunks, then the plan's order.

Cost: every build is chunked first, then the distinct texts of all 36 builds are embedded in one
batch (through the cache), so overlapping builds never embed a text twice; search is an exact
cosine over each build's matrix, in memory. The model-backed builds (LLM cuts, contextual notes,
late chunking) are in evaluation/chunking/models.py; what was not built is under `skipped`, with why.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from vectrixdb.errors import BadInput, BadType
from vectrixdb.evaluation.chunking.config import DEFAULT_COMPARE, MOVED, CompareConfig
from vectrixdb.evaluation.golden.questions import Question, split_label
from vectrixdb.evaluation.golden.labels import normal
from vectrixdb.evaluation.chunking.builds import Build
from vectrixdb.evaluation.chunking.handed import record, regions
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.roles import ChatModel, Embedder, EmbeddingModel, Questions
from vectrixdb.settings import moved

SIZES = (500, 1000, 2000)
SMALL_SIZES = {"parent_child": (250, 500, 1000)}


def __getattr__(name: str) -> Any:
    if name == "TECHNIQUES":  # the old constant, now read from the registry (chunking.plain)
        from vectrixdb.chunking import plain

        return tuple(plain())
    raise AttributeError(name)


def collections_of(documents: Any) -> dict[str, list]:
    from vectrixdb.evaluation.retrieval.sweep import read_documents

    if isinstance(documents, dict) and documents and all(isinstance(v, dict) for v in documents.values()):
        return {name: read_documents(docs) for name, docs in documents.items()}
    return {"default": read_documents(documents)}


@moved("compare_chunking", MOVED)
def compare_chunking(documents: Any, golden: Questions, *, budget: int = 6000, techniques: Sequence[str] | None = None,
                     sizes: Sequence[int] | dict | None = None, headings: Sequence[bool] | None = None,
                     chat: ChatModel | None = None, save_to: str | None = None, progress: bool = True,
                     config: CompareConfig = DEFAULT_COMPARE) -> Report:
    """See the module docstring. budget: the characters each build hands over per question;
    techniques / sizes (a list, or {technique: sizes}) / headings (embed the heading path: [False,
    True]) make the plan; chat: a ChatWriter that answers, judges and makes the model-backed builds;
    config: the rest (CompareConfig: the embedding model, alpha, answer / judge / threshold,
    cut_with / context_with / late, executor, the run's name).

    With a model (chat=, or CompareConfig's answer= and judge=), each build's answer is written from
    the characters it handed over alone and judged against the golden reference: answered right
    decides the ranking and the exact tests, and found is kept beside it. executor="ray" chunks the
    builds and embeds their distinct texts on a Ray cluster (model calls stay here, behind the
    writer's one limiter and cache); the outcomes are the same as local. cut_with, context_with and
    late give (or, with False, refuse) each model-backed build; chat= gives the first two
    (evaluation/chunking/models.py).

    With save_to, the comparison is saved as it goes, like run_evaluation: pending, running (with
    the stage reached), then completed, or failed with the error (raised after it is recorded), so
    a comparison whose process was killed shows as failed (runs.effective_status)."""
    from vectrixdb.evaluation.runs.report import now
    from vectrixdb.evaluation.runs.store import LiveRun

    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise BadInput(f"budget must be a positive number of characters, not {budget!r}")
    if not isinstance(config, CompareConfig):
        raise BadType(f"config is a CompareConfig(alpha=..., late=..., ...), not {type(config).__name__}")
    c = config
    began = now()
    live = LiveRun(save_to, "chunking", c.name) if save_to else None  # name: what list_runs and the dashboard show
    try:
        report = _compare(documents, golden, began, live, budget=budget, techniques=techniques, sizes=sizes,
                          headings=headings, model=c.model, alpha=c.alpha, chat=chat, answer=c.answer, judge=c.judge,
                          threshold=c.threshold, cut_with=c.cut_with, context_with=c.context_with, late=c.late,
                          executor=c.executor, progress=progress)
    except BaseException as exc:
        if live:
            error = f"{type(exc).__name__}: {exc}"
            live.write(Report("chunking", {"best": None, "reason": f"the comparison stopped: {error}"}, None,
                              started=began), "failed", error=error)
        raise
    if live and save_to:  # live only with save_to
        _finish(live, report, save_to)
    return report


def _finish(live: Any, report: Report, folder: str) -> None:
    """The completed run: its per-question outcomes as questions.csv (as Report.save writes), then report.json."""
    from vectrixdb import io
    from vectrixdb.evaluation.runs.questions_csv import to_csv
    from vectrixdb.evaluation.runs.report import kind_of

    per_question = report.tables.get(kind_of("chunking").questions)
    if per_question is not None:  # text cells guarded against spreadsheet formulas (runs/questions_csv.py)
        io.write_new(io.join(folder, kind_of("chunking").folder, "runs", live.run_id, "questions.csv"),
                     to_csv(per_question))
    live.write(report, "completed")


def _compare(documents: Any, golden: Any, began: float, live: Any, *, budget: int, techniques, sizes, headings,
             model: Any, alpha: float, chat: Any, answer: Any, judge: Any, threshold: float, cut_with: Any,
             context_with: Any, late: Any, executor: str, progress: bool) -> Report:
    from vectrixdb.chunking import get_chunker, plain
    from vectrixdb.embedding import get_embedder
    from vectrixdb.evaluation.golden.questions import provenance
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.chunking.models import answered, model_builds, plan_model_builds, unscored_values
    from vectrixdb.executors import embed_corpus

    started = time.perf_counter()
    asked = questions_of(golden)
    meta = provenance(golden, asked)
    questions = [q for q in asked if q.labelled]
    answer, judge = (answer or chat), (judge or chat)
    if (answer is None) != (judge is None):
        raise BadInput("answered right needs both a way to answer and a judge: chat=, or answer= and judge=")
    techniques = list(techniques or plain())  # every registered technique that needs no option of its own
    for t in techniques:
        get_chunker(t)
    headings = list(headings) if headings is not None else [False, True]
    collections = collections_of(documents)
    assigned = _assign(questions, collections)
    stage = (lambda what: live.write(Report("chunking", {"best": None, "questions": len(assigned), "stage": what},
                                            None, started=began, meta=meta), "running")) if live else (lambda what: None)
    if not assigned:
        return Report("chunking", {"best": None, "techniques": [], "questions": 0, "reason": "no labelled question "
                                   "names a document these collections hold"}, None, started=began, meta=meta)
    embedder = get_embedder(model)
    meta["embedding_model"] = getattr(embedder, "name", str(model))
    embedded_before, reused_before = getattr(embedder, "embedded", 0), getattr(embedder, "reused", 0)
    plan = [(t, size, h) for t in techniques for size in _sizes(t, sizes) for h in headings]
    stage("chunking")
    builds = make_builds(collections, plan, embedder, progress, executor, model)
    give, skipped = plan_model_builds(chat, cut_with, context_with, late, embedder)
    extra, refused, model_costs = model_builds(collections, give, techniques, sorted({s for t in techniques
                                                                                     for s in _sizes(t, sizes)}),
                                               headings, embedder, progress)
    builds += extra
    skipped += refused
    chunked = time.perf_counter() - started
    unique = list(dict.fromkeys(t for b in builds if b.vectors is None for texts in b.texts.values() for t in texts))
    index = {t: i for i, t in enumerate(unique)}
    start = time.perf_counter()
    stage("embedding")
    vectors = embed_corpus(unique, embedder, executor=executor, progress=progress)
    embed_s = time.perf_counter() - start
    embedded_texts = getattr(embedder, "embedded", 0) - embedded_before
    reused_texts = getattr(embedder, "reused", 0) - reused_before
    qvecs = embedder.encode([q.question for q, _ in assigned])
    outcomes, handed = {}, {}
    for b in builds:
        matrices = b.vectors or {name: vectors[[index[t] for t in texts]] for name, texts in b.texts.items()}
        key = (b.technique, b.size, b.heading)
        handed[key] = [_hand_over(matrices[name] @ qv, b.spans[name], budget) for (q, name), qv in zip(assigned, qvecs)]
        outcomes[key] = [_found(q, collections[name], h) for (q, name), h in zip(assigned, handed[key])]
    found, scored, model_cost, answers = outcomes, None, None, None
    if answer is not None:
        stage("answering")
        outcomes, scored, model_cost, answers = answered(builds, handed, assigned, collections, answer, judge,
                                                         threshold, progress)
    ranked = builds if scored is None else [b for b in builds if any(scored[_key(b)])]
    if ranked:
        values = _rank(ranked, outcomes, assigned, alpha, found, scored)
        values["decided_by"] = "answered right" if answer is not None else "found"
    else:  # the model gave no scorable answer at all: nothing decides, and the report says why
        values = {"best": None, "techniques": [], "pairs": {}, "alpha": alpha, "decided_by": None}
    if scored is not None and model_cost is not None:  # answered() gives both
        values.update(unscored_values(builds, scored, model_cost, ranked))
    if model_cost is not None:
        values["model"] = model_cost
        values["verdicts"] = answers
    values["handed"] = record({b.label: handed[_key(b)] for b in builds}, {b.label: found[_key(b)] for b in builds},
                              assigned, collections)
    values.update({"questions": len(assigned), "unassigned": len(questions) - len(assigned), "budget": budget,
                   "skipped": skipped, "model_builds": model_costs, "cost": {
                       "builds": len(builds), "chunks_made": sum(b.chunks for b in builds),
                       "unique_texts": len(unique), "texts_embedded": embedded_texts, "texts_reused": reused_texts,
                       "questions_embedded": getattr(embedder, "embedded", 0) - embedded_before - embedded_texts,
                       "note": "texts_embedded counts distinct chunk texts the model ran on (the rest came from the "
                               "cache or repeated within the builds); the semantic chunker's sentences are embedded "
                               "inside its chunking cells, through the same cache, and are not counted here",
                       "seconds": {"chunking": chunked, "embedding": embed_s, "total": time.perf_counter() - started}}})
    import pandas as pd

    frame = pd.DataFrame([{"technique": b.technique, "chunk_size": b.size, "embed_heading": b.heading,
                           "found": sum(found[_key(b)]), "chunks": b.chunks,
                           **({"right": sum(outcomes[_key(b)]), "scored": sum(scored[_key(b)]),
                               "unscored": len(scored[_key(b)]) - sum(scored[_key(b)])} if scored is not None else {})}
                          for b in builds])
    frame["found_share"] = frame["found"] / len(assigned)
    if answer is not None:
        frame["right_share"] = frame["right"] / len(assigned)
    per_question = pd.DataFrame({f"{t}/{s}/{'heading' if h else 'plain'}": v for (t, s, h), v in outcomes.items()},
                                index=pd.Index([q.key() for q, _ in assigned], name="id"))
    return Report("chunking", values, frame, tables={"outcomes": per_question}, started=began, meta=meta)


def _key(b: Build) -> tuple[str, int, bool]:
    return (b.technique, b.size, b.heading)


def make_builds(collections: dict[str, list], plan: list[tuple[str, int, bool]], embedder: Embedder,
                progress: bool = False, executor: str = "local", model: EmbeddingModel = None) -> list[Build]:
    """Chunk every build of the plan: what each chunk hands over and what the embedder sees.
    Each build is a cell (vectrixdb.executors), so builds spread over Ray and are never chunked twice;
    the technique's registered function is part of its key (code_identity.py), so an edited chunker
    of your own, re-registered, is chunked again."""
    from vectrixdb.chunking import get_chunker
    from vectrixdb.evaluation.retrieval.sweep import document_digest
    from vectrixdb.executors import Cell, portable, run_cells

    digests = (*(document_digest(docs) for docs in collections.values()), str(getattr(embedder, "name", embedder)))
    cells = [Cell(chunk_cell, {"technique": t, "size": size, "heading": h, "collections": list(collections)},
                  (collections, portable(embedder)), digests, code=(get_chunker(t),)) for t, size, h in plan]
    built = run_cells(cells, executor, progress=progress, desc="chunking builds")
    return [Build(t, size, h, {name: [tuple(x) for x in spans] for name, spans in got["spans"].items()}, got["texts"],
                  got["chunks"]) for (t, size, h), got in zip(plan, built)]


def chunk_cell(settings: dict, collections: dict[str, list], model: EmbeddingModel) -> dict:
    """One build's chunks: per collection, the span each chunk hands over and what the embedder sees."""
    from vectrixdb.chunking import chunk_document
    from vectrixdb.embedding import get_embedder
    from vectrixdb.ingest import embed_text

    embedder = get_embedder(model)
    out: dict[str, Any] = {"spans": {}, "texts": {}, "chunks": 0}
    for name, docs in collections.items():
        spans, texts = [], []
        for d, doc in enumerate(docs):
            for c in chunk_document(doc, settings["technique"], chunk_size=settings["size"], embedder=embedder):
                handed = c.parent or c
                spans.append([d, handed.start, handed.end])
                texts.append(embed_text(c, settings["heading"]))
        out["spans"][name], out["texts"][name] = spans, texts
        out["chunks"] += len(spans)
    return out


def _sizes(technique: str, sizes) -> Sequence[int]:
    if isinstance(sizes, dict):
        return sizes.get(technique) or SMALL_SIZES.get(technique, SIZES)
    if sizes is not None:
        return sizes
    return SMALL_SIZES.get(technique, SIZES)


def _assign(questions: list[Question], collections: dict[str, list]) -> list[tuple[Question, str]]:
    """Each question goes to the collection that holds its documents."""
    held = {name: {d.doc_id for d in docs} for name, docs in collections.items()}
    out = []
    for q in questions:
        name = next((n for n, ids in held.items() if set(q.documents) & ids), None)
        if name is not None:
            out.append((q, name))
    return out


def _hand_over(scores: np.ndarray, spans: list[tuple[int, int, int]], budget: int) -> list[tuple[int, int, int]]:
    """The best spans until `budget` characters are handed (the last cut to fit); parents once."""
    handed, seen, left = [], set(), budget
    for i in np.argsort(-scores, kind="stable"):
        span = spans[i]
        if span in seen:
            continue
        seen.add(span)
        d, a, b = span
        take = min(b - a, left)
        handed.append((d, a, a + take))
        left -= take
        if left <= 0:
            break
    return handed


def _found(q: Question, docs: list, handed: list[tuple[int, int, int]]) -> bool:
    if q.evidence:
        texts = [normal(docs[d].markdown[a:b]) for d, a, b in regions(docs, handed)]
        return all(any(normal(quote) in t for t in texts) for quote in q.evidence)
    pages = set(q.pages)
    handed_docs = {docs[d].doc_id for d, _, _ in handed}
    if not pages:
        return bool(handed_docs & set(q.documents))
    for d, a, b in handed:
        doc = docs[d]
        if any((doc.doc_id, p.number) in pages for p in doc.pages if p.start < b and a < p.end):
            return True
    whole = {e for e in q.expected if split_label(e)[1] is None}
    return bool(handed_docs & whole)


def _rank(builds: list[Build], outcomes: dict, assigned: list, alpha: float, found: dict | None = None,
          scored: dict | None = None) -> dict:
    """Each technique's best build (more right, then fewer chunks, then plan order), best first, with
    exact McNemar tests against the best; no timing takes part, so the same inputs give the same verdict."""
    from vectrixdb.evaluation.runs.stats import mcnemar_exact

    best_of: dict[str, Build] = {}
    for b in builds:
        key, cur = (b.technique, b.size, b.heading), best_of.get(b.technique)
        if cur is None or (sum(outcomes[key]), -b.chunks) > (sum(outcomes[(cur.technique, cur.size, cur.heading)]), -cur.chunks):
            best_of[b.technique] = b
    order = sorted(best_of.values(), key=lambda b: (-sum(outcomes[(b.technique, b.size, b.heading)]), b.chunks))
    top = order[0]
    got = {b.technique: outcomes[(b.technique, b.size, b.heading)] for b in order}
    pairs = {a.technique: {b.technique: (1.0 if a is b else mcnemar_exact(got[a.technique], got[b.technique])["p_value"])
                           for b in order} for a in order}
    rows = []
    for b in order:
        p = pairs[top.technique][b.technique]
        rows.append({"name": b.technique, "right": sum(got[b.technique]),
                     "found": sum((found or outcomes)[(b.technique, b.size, b.heading)]), "of": len(assigned),
                     "chunk_size": b.size,
                     "embed_heading": b.heading, "chunks": b.chunks, "p_value": None if b is top else p,
                     "tie": b is not top and p >= alpha,
                     **({"unscored": len(scored[_key(b)]) - sum(scored[_key(b)])} if scored is not None else {})})
    return {"best": rows[0], "techniques": rows, "pairs": pairs, "alpha": alpha}
