"""retrieval_report and evaluate: how well a retriever finds what your questions expect.

`target` is a Vectrix (its search() is called with the options given), a principal's view, or any
callable `query -> list` of ids, dicts or hits, so a LangChain or LlamaIndex retriever is one
lambda away. Each question is searched once, `depth` deep (100 by default; at by="doc" three
times as many chunks, to fill `depth` distinct documents), and everything is read from that one
ranking: the metrics at each k, the reciprocal rank to `depth` (reported as `mrr`, named
`mrr@<depth>` in the frame; `report["depth"]` says the depth) and, for a miss, the rank where the
first right result came after all.

What a report will not do silently: labels that do not fit the grain (by="page" with no page
labels, by="chunk" on a retriever that returns no chunk ids, by="evidence" with no evidence), a
run in which no retrieved id ever matches an expected one, and draft rows are each said in
`report["warnings"]`; by="chunk" without chunk ids is refused (every metric None, with a reason).
Results without pages: an adapter (a store's, stores.py, or a framework's, adapters.py) that could
not read a result's page says why (`Result.unread`); page figures are then undefined with that
reason, never scored as misses.
Judgement holes: `unjudged@k` (frame, per question; `report["unjudged"]` over all the
questions' top-k results together) is the share of the top k results at the report's grain
that no label judges, neither relevant nor grade 0 (a "miss" there may be a right answer nobody
labelled); `ndcg_judged@k` (condensed nDCG: unjudged results dropped) and `bpref` (to `depth`,
`bpref@<depth>` in the frame) score the judged results only (measures.py has the formulas);
pooling.pool collects the unjudged results of several runs for a person to judge.
Intervals: recall@k, ndcg@k and mrr carry 95% intervals over questions (`report["ci"]`; the rule
is stats.bootstrap_interval's: Wilson with continuity correction for 0/1 figures, a studentized
bootstrap for graded ones, measured to cover), so two setups whose intervals overlap widely are not told apart by these
questions.
Registered measures: `measures=("dcg@10", "rbp@5")` adds any measure the RANKED provider computes
(measures.py declares it, providers.py or its own module gives the kernel), read from the same
judged rankings the built-in figures are: a column per measure in the per-question frame and its
mean in `report["measures"]`. An added measure never changes the other figures: one deeper than
`depth` makes the search deeper, and the built-ins read that ranking cut at `depth` (latency_ms is
the deeper search's). A name no ranked kernel computes, or one that is already a column of the
report (latency_ms, first_right, ...; evaluate's mrr, median_ms, ...), is refused before anything
is searched; no other measure is put in its place.
Conversations: a question that holds earlier turns (Question.turns) is searched, by default, with
its last user turn (`question`), as a question on its own is; `query=` (a function Question -> str:
`Question.conversation` joins the turns, or one may ask a model to condense them) writes the text
searched instead. The rule is `report["query"]`; with `query=` the frame has a `query` column (what
was searched for each question) and each miss its `query`. Conversations searched by their last turn
alone are counted in the warnings.
"""
from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable, Sequence, TypeGuard

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden import labels as L
from vectrixdb.evaluation.golden.grain import Grain, grain_of
from vectrixdb.evaluation.golden.questions import (Question, asked_text, cutoffs, label_document, last_turn_only, provenance,
                                                  query_rule, split_label)
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.golden.label_check import refuse_bad_labels
from vectrixdb.evaluation.retrieval.adapters import search_of, system_of
from vectrixdb.evaluation.retrieval.metrics import Measure, compute, judge
from vectrixdb.evaluation.retrieval.providers import RANKED
from vectrixdb.evaluation.runs.report import Report, now, set_name
from vectrixdb.evaluation.runs.stats import bootstrap_interval
from vectrixdb.roles import Collection, Questions, Reranker, Retriever
from vectrixdb.served import spending
from vectrixdb.search import DEFAULT_MODE

