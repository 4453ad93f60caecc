"""retrieval_report and evaluate: how well a retriever finds what your questions expect.

`target` is a Vectrix (its search() is called with the options given) or any callable
`query -> list` of ids, dicts or hits, so a LangChain or LlamaIndex retriever is one lambda away.
At by="doc" and by="page", k counts distinct documents or pages (each at the rank of its best
chunk), so a search returns up to DEPTH_FACTOR times max(k) chunks to fill them.
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from vectrixdb.evaluation import labels as L
from vectrixdb.evaluation.golden import Question
from vectrixdb.evaluation.metrics import Measure, compute, judge
from vectrixdb.evaluation.report import Report
from vectrixdb.evaluation.suggest import question_key

DEPTH_FACTOR = 3
MISS_DEPTH = 100  # how deep to look for the first right result of a question that missed
FAMILIES = ("recall", "precision", "f1", "ndcg", "hit_rate")


def _retriever(target: Any, search: dict) -> Callable[[str, int], list]:
    if hasattr(target, "search") and (hasattr(target, "catalog") or hasattr(target, "principal")):
        return lambda query, n: target.search(query, n, **search)  # a Vectrix or a principal's view
    if callable(target):
        if search:
            raise ValueError(f"search options {sorted(search)} only apply to a Vectrix target")
        return lambda query, n: target(query)
    invoke = getattr(target, "invoke", None)  # a LangChain retriever object
    if invoke is not None:
        return lambda query, n: invoke(query)
    raise TypeError(f"target must be a Vectrix or a callable query -> results, not {type(target).__name__}")


def retrieval_report(target: Any, questions: Iterable[Question], k: Sequence[int] | int = (1, 3, 5, 10),
                     by: str = "doc", *, save_to: str | None = None, progress: bool = False, **search) -> Report:
    """recall@k, precision@k, f1@k, ndcg@k, hit_rate@k and MRR over the labelled questions,
    with a per-question frame, the misses and Vecta's set-based levels. See labels.py for what
    counts as right at each grain. Questions without labels are counted and left out."""
    from tqdm.auto import tqdm

    ks = sorted({int(x) for x in ([k] if isinstance(k, int) else k)})
    if not ks or ks[0] <= 0:
        raise ValueError(f"k must be positive whole numbers, not {k!r}")
    if by not in L.GRAINS:
        raise ValueError(f"unknown grain by={by!r}; choose one of {', '.join(L.GRAINS)}")
    questions = list(questions)
    scored = [(i, q) for i, q in enumerate(questions) if q.labelled and (by != "chunk" or q.expected)]
    unlabelled = len(questions) - len(scored)
    run = _retriever(target, search)
    depth = ks[-1] * (DEPTH_FACTOR if by in ("doc", "page") else 1)
    results, latency = [], []
    for _, q in tqdm(scored, desc="searching", unit="q", disable=not progress):
        start = time.perf_counter()
        raw = run(q.question, depth)
        latency.append((time.perf_counter() - start) * 1000)
        results.append([L.as_result(r, i + 1) for i, r in enumerate(raw)])
    values: dict[str, Any] = {"by": by, "k": ks, "questions": len(scored), "unlabelled": unlabelled,
                              "search": {key: str(v) for key, v in search.items()}}
    if not scored:
        values.update({f: None for f in (*FAMILIES, "mrr")})
        values.update({"misses": [], "levels": None, "reason": f"no labelled questions to score ({unlabelled} without labels)"})
        return Report("retrieval", values, None)
    ranked = [L.units(q, res, by) for (_, q), res in zip(scored, results)]
    judged = judge(ranked, [L.qrel(q, by) for _, q in scored], ks[-1])
    measures = [Measure(f, x) for f in FAMILIES for x in ks] + [Measure("mrr")]
    per_q = compute(judged, measures)
    for family in FAMILIES:
        values[family] = {x: float(per_q[f"{family}@{x}"].mean()) for x in ks}
    values["mrr"] = float(per_q["mrr"].mean())
    values["latency_ms"] = {"median": statistics.median(latency), "p95": float(np.percentile(latency, 95))}
    first = _first_right(judged.found)
    values["misses"] = _misses(scored, results, ranked, first, run, by)
    values["levels"] = _mean_levels([L.levels(q, res[: ks[-1]], by) for (_, q), res in zip(scored, results)])
    frame = _frame(questions, scored, results, per_q, first, latency, by)
    report = Report("retrieval", values, frame, plot=_plot)
    if save_to:
        from vectrixdb.evaluation.runs import save_run

        report["run_id"] = save_run(report, save_to, "retrieval")
    return report


def _first_right(found: np.ndarray) -> list[int | None]:
    rel = found > 0
    return [int(row.argmax()) + 1 if row.any() else None for row in rel]


def _misses(scored, results, ranked, first, run, by) -> list[dict]:
    out = []
    for (i, q), res, units, rank in zip(scored, results, ranked, first):
        if rank is not None:
            continue
        deeper = None
        wanted = L.qrel(q, by)
        try:
            more = [L.as_result(r, n + 1) for n, r in enumerate(run(q.question, MISS_DEPTH))]
            for n, unit in enumerate(L.units(q, more, by), start=1):
                if any(label in wanted for label in (unit if isinstance(unit, tuple) else (unit,))):
                    deeper = n
                    break
        except Exception:  # a callable target may not go deeper; the miss is reported all the same
            deeper = None
        out.append({"id": question_key(q, i), "question": q.question, "expected": list(q.expected),
                    "got": [{"doc_id": r.doc_id, "pages": list(r.pages), "score": r.score, "text": r.text[:200]}
                            for r in res[:3]],
                    "first_right_rank": deeper})
    return out


def _mean_levels(rows: list[dict]) -> dict:
    out = {}
    for level in ("doc", "page", "chunk"):
        present = [r[level] for r in rows if r[level] is not None]
        out[level] = ({m: float(np.mean([p[m] for p in present])) for m in ("precision", "recall", "f1")}
                      if present else None)
    return out


def _frame(questions, scored, results, per_q, first, latency, by):
    import pandas as pd

    rows = []
    for n, ((i, q), res) in enumerate(zip(scored, results)):
        rows.append({"id": question_key(q, i), "question": q.question, "grain": L.judged_by(q, by),
                     "expected": len(L.qrel(q, by)), "first_right": first[n], "latency_ms": latency[n],
                     "retrieved": [r.doc_id if by == "doc" else r.chunk_id for r in res[:10]],
                     **{name: float(v[n]) for name, v in per_q.items()}})
    return pd.DataFrame(rows).set_index("id")


def _plot(report, *args, **kwargs):
    from vectrixdb.plotting import recall_curve

    return recall_curve(report, *args, **kwargs)


def _plot_setups(report, *args, **kwargs):
    from vectrixdb.plotting import setup_comparison

    return setup_comparison(report, *args, **kwargs)


def evaluate(db: Any, questions: Iterable[Question], *, k: Sequence[int] = (1, 3, 5, 10), by: str = "doc",
             modes: Sequence[str] = ("dense", "keyword", "hybrid"), rerank: Sequence[Any] = (),
             vectors: Sequence[str] | None = None, save_to: str | None = None, progress: bool = True) -> Report:
    """Every way the collection can be searched, side by side: modes x rerankers (none, plus those
    given) x the vector spaces it holds, with median and p95 latency per query, and three picks.

    The picks, ranked by nDCG at the largest k, then MRR:
    - best: the highest quality; what to ship when latency is not the constraint.
    - fastest_close: the fastest setup within one point (0.01) of the best - a point of nDCG is
      within the noise of a few hundred questions, a several-fold latency gap is not.
    - best_per_ms: the most quality per millisecond of median latency, for a tight budget.
    """
    import pandas as pd

    questions = list(questions)
    spaces = list(vectors) if vectors is not None else sorted(db.spaces)
    setups = []
    for mode in modes:
        for space in spaces if mode != "keyword" else [spaces[0] if spaces else None]:
            for rr in [None, *rerank]:
                setups.append({"mode": mode, "vectors": space if mode != "keyword" else None, "rerank": rr})
    rows, reports = [], []
    ks = sorted(k)
    for setup in setups:
        options = {key: v for key, v in setup.items() if v is not None}
        rep = retrieval_report(db, questions, ks, by, progress=progress, **options)
        reports.append(rep)
        if rep["questions"] == 0:
            return Report("evaluate", {"setups": len(setups), "best": None, "reason": rep["reason"]}, None)
        rows.append({"mode": setup["mode"], "vectors": setup["vectors"] or "-", "rerank": _name(setup["rerank"]),
                     f"ndcg@{ks[-1]}": rep["ndcg"][ks[-1]], "mrr": rep["mrr"], f"recall@{ks[-1]}": rep["recall"][ks[-1]],
                     f"recall@{ks[0]}": rep["recall"][ks[0]], "median_ms": rep["latency_ms"]["median"],
                     "p95_ms": rep["latency_ms"]["p95"]})
    frame = pd.DataFrame(rows)
    quality = f"ndcg@{ks[-1]}"
    frame = frame.sort_values([quality, "mrr", "median_ms"], ascending=[False, False, True]).reset_index(drop=True)
    best = frame.iloc[0]
    close = frame[frame[quality] >= best[quality] - 0.01].sort_values("median_ms").iloc[0]
    per_ms = frame.assign(q_per_ms=frame[quality] / frame["median_ms"].clip(lower=1e-3)).sort_values(
        "q_per_ms", ascending=False).iloc[0]
    pick = lambda row: {c: (row[c].item() if hasattr(row[c], "item") else row[c]) for c in frame.columns}  # noqa: E731
    values = {"by": by, "k": ks, "questions": reports[0]["questions"], "setups": len(setups),
              "best": pick(best), "fastest_close": pick(close), "best_per_ms": pick(per_ms)}
    report = Report("evaluate", values, frame, plot=_plot_setups)
    if save_to:
        from vectrixdb.evaluation.runs import save_run

        report["run_id"] = save_run(report, save_to, "retrieval")
    return report


def _name(rerank: Any) -> str:
    if rerank is None:
        return "-"
    return rerank if isinstance(rerank, str) else getattr(rerank, "__name__", type(rerank).__name__)
