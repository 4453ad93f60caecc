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

A cut-off belongs to one way of searching, so the mode is explicit: dense unless mode= says
otherwise (never whatever Vectrix.search happens to default to), and the report records it.
A question whose search returns nothing (in keyword mode, one sharing no word with the collection)
has no top result to answer from: it is declined at every cut-off. It counts as a near miss with
score -inf in every figure (below every candidate, so declined by all of them), None in the frame,
and its id is listed under found_nothing; `near_misses` holds the scores of the near misses that had
a top result.

`separation` is the probability that an answer outscores a near miss (the Mann-Whitney AUC; ties
count half; 0.5 is a coin), over every near miss: the one the cut-off is chosen on. `separations`
gives it apart for the two sources of near misses, which need not separate alike: "near_misses",
labelled questions whose top result is not one they expect (the collection's own near misses), and
"unanswerable", the questions passed as unanswerable (typically from outside the documents). Each
is None with a reason when a side has fewer than MIN_EACH, never 0 or 1. 95% intervals come from
scipy.stats.bootstrap (percentile method, answers and near misses resampled independently: the AUC
is a two-sample statistic, not a mean over questions, so runs/stats.bootstrap_interval does not fit).
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.grain import DOC, PAGE, Grain
from vectrixdb.evaluation.golden.questions import Question, provenance
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
                  mode: str = "dense", measure: str = "similarity", by: str | Grain = "page", confidence: float = 0.95,
                  n_resamples: int = 2000, seed: int = 0, **search) -> Report:
    """The cut-off (see the module docstring). mode is the search mode measured (dense unless told;
    recorded as report["mode"]); anything else in **search goes to search() too. by="page" judges a
    top result by the labels as given (a page label wants that page); by="doc" by their documents
    (any page of one is an answer)."""
    from vectrixdb.search import MODES

    started = now()
    if mode not in MODES:
        raise BadInput(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
    search = {"mode": mode, **search}
    if measure not in MEASURES:
        raise BadInput(f"measure must be one of {MEASURES}, not {measure!r}")
    grain = Grain.of(by, (PAGE, DOC), who="answer_cutoff judges a top result by")
    if measure == "relevance" and search.get("rerank") in (None, False):
        raise BadInput('measure="relevance" reads a reranker\'s score: pass rerank= as well')
    if measure == "similarity" and search.get("rerank") not in (None, False):
        raise BadInput("after rerank= a hit's score is the reranker's: use measure='relevance' with it")
    if mode == "hybrid" and search.get("rerank") in (None, False):
        raise BadInput("hybrid search scores are reciprocal-rank fusion values, which say where a result ranked, not "
                       "how well it matches: measure the cut-off with mode='dense' (cosine) or mode='keyword' "
                       "(BM25), or rerank= with measure='relevance'")
    rows, asked = [], questions_of(questions, db)
    inputs = provenance(questions, asked, db)
    for q in asked:
        if q.labelled:
            rows.append(_top(db, q.question, search, measure, q.key(), q, grain))
    for j, u in enumerate(unanswerable):
        text = u.question if isinstance(u, Question) else str(u)
        rows.append(_top(db, text, search, measure, f"unanswerable-{j + 1}", None, grain))
    import pandas as pd

    frame = pd.DataFrame(rows).set_index("id") if rows else None
    answers = _scores(rows, ("answer",))
    misses = _scores(rows, ("near miss", "unanswerable"))
    values: dict[str, Any] = {"mode": mode, "measure": measure, "by": grain.name,
                              "search": {k: str(v) for k, v in search.items()},
                              "answers": answers.tolist(), "near_misses": misses[np.isfinite(misses)].tolist(),
                              "found_nothing": [r["id"] for r in rows if r["score"] is None],
                              "questions": sum(r["kind"] != "unanswerable" for r in rows),
                              "unanswerable": sum(r["kind"] == "unanswerable" for r in rows)}
    values["separations"] = {
        "near_misses": _separation_of(answers, _scores(rows, ("near miss",)), "near misses of labelled questions",
                                      "no near misses: every labelled question's top result was one it expects",
                                      confidence, n_resamples, seed),
        "unanswerable": _separation_of(answers, _scores(rows, ("unanswerable",)), "unanswerable questions",
                                       "no unanswerable questions were passed (unanswerable=)",
                                       confidence, n_resamples, seed)}
    short = [f"{len(x)} {name}" for x, name in ((answers, "answers"), (misses, "near misses")) if len(x) < MIN_EACH]
    if short:
        values.update({"cutoff": None, "separation": None, "separation_ci": None, "table": None,
                       "reason": f"need at least {MIN_EACH} answers and {MIN_EACH} near misses; have " + " and ".join(short)
                       + ("; near misses come from questions the collection cannot answer: pass some as unanswerable= "
                          "(--unanswerable FILE in the terminal)" if len(misses) < MIN_EACH else "")})
        return Report("cutoff", values, frame, started=started, meta=inputs)
    candidates = np.unique(np.concatenate([answers, misses[np.isfinite(misses)]]))  # found nothing: below every one
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


def _scores(rows: list[dict], kinds: tuple[str, ...]) -> np.ndarray:
    """The top scores of the rows of these kinds; -inf where the search found nothing (declined by every cut-off)."""
    return np.array([-np.inf if r["score"] is None else r["score"] for r in rows if r["kind"] in kinds], float)


def _separation_of(answers: np.ndarray, misses: np.ndarray, what: str, if_none: str, confidence: float,
                   n_resamples: int, seed: int) -> dict[str, Any]:
    """Answers against one source of near misses: the separation, its interval and the counts, or
    None with the reason when a side is short."""
    out: dict[str, Any] = {"separation": None, "ci": None, "answers": len(answers), "near_misses": len(misses),
                           "found_nothing": int(np.isneginf(misses).sum()), "of": f"answers vs {what}"}
    if not len(misses):
        out["reason"] = if_none
    elif len(answers) < MIN_EACH or len(misses) < MIN_EACH:
        out["reason"] = (f"need at least {MIN_EACH} answers and {MIN_EACH} {what}; have {len(answers)} and "
                         f"{len(misses)}")
    else:
        out["separation"] = separation(answers, misses)
        out["ci"] = _bootstrap(lambda a, m: separation(a, m), answers, misses, confidence, n_resamples, seed)
    return out


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


def _top(db, text: str, search: dict, measure: str, key: str, q: Question | None, grain: Grain = PAGE) -> dict:
    hits = db.search(text, 1, **search)
    if not hits:  # nothing to answer from: declined at every cut-off (see the module docstring)
        kind = "unanswerable" if q is None else "near miss"
        return {"id": key, "question": text, "kind": kind, "score": None, "top_doc": None, "top_pages": []}
    hit = hits[0]
    score = hit.relevance if measure == "relevance" else hit.score
    if q is None:
        kind = "unanswerable"
    else:
        relevant = [label for label, grade in q.graded() if grade > 0]
        kind = "answer" if grain.answers(relevant, hit) else "near miss"
    return {"id": key, "question": text, "kind": kind, "score": float(score), "top_doc": hit.doc_id,
            "top_pages": list(hit.pages)}


def table_text(report: Report) -> str:
    """The table as aligned text, for a terminal."""
    if report.get("cutoff") is None:
        return f"no cut-off ({report.get('mode', 'dense')} search): {report['reason']}"
    lines = [f"{'answer at or above':>20}  {'right when it answers':>22}  {'answers kept':>12}  {'near misses declined':>20}"]
    for row in report["table"]:
        right = "-" if row["right_when_answers"] is None else f"{row['right_when_answers']:.0%}"
        mark = " (chosen: largest kept + declined, ties to the stricter)" if row["chosen"] else ""
        lines.append(f"{row['cutoff']:>20.3f}  {right:>22}  {row['answers_kept']:>12.0%}  "
                     f"{row['near_misses_declined']:>20.0%}{mark}")
    nothing = len(report.get("found_nothing", ()))
    low, high = report["separation_ci"] or (float("nan"), float("nan"))
    lines.append(f"separation (an answer outscores a near miss): {report['separation']:.1%} "
                 f"[95% CI {low:.1%} to {high:.1%}]; {len(report['answers'])} answers, "
                 f"{len(report['near_misses']) + nothing} near misses; {report.get('mode', 'dense')} search")
    for part in report.get("separations", {}).values():
        if part["separation"] is None:
            lines.append(f"  separation ({part['of']}): none, {part['reason']}")
        else:
            low, high = part["ci"] or (float("nan"), float("nan"))
            lines.append(f"  separation ({part['of']}): {part['separation']:.1%} [95% CI {low:.1%} to {high:.1%}]; "
                         f"{part['answers']} answers, {part['near_misses']} near misses")
    if nothing:
        lines.append(f"{nothing} question(s) found nothing (no word shared with the collection): declined at every "
                     "cut-off")
    return "\n".join(lines)