DEPTH = 100
AT_EACH_K = ("recall", "precision", "f1", "ndcg", "hit_rate")  # the families retrieval_report reports at each k
FRAME_COLUMNS = ("id", "question", "grain", "expected", "expected_n", "first_right", "latency_ms", "retrieved",
                 "scores", *[f"{level}_{m}" for level in ("doc", "page", "chunk") for m in ("precision", "recall", "f1")])
EVALUATE_COLUMNS = ("mode", "vectors", "rerank", "median_ms", "p95_ms", "q_per_ms")
HOLES = ("ndcg_judged", "unjudged")  # judgement holes, at each k (bpref is read to depth, as mrr)
WITH_CI = ("recall", "ndcg")


def _searches(target: Any) -> bool:
    """A Vectrix or a principal's view: searched through its own search(), which takes a mode."""
    return hasattr(target, "search") and hasattr(target, "documents")


def _retriever(target: Any, search: dict) -> Callable[[str, int], list]:
    if _searches(target):
        return lambda query, n: target.search(query, n, **search)  # a Vectrix or a principal's view
    if search:
        raise BadInput(f"search options {sorted(search)} only apply to a Vectrix target")
    return search_of(target)  # an outside retriever: a function, LangChain's .invoke, ... (adapters.py)


def retrieval_report(target: Retriever, questions: Questions, k: Sequence[int] | int = (1, 3, 5, 10),
                     by: str | Grain | None = None, *, depth: int = DEPTH, save_to: str | None = None, progress: bool = False,
                     confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0, collection: Collection | None = None,
                     measures: Sequence[str] = (), query: Callable[[Question], str] | None = None,
                     name: str | None = None, **search) -> Report:
    """recall@k, precision@k, f1@k, ndcg@k, hit_rate@k and mrr (reciprocal rank to `depth`) over the
    labelled questions (a golden file's path or Questions), with 95% intervals, a per-question
    frame, the misses, Vecta's set-based levels (in the frame named with the largest k they were
    read at: `doc_precision@10`, `page_f1@10`) and warnings. See labels.py for what counts as
    right at each grain and metrics.py for the definitions.

    `by`: the grain (doc, page, chunk, evidence); when not given, the one the labels ask for
    (grain_of: page when a row names a page), recorded as report["by"] with report["by_from"]. A
    figure that cannot fail (labels finer than the grain, or every question expecting every
    document the collection holds) is listed in report["cannot_fail"] and in the warnings.

    `collection` (the target itself when it is a Vectrix): a retriever that returns bare chunk ids
    takes their pages and text from it, and every label is checked against it. A label that names
    what the collection does not hold exactly (another case, a misspelt page anchor, a page past the
    document's last, an unknown document) stops the report with BadInput listing every such row
    and a did-you-mean, rather than scoring it as a miss; a misspelt `#` anchor stops it even
    without a collection.

    `measures`: registered measures to add by name (`"dcg@10"`, as metric_table names them), each
    read from the same rankings and judgements as the figures above: a frame column per measure and
    `report["measures"][name]`, its mean over the questions where it is defined (a NaN left out, as
    pandas' mean does; None where none is). The search reaches the deepest cut-off asked, but every
    other figure (mrr, bpref, each @k) reads the ranking cut at `depth`, as without the measure; a
    measure without a cut-off reads the ranking to `depth`. A name the ranked provider does not
    compute is refused (BadInput listing those it does), and so is one whose column the report has
    already (FRAME_COLUMNS: rename the family), before anything is searched.

    `query`: a function Question -> the text to search (the module docstring, Conversations); by
    default each question's `question`, its last user turn. Every query is written before the first
    search (latency is the search's alone); one that is not a non-empty string is BadInput naming
    the question.

    `name`: the run's name (report.meta["name"]: what listings, the dashboard and the certificate call
    it), for any target. Whatever the target, report.meta["system"] records what was measured
    (measured()): its adapter and what the adapter says of it."""
    from tqdm.auto import tqdm

    started = now()
    ks = cutoffs(k)
    chosen = Grain.of(by) if by is not None else None
    extra = report_measures(measures, taken=FRAME_COLUMNS)
    depth = max(int(depth), ks[-1])  # the built-ins' depth, whatever `measures` asks for
    deep = max([depth] + [m.k for m in extra if m.k])  # searched to this, for the extra measures
    held = collection if collection is not None else target if _is_collection(target) else None
    golden, questions = questions, questions_of(questions, held)
    inputs = provenance(golden, questions, target) | measured(target, name)
    if _searches(target):
        search = {"mode": DEFAULT_MODE, **search}  # the mode searched is recorded, the default's too
    grain, by_from = (chosen, "asked") if chosen is not None else grain_of(questions)
    scored = [q for q in questions if q.labelled and grain.qrel(q)]
    refuse_bad_labels(scored, held)
    flags = cannot_fail(scored, grain, held)
    values: dict[str, Any] = {"by": grain.name, "by_from": by_from, "cannot_fail": flags, "k": ks, "depth": depth,
                              "questions": len(scored),
                              "unlabelled": len(questions) - len(scored),
                              "search": {key: str(v) for key, v in search.items()},
                              "warnings": [f"cannot fail: {f}" for f in flags] + _label_warnings(scored, grain),
                              "measures": {str(m): None for m in extra},  # None until computed (undefined reports)
                              "query": query_rule(query)}
    values["warnings"] += last_turn_only(scored, query)
    if not scored:
        return _undefined(values, f"no labelled questions to score ({values['unlabelled']} without labels)", started,
                          inputs)
    run = _retriever(target, search)
    _load_model(target, search)
    spent = spending(target, search)  # what served models (embedding, rerank routes) cost this run
    texts = [asked_text(q, query) for q in scored]  # written before any search: latency is the search's
    results, latency = [], []
    for text in tqdm(texts, desc="searching", unit="q", disable=not progress):
        start = time.perf_counter()
        raw = run(text, grain.search_depth(deep))
        latency.append((time.perf_counter() - start) * 1000)
        results.append([L.as_result(r, i + 1) for i, r in enumerate(raw)])
    distinct, repeats = zip(*(L.distinct(res) for res in results))
    results = L.with_pages(list(distinct), held) if held is not None else list(distinct)
    results, notes = _match_file_names(scored, results)
    values["warnings"] += notes + _result_warnings(scored, results, sum(repeats), grain)
    unread = L.unread_pages(results)  # an adapter found no page where it looked (stores.py, adapters.py)
    if unread and any(q.pages for q in scored):
        values["warnings"].append(unread)
        if grain.names_pages:
            return _undefined(values, unread, started, inputs)
    if grain.names_chunks and all(r.chunk_id == r.doc_id for res in results for r in res):
        return _undefined(values, "by='chunk' needs results with chunk ids; this retriever returned document ids only",
                          started, inputs)
    paged = any(r.pages for res in results for r in res) and not unread
    if grain.names_pages and not paged and any(results) and any(q.pages for q in scored):
        return _undefined(values, NEEDS_PAGES, started, inputs)
    ranked = [grain.units(q, res)[:deep] for q, res in zip(scored, results)]
    qrels = [grain.qrel(q) for q in scored]
    judged = judge([r[:depth] for r in ranked], qrels, depth)  # the built-ins read the ranking cut at `depth`
    built_in = [Measure(f, x) for f in (*AT_EACH_K, *HOLES) for x in ks] + [Measure("mrr", depth),
                                                                         Measure("bpref", depth)]
    per_q = compute(judged, built_in)
    if extra:
        deeper = judge(ranked, qrels, deep) if deep > depth else judged
        asked = [m for m in extra if m not in built_in]
        per_q = (compute(deeper, [m for m in asked if m.k]) | compute(judged, [m for m in asked if not m.k])
                 | per_q)  # a measure without a cut-off reads to `depth`
    values["warnings"] += _match_warnings(scored, results, judged, grain)
    for family in AT_EACH_K:
        values[family] = {x: float(per_q[f"{family}@{x}"].mean()) for x in ks}
    values["mrr"] = float(per_q[f"mrr@{depth}"].mean())
    values["ndcg_judged"] = {x: float(per_q[f"ndcg_judged@{x}"].mean()) for x in ks}
    values["bpref"] = float(per_q[f"bpref@{depth}"].mean())
    values["unjudged"] = {x: _unjudged(judged.judged, x) for x in ks}
    values["measures"] = {str(m): _mean_defined(per_q[str(m)]) for m in extra}
    ci = lambda name: bootstrap_interval(per_q[name], confidence, n_resamples, seed)  # noqa: E731
    values["ci"] = {"confidence": confidence, "method": "over questions: Wilson with continuity correction for 0/1 "
                    f"figures, studentized bootstrap ({n_resamples} resamples) for graded ones (stats.bootstrap_interval)",
                    **{f: {x: ci(f"{f}@{x}") for x in ks} for f in WITH_CI}, "mrr": ci(f"mrr@{depth}")}
    values["latency_ms"] = {"median": statistics.median(latency), "p95": float(np.percentile(latency, 95))}
    used = spent()
    if used:
        values["model_usage"] = used
    first = _first_right(judged.found)
    read = [grain.chunks_read(res, ks[-1]) for res in results]
    per_levels = [L.levels(q, chunks) | ({} if paged else {"page": None}) for q, chunks in zip(scored, read)]
    values["misses"] = _misses(scored, results, first, ks[-1], texts if query is not None else None)
    values["levels"] = _mean_levels(per_levels)
    frame = _frame(scored, results, per_q, per_levels, first, latency, grain, ks[-1], depth)
    if query is not None:
        frame.insert(1, "query", texts)
    values["retrieved_depth"] = depth  # the frame's `retrieved` holds each ranking to here (to_trec, pool)
    report = Report("retrieval", values, frame, started=started, meta=inputs)
    if save_to:
        report.save(save_to)
    return report


