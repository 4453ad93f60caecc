"""answer_cutoff: below which score to decline answering, measured on your own questions.

Every labelled question is searched; its top result is an *answer* when it is a document or a
page the question expects (a row that expects a whole document and pages of others is answered by
any page of that document), else a *near miss*. Every unanswerable question's top result is a near
miss by definition. A cut-off t answers when the top score >= t; for each candidate t the table
gives how often it is right when it answers, the share of answers kept and of near misses declined.

The rule that picks t: the largest Youden index, answers kept + near misses declined - 1, i.e. the
best balanced accuracy, ties going to the stricter cut-off. It is compared in whole numbers
(kept x near misses + declined x answers), so rounding can never break a real tie. It weighs a wrong answer and a wrongful
refusal equally and, unlike accuracy or "right when it answers", does not move with how many
unanswerable questions happened to be written. The table is there to choose a stricter or looser
row by a different trade-off.

The scores must mean the same across questions: a similarity (dense: cosine; keyword: BM25) or a
reranker's relevance. Hybrid search's fused scores are reciprocal-rank values, which say only
where a result ranked, so they are refused.

`separation` is the probability that an answer outscores a near miss (the Mann-Whitney AUC; ties
count half; 0.5 is a coin). 95% intervals come from scipy.stats.bootstrap (percentile method,
answers and near misses resampled independently).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.questions import Question, provenance, split_label
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.runs.report import Report, now
from vectrixdb.roles import Collection, Questions

MIN_EACH = 5
TABLE_ROWS = 15
MEASURES = ("similarity", "relevance")


def separation(answers: np.ndarray, misses: np.ndarray) -> float:
    """P(answer score > near-miss score) + 0.5 P(equal), over all pairs."""
    from scipy.stats import rankdata

    a, m = np.asarray(answers, float), np.asarray(misses, float)
    ranks = rankdata(np.concatenate([a, m]))
    u = ranks[: len(a)].sum() - len(a) * (len(a) + 1) / 2
    return float(u / (len(a) * len(m)))


def rates(answers: np.ndarray, misses: np.ndarray, t: float) -> dict[str, float | None]:
    kept, passed = (answers >= t).sum(), (misses >= t).sum()
    return {"cutoff": float(t), "right_when_answers": float(kept / (kept + passed)) if kept + passed else None,
            "answers_kept": float(kept / len(answers)), "near_misses_declined": float(1 - passed / len(misses))}


def answer_cutoff(db: Collection, questions: Questions, unanswerable: Iterable[str | Question] = (), *,
                  measure: str = "similarity", by: str = "page", confidence: float = 0.95, n_resamples: int = 2000,
                  seed: int = 0, **search) -> Report:
    """The cut-off (see the module docstring). by="page" judges a top result by the labels as given
    (a page label wants that page); by="doc" by their documents (any page of one is an answer)."""
    started = now()
    if measure not in MEASURES:
        raise BadInput(f"measure must be one of {MEASURES}, not {measure!r}")
    if by not in ("page", "doc"):
        raise BadInput(f"by must be 'page' or 'doc', not {by!r}")
    if measure == "relevance" and search.get("rerank") in (None, False):
        raise BadInput('measure="relevance" reads a reranker\'s score: pass rerank= as well')
    if measure == "similarity" and search.get("rerank") not in (None, False):
        raise BadInput("after rerank= a hit's score is the reranker's: use measure='relevance' with it")
    if search.get("mode") == "hybrid" and search.get("rerank") in (None, False):
        raise BadInput("hybrid search scores are reciprocal-rank fusion values, which say where a result ranked, not "
                       "how well it matches: measure the cut-off with mode='dense' (cosine) or mode='keyword' "
                       "(BM25), or rerank= with measure='relevance'")
    rows, asked = [], questions_of(questions, db)
    inputs = provenance(questions, asked, db)
    for q in asked:
        if q.labelled:
            rows.append(_top(db, q.question, search, measure, q.key(), q, by))
    for j, u in enumerate(unanswerable):
        text = u.question if isinstance(u, Question) else str(u)
        rows.append(_top(db, text, search, measure, f"unanswerable-{j + 1}", None, by))
    import pandas as pd

    frame = pd.DataFrame(rows).set_index("id") if rows else None
    answers = np.array([r["score"] for r in rows if r["kind"] == "answer"], float)
    misses = np.array([r["score"] for r in rows if r["kind"] != "answer"], float)
    values: dict[str, Any] = {"measure": measure, "by": by, "search": {k: str(v) for k, v in search.items()},
                              "answers": answers.tolist(), "near_misses": misses.tolist(),
                              "questions": sum(r["kind"] != "unanswerable" for r in rows),
                              "unanswerable": sum(r["kind"] == "unanswerable" for r in rows)}
    short = [f"{len(x)} {name}" for x, name in ((answers, "answers"), (misses, "near misses")) if len(x) < MIN_EACH]
    if short:
        values.update({"cutoff": None, "separation": None, "table": None,
                       "reason": f"need at least {MIN_EACH} answers and {MIN_EACH} near misses; have " + " and ".join(short)
                       + ("; near misses come from questions the collection cannot answer: pass some as unanswerable= "
                          "(--unanswerable FILE in the terminal)" if len(misses) < MIN_EACH else "")})
        return Report("cutoff", values, frame, started=started, meta=inputs)
    candidates = np.unique(np.concatenate([answers, misses]))
    table = [rates(answers, misses, t) for t in candidates]
    best = _youden_best(answers, misses, candidates)
    chosen = table[best]
    values.update({"cutoff": chosen["cutoff"], "separation": separation(answers, misses), "chosen": chosen,
                   "rule": "largest answers_kept + near_misses_declined - 1 (Youden); ties to the stricter"})
    values["separation_ci"] = _bootstrap(lambda a, m: separation(a, m), answers, misses, confidence, n_resamples, seed)
    t = chosen["cutoff"]
    assert t is not None  # rates() always sets the cutoff
    values["chosen_ci"] = {
        "answers_kept": _bootstrap(lambda a: float((a >= t).mean()), answers, None, confidence, n_resamples, seed),
        "near_misses_declined": _bootstrap(lambda m: float((m < t).mean()), misses, None, confidence, n_resamples, seed),
        "right_when_answers": _bootstrap(lambda a, m: _precision(a, m, t), answers, misses, confidence, n_resamples, seed),
    }
    values["table"] = _condense(table, best)
    return Report("cutoff", values, frame, tables={"candidates": pd.DataFrame(table)}, started=started, meta=inputs)


def _youden_best(answers: np.ndarray, misses: np.ndarray, candidates: np.ndarray) -> int:
    """Index of the candidate with the largest Youden index, ties to the stricter (larger) one.
    kept/A + declined/M - 1 is compared as kept*M + declined*A in integers: exact, so a tie is a tie."""
    a, m = len(answers), len(misses)
    kept = (answers[None, :] >= candidates[:, None]).sum(axis=1).astype(np.int64)
    declined = (misses[None, :] < candidates[:, None]).sum(axis=1).astype(np.int64)
    score = kept * m + declined * a
    return int(np.flatnonzero(score == score.max())[-1])


def _precision(a: np.ndarray, m: np.ndarray, t: float) -> float:
    kept, passed = (a >= t).sum(), (m >= t).sum()
    return float(kept / (kept + passed)) if kept + passed else float("nan")


def _bootstrap(statistic, first, second, confidence, n_resamples, seed) -> list[float] | None:
    import warnings

    from scipy.stats import DegenerateDataWarning, bootstrap

    data = (first,) if second is None else (first, second)
    with warnings.catch_warnings():  # every resample equal (e.g. all near misses declined): the interval is a point
        warnings.simplefilter("ignore", DegenerateDataWarning)
        result = bootstrap(data, statistic, vectorized=False, paired=False, confidence_level=confidence,
                           n_resamples=n_resamples, method="percentile", random_state=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return None if np.isnan(low) or np.isnan(high) else [float(low), float(high)]


def _condense(table: list[dict], best: int) -> list[dict]:
    """At most TABLE_ROWS rows spread over the candidates by quantile, always with the chosen one."""
    if len(table) <= TABLE_ROWS:
        picks = list(range(len(table)))
    else:
        picks = sorted({*np.linspace(0, len(table) - 1, TABLE_ROWS - 1).round().astype(int).tolist(), best})
    return [{**table[i], "chosen": i == best} for i in picks]


def _top(db, text: str, search: dict, measure: str, key: str, q: Question | None, by: str = "page") -> dict:
    hits = db.search(text, 1, **search)
    if not hits:
        raise BadInput(f"{key}: the search returned nothing, so there is no top score to measure")
    hit = hits[0]
    score = hit.relevance if measure == "relevance" else hit.score
    if q is None:
        kind = "unanswerable"
    else:
        relevant = [label for label, grade in q.graded() if grade > 0]
        whole = {label if by == "page" else split_label(label)[0] for label in relevant
                 if by == "doc" or split_label(label)[1] is None}
        pages = {split_label(label) for label in relevant} - {(d, None) for d in whole}
        right = hit.doc_id in whole or any((hit.doc_id, p) in pages for p in hit.pages)
        kind = "answer" if right else "near miss"
    return {"id": key, "question": text, "kind": kind, "score": float(score), "top_doc": hit.doc_id,
            "top_pages": list(hit.pages)}


def table_text(report: Report) -> str:
    """The table as aligned text, for a terminal."""
    if report.get("cutoff") is None:
        return f"no cut-off: {report['reason']}"
    lines = [f"{'answer at or above':>20}  {'right when it answers':>22}  {'answers kept':>12}  {'near misses declined':>20}"]
    for row in report["table"]:
        right = "-" if row["right_when_answers"] is None else f"{row['right_when_answers']:.0%}"
        mark = " (chosen: largest kept + declined, ties to the stricter)" if row["chosen"] else ""
        lines.append(f"{row['cutoff']:>20.3f}  {right:>22}  {row['answers_kept']:>12.0%}  "
                     f"{row['near_misses_declined']:>20.0%}{mark}")
    low, high = report["separation_ci"] or (float("nan"), float("nan"))
    lines.append(f"separation (an answer outscores a near miss): {report['separation']:.1%} "
                 f"[95% CI {low:.1%} to {high:.1%}]; {len(report['answers'])} answers, {len(report['near_misses'])} near misses")
    return "\n".join(lines)