def report_measures(names: Sequence[str] | str, taken: Sequence[str] = (), exact: bool = False) -> list[Measure]:
    """The registered measures asked for by name (measures.Measure.parse reads `dcg@10`, `mrr`),
    each one the RANKED provider computes, as a report reads judged rankings; any other name is
    refused with the measures a report can compute (never replaced by another measure). A measure
    whose column would be one of the report's own columns (`taken`: latency_ms, first_right, ...;
    evaluate's mrr, median_ms, ...) is refused too, so it never overwrites that column: a family
    named as one of `taken` at any cut-off (a report's level columns carry one: doc_f1@10), or,
    with `exact`, a measure whose whole name is one of them (evaluate's `mrr`, not `mrr@10`)."""
    names = [names] if isinstance(names, str) else list(names)
    can = f"a report computes {sorted(RANKED.kernels)} (at a cut-off, e.g. 'ndcg@10')"
    out = []
    for name in names:
        try:
            measure = Measure.parse(name)
        except BadInput as exc:
            raise BadInput(f"measures={name!r}: {exc}; {can}") from None
        if measure.name not in RANKED.kernels:
            raise BadInput(f"measures={name!r}: {measure.name!r} is declared, but no kernel of the ranked provider "
                           f"(which reads the ranked results a report judges) computes it; {can}; give it one with "
                           f"@RANKED.provides({measure.name!r}) (providers.py)")
        if str(measure) in taken or (measure.name in taken and not exact):
            raise BadInput(f"measures={name!r}: {str(measure)!r} is already a column of this report ({', '.join(taken)}), "
                           f"so it would overwrite it; rename the family {measure.name!r} (measures.py declare)")
        out.append(measure)
    return list(dict.fromkeys(out))


def _mean_defined(values: np.ndarray) -> float | None:
    """The mean of the values that are numbers (NaN: undefined for that question), None when none is."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else None


NEEDS_PAGES = ("page level needs pages: return hits or give the collection (collection=db); the results name no "
               "page, so no page label can be found and page figures are left undefined, not 0")


def _is_collection(target: object) -> TypeGuard[Collection]:
    return hasattr(target, "documents") and hasattr(target, "document") and hasattr(target, "chunks")


def _result_warnings(scored, results, repeats: int, grain: Grain) -> list[str]:
    out = []
    if repeats:
        out.append(f"{repeats} result(s) repeated a chunk already returned for the same question; each chunk is read "
                   "once, at its first rank")
    flat = [r for res in results for r in res]
    bare = sum(not r.pages and not r.unread for r in flat)  # unread pages are said by unread_pages, with why
    if flat and bare and any(q.pages for q in scored) and not (grain.names_pages and bare == len(flat)):
        out.append(NEEDS_PAGES if bare == len(flat) else
                   f"{bare} of {len(flat)} results name no page and earn no page credit; page level needs pages: "
                   "return hits or give the collection")
    if grain.names_quotes and flat and not any(r.text for r in flat):
        out.append("evidence level needs text: return hits or give the collection; no result carries text, so no "
                   "quote can be found")
    return out


def measured(target: Any, name: str | None) -> dict[str, Any]:
    """What a report records of the system it measured, and its name when given: {"system": ...,
    "name": ...}. A Vectrix (or a principal's view) is {"adapter": "vectrixdb", "collection": its name},
    its embedding models being provenance's; any other target is what its adapter describes
    (adapters.system_of: a function's module:qualname, a store's collection or table and embedding model)."""
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise BadInput(f"name= names the run: a non-empty string, not {name!r}")
    if _searches(target):
        collection = getattr(target, "name", None)
        system = {"adapter": "vectrixdb", **({"collection": collection} if isinstance(collection, str) else {})}
    else:
        system = system_of(target)
    return {"system": system, **({"name": name.strip()} if name is not None else {})}


def _load_model(target: Any, search: dict) -> None:
    """Load a store's embedding model before the clock starts: latency is search time, not the
    model's first load (a few seconds once per process)."""
    embedder = getattr(target, "embedder", None)
    if callable(embedder) and search.get("mode", DEFAULT_MODE) != "keyword":
        try:
            getattr(embedder(search.get("vectors") or "default"), "model", None)
        except Exception:  # noqa: BLE001, S110 - an unknown space is search()'s error to give, with its message
            pass


def _undefined(values: dict, reason: str, started: float, inputs: dict) -> Report:
    values.update({f: None for f in (*AT_EACH_K, *HOLES, "mrr", "bpref")})
    values.update({"ci": None, "misses": [], "levels": None, "reason": reason})
    if reason not in values["warnings"]:
        values["warnings"].append(reason)
    return Report("retrieval", values, None, started=started, meta=inputs)


def _relevant(q: Question) -> list[str]:
    return [label for label, grade in q.graded() if grade > 0]


def cannot_fail(scored: Sequence[Question], grain: Grain, held: Any) -> list[str]:
    """Why the report's figures could not come out low whatever the retriever did (empty: they can).

    - Labels finer than the grain: every row names pages or chunks, but by='doc' counts a result of
      the right document as right whatever its page.
    - At by='doc', every question expects every document the collection holds: any ranking of k at
      least that many documents finds them all (a one-document collection scores 1.0 everywhere)."""
    out = []
    if grain.names_documents and scored and all(any(split_label(x)[1] is not None or "::" in x for x in _relevant(q))
                                      for q in scored):
        out.append("every label names a page or chunk, but by='doc' counts the document: a result from the right "
                   "document is right whatever its page; score by='page'")
    if grain.names_documents and scored and held is not None:
        docs = {d["doc_id"] for d in held.documents()}
        if docs and all({label_document(x) for x in _relevant(q)} >= docs for q in scored):
            out.append(f"every question expects every document the collection holds ({len(docs)}): any ranking "
                       f"finds them, so recall and nDCG at k >= {len(docs)} are 1 whatever the retriever does")
    return out


def _label_warnings(scored: list[Question], grain: Grain) -> list[str]:
    drafts = sum(q.draft for q in scored)
    out = [f"{drafts} of {len(scored)} rows are drafts nobody has checked yet; their labels may be wrong"] if drafts else []
    return out + grain.label_warnings(scored)


def _match_file_names(scored: list[Question], results: list[list[L.Result]]) -> tuple[list, list[str]]:
    """Results that name a document by a path (a LangChain `source`) match an expected id by file name."""
    expected = {d for q in scored for d in q.documents}
    renamed: dict[str, str] = {}
    out = []
    for res in results:
        row = []
        for r in res:
            name = os.path.basename(r.doc_id.rstrip("/\\"))
            if r.doc_id not in expected and name != r.doc_id and name in expected:
                renamed.setdefault(r.doc_id, name)
                r = r._replace(doc_id=name)
            row.append(r)
        out.append(row)
    if not renamed:
        return results, []
    path, name = next(iter(renamed.items()))
    return out, [f"{len(renamed)} retrieved document name(s) are paths, matched to expected ids by file name "
                 f"(e.g. {path!r} -> {name!r})"]


def _match_warnings(scored, results, judged, grain: Grain) -> list[str]:
    if judged.found.any() or not any(results):
        return [] if any(results) else ["the retriever returned nothing for every question"]
    got = next(r for res in results for r in res)
    shown = grain.id_of(got)
    return [f"no retrieved result matched any expected label over the whole set: the ids may not be the same names "
            f"(e.g. retrieved {shown!r}, expected {scored[0].expected[0]!r})"]


def _unjudged(held: np.ndarray | None, k: int) -> float | None:
    """The share of all questions' top-k results that no label judges; None when none was returned
    (or the results were not judged with their grade-0 labels)."""
    if held is None:
        return None
    top = held[:, :k]
    returned = int((top >= 0).sum())
    return float((top == 0).sum() / returned) if returned else None


def _first_right(found: np.ndarray) -> list[int | None]:
    rel = found > 0
    return [int(row.argmax()) + 1 if row.any() else None for row in rel]


def _misses(scored, results, first, k: int, asked: list[str] | None = None) -> list[dict]:
    out = []
    for n, (q, res, rank) in enumerate(zip(scored, results, first)):
        if rank is not None and rank <= k:
            continue
        out.append({"id": q.key(), "question": q.question, **({"query": asked[n]} if asked is not None else {}),
                    "expected": list(q.expected),
                    "got": [{"doc_id": r.doc_id, "chunk_id": r.chunk_id, "pages": list(r.pages), "score": r.score,
                             "text": r.text[:200]}
                            for r in res[:3]],
                    "first_right_rank": rank})
    return out


def _mean_levels(rows: list[dict]) -> dict:
    out = {}
    for level in ("doc", "page", "chunk"):
        present = [r[level] for r in rows if r[level] is not None]
        out[level] = ({m: float(np.mean([p[m] for p in present])) for m in ("precision", "recall", "f1")}
                      if present else None)
    return out


def _retrieved(results: list, grain: Grain, k: int) -> dict[str, list]:
    """The ids a question got at its grain (documents at doc grain, at their best chunk's score;
    chunk ids otherwise), the first k (the report's depth: every figure, mrr and bpref included,
    reads the ranking that far, so a TREC export of it reproduces them), with the retriever's
    scores (None where it gave none)."""
    if grain.names_documents:
        best: dict[str, float | None] = {}
        for r in results:
            best.setdefault(r.doc_id, r.score)
        ids = list(best)[:k]
        return {"retrieved": ids, "scores": [best[d] for d in ids]}
    return {"retrieved": [r.chunk_id for r in results[:k]], "scores": [r.score for r in results[:k]]}


def _frame(scored, results, per_q, per_levels, first, latency, grain: Grain, k, depth):
    import pandas as pd

    rows = []
    for n, (q, res) in enumerate(zip(scored, results)):
        level_cols = {set_name(level, m, k): (per_levels[n][level] or {}).get(m, float("nan"))
                      for level in ("doc", "page", "chunk") for m in ("precision", "recall", "f1")}
        rows.append({"id": q.key(), "question": q.question, "grain": grain.at(q).name,
                     "expected": sorted(grain.qrel(q)), "expected_n": len(grain.qrel(q)), "first_right": first[n],
                     "latency_ms": latency[n],
                     **_retrieved(res, grain, depth),
                     **{name: float(v[n]) for name, v in per_q.items()}, **level_cols})
    return pd.DataFrame(rows).set_index("id")


def evaluate(db: Collection, questions: Questions, *, k: Sequence[int] | int = (1, 3, 5, 10),
             by: str | Grain | None = None,
             modes: Sequence[str] = ("dense", "keyword", "hybrid"), rerank: Sequence[Reranker] = (),
             vectors: Sequence[str] | None = None, depth: int = DEPTH, save_to: str | None = None,
             progress: bool = True, measures: Sequence[str] = (),
             query: Callable[[Question], str] | None = None, name: str | None = None) -> Report:
    """Every way the collection can be searched, side by side: modes x rerankers (none, plus those
    given) x the vector spaces it holds, with median and p95 latency per query, 95% intervals on
    nDCG, recall and MRR, and three picks.

    The picks, ranked by nDCG at the largest k, then MRR:
    - best: the highest quality; what to ship when latency is not the constraint.
    - fastest_close: the fastest setup within one point (0.01) of the best - a point of nDCG is
      within the noise of a few hundred questions, a several-fold latency gap is not.
    - best_per_ms: the most quality per millisecond of median latency, for a tight budget.
    Each row's `ci` holds its intervals; where the best's interval overlaps another's, the
    questions cannot tell the two apart (the report's `warnings` says how many such setups).
    `measures`: registered measures by name, each setup's mean a column of the frame (as
    retrieval_report computes them; they never rank). A name no ranked kernel computes is refused.
    `query`: what each setup searches for a question, as retrieval_report takes it (a conversation's
    last user turn by default); recorded as report["query"].
    `name`: the run's name, and report.meta["system"] what was measured, as retrieval_report records them.
    An outside retriever (a function, a framework's retriever, a store adapter) is searched the one way
    it searches: a single setup, its mode the adapter's name (`modes`, `vectors` and `rerank` are for a
    Vectrix; giving vectors or rerank with one is refused).
    """
    import pandas as pd

    report_measures(measures, taken=FRAME_COLUMNS)  # refused before any setup is searched
    report_measures(measures, taken=("mrr", *EVALUATE_COLUMNS), exact=True)
    started = now()
    outside = not _searches(db)
    if outside and (vectors is not None or rerank):
        raise BadInput("vectors= and rerank= choose among a Vectrix's setups; an outside retriever is searched the one "
                       "way it searches")
    golden, questions = questions, questions_of(questions, None if outside else db)
    inputs = provenance(golden, questions, db) | measured(db, name)
    grain = Grain.of(by) if by is not None else grain_of(questions)[0]  # the labels' grain, as retrieval_report takes it
    ks = cutoffs(k)
    spaces = [] if outside else list(vectors) if vectors is not None else sorted(db.spaces)
    setups = []
    for mode in [] if outside else modes:
        for space in spaces if mode != "keyword" else [spaces[0] if spaces else None]:
            for rr in [None, *rerank]:
                setups.append({"mode": mode, "vectors": space if mode != "keyword" else None, "rerank": rr})
    if outside:
        setups.append({"mode": None, "vectors": None, "rerank": None})
    rows, reports = [], []
    quality, top = f"ndcg@{ks[-1]}", ks[-1]
    for setup in setups:
        options: dict[str, Any] = {key: v for key, v in setup.items() if v is not None}
        rep = retrieval_report(db, questions, ks, grain, depth=depth, progress=progress, measures=measures, query=query,
                               **options)
        reports.append(rep)
        if rep["ndcg"] is None:
            return Report("evaluate", {"by": grain.name, "k": ks, "questions": rep["questions"], "setups": len(setups),
                                       "best": None, "reason": rep["reason"], "warnings": rep["warnings"]},
                          None, started=started, meta=inputs)
        ci = rep["ci"]
        rows.append({"mode": setup["mode"] or inputs["system"].get("adapter", "retriever"),
                     "vectors": setup["vectors"] or "-", "rerank": _name(setup["rerank"]),
                     quality: rep["ndcg"][top], f"{quality} low": _end(ci["ndcg"][top], 0),
                     f"{quality} high": _end(ci["ndcg"][top], 1), "mrr": rep["mrr"],
                     "mrr low": _end(ci["mrr"], 0), "mrr high": _end(ci["mrr"], 1),
                     f"recall@{top}": rep["recall"][top], f"recall@{top} low": _end(ci["recall"][top], 0),
                     f"recall@{top} high": _end(ci["recall"][top], 1), f"recall@{ks[0]}": rep["recall"][ks[0]],
                     "median_ms": rep["latency_ms"]["median"], "p95_ms": rep["latency_ms"]["p95"],
                     **rep["measures"]})
    frame = pd.DataFrame(rows)
    frame = frame.sort_values([quality, "mrr", "median_ms"], ascending=[False, False, True])
    best_report = reports[int(frame.index[0])]  # the rows were made in the reports' order
    frame = frame.reset_index(drop=True)
    best = frame.iloc[0]
    close = frame[frame[quality] >= best[quality] - 0.01].sort_values("median_ms").iloc[0]
    per_ms = frame.assign(q_per_ms=frame[quality] / frame["median_ms"].clip(lower=1e-3)).sort_values(
        "q_per_ms", ascending=False).iloc[0]
    pick = lambda row: {c: (row[c].item() if hasattr(row[c], "item") else row[c]) for c in frame.columns}  # noqa: E731
    warnings = list(dict.fromkeys(w for rep in reports for w in rep["warnings"]))
    low = best[f"{quality} low"]
    within = int((frame[f"{quality} high"].iloc[1:] >= low).sum()) if low is not None else 0
    if within:
        warnings.append(f"{within} other setup(s) have {quality} intervals reaching the best's: these questions "
                        "cannot tell them apart")
    values = {"by": grain.name, "cannot_fail": reports[0]["cannot_fail"], "k": ks, "depth": max(depth, top),
              "questions": reports[0]["questions"], "setups": len(setups),
              "best": pick(best), "fastest_close": pick(close), "best_per_ms": pick(per_ms),
              "misses": best_report["misses"],  # the best setup's, which the certificate's grade is from
              "query": reports[0]["query"], "warnings": warnings}
    report = Report("evaluate", values, frame, started=started, meta=inputs)
    if save_to:
        report.save(save_to)
    return report


def _end(interval: list[float] | None, side: int) -> float | None:
    return None if interval is None else interval[side]


def _name(rerank: Any) -> str:
    if rerank is None:
        return "-"
    if isinstance(rerank, str):
        return rerank
    named = getattr(rerank, "name", None)  # a rerank route: its model string
    return named if isinstance(named, str) else getattr(rerank, "__name__", type(rerank).__name__)
