"""answer_report and calibrate: scoring answers with a judge, and measuring whether to believe it.

answer_report(questions, answers, judge): `answers` maps a question's key (Question.key(): its id)
to {"answer": text, "sources": [ids or texts]}; every answered question is judged on each metric
(Bedrock's four by default: correctness, completeness, faithfulness, helpfulness); a conversation's
answer, the reply to its last user turn, is judged with its earlier turns as context (judges.py). The frame
holds each question's score, reason and outcome per metric; `report["metrics"]` the means, with
95% intervals over questions in `report["ci"]` (stats.bootstrap_interval's rule).

Judges move from run to run; these are the numbers that say by how much. `repeats=n` asks the
judge n times per item: an item's score is the mean of its scored repeats, `spread` the mean
standard deviation across repeats, `flip_rate` the share of items whose repeats fall on both sides
of `threshold`. An unscorable item (the model's reply did not parse, was cut off, ...) is counted
under its outcome in `report["outcomes"]` and is never averaged in; an item none of whose repeats
scored has no score. A question without an answer is counted in `report["unanswered"]`. A metric
whose rubric reads a reference or sources is refused (BadInput, before any call) when an answered
item lacks them; judge_items alone marks such an item `missing_input` and asks nothing.

calibrate(judge, labelled) compares the judge with people's scores on the same items: Cohen's
kappa on pass/fail at the threshold, quadratic-weighted kappa on scores rounded to a five-point
scale, and Spearman's rank correlation, so a team knows whether its judge agrees with it.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from vectrixdb.chat.parallel import concurrently, width
from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.questions import provenance
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.generation.judges import BEDROCK_METRICS, as_judge, check_inputs, check_score, is_model, rubric
from vectrixdb.evaluation.runs.report import Report, now
from vectrixdb.evaluation.runs.stats import bootstrap_interval
from vectrixdb.roles import Judge, Questions


def judge_items(judge: Judge, items: list[dict], metrics: Sequence[str], *, repeats: int = 1,
                threshold: float = 0.5) -> list[dict]:
    """Judge every item (key, question, reference, answer, sources, and a conversation's earlier
    `turns` as (role, text) pairs when it has them) on every metric, `repeats`
    times; one row per item with `<metric>`, `<metric> reason`, `<metric> outcome`, and with
    repeats > 1 `<metric> spread` and `<metric> flipped`."""
    if repeats < 1:
        raise BadInput(f"repeats must be at least 1, not {repeats}")
    for m in metrics:
        rubric(m)
    call = as_judge(judge)

    def verdict(ask: tuple) -> Any:
        n, metric, r = ask
        item = items[n]
        return call(metric, item["question"], item.get("reference"), item["answer"], item.get("sources") or [],
                    repeat=r, turns=item.get("turns") or ())

    asks = [(n, metric, r) for n in range(len(items)) for metric in metrics for r in range(repeats)]
    # every verdict at once, up to a ChatWriter's max_concurrency (a function judge: one at a time, in order)
    got = dict(zip(asks, concurrently(verdict, asks, workers=width(judge))))
    rows = []
    for n, item in enumerate(items):
        row = {"id": item["key"]}
        for metric in metrics:
            verdicts = [got[(n, metric, r)] for r in range(repeats)]
            scores = [v.score for v in verdicts if v.status == "ok"]
            failed = [v.status for v in verdicts if v.status != "ok"]
            row[metric] = float(np.mean(scores)) if scores else None
            row[f"{metric} reason"] = next((v.reason for v in verdicts if v.reason), None)
            row[f"{metric} outcome"] = "ok" if not failed else failed[0] if not scores else f"ok ({len(failed)} failed)"
            if repeats > 1:
                row[f"{metric} spread"] = float(np.std(scores)) if len(scores) > 1 else None
                row[f"{metric} flipped"] = (len({s >= threshold for s in scores}) > 1) if len(scores) > 1 else None
            row.setdefault("_outcomes", []).extend((metric, v.status) for v in verdicts)
        rows.append(row)
    return rows


def summarize(rows: list[dict], metrics: Sequence[str], *, repeats: int, confidence: float = 0.95,
              seed: int = 0) -> dict[str, Any]:
    """Means, intervals, outcome counts and (with repeats) spread and flip rate per metric."""
    out: dict[str, Any] = {"metrics": {}, "ci": {}, "scored": {}, "outcomes": {}}
    for metric in metrics:
        scores = np.array([r[metric] for r in rows if r.get(metric) is not None], dtype=float)
        out["metrics"][metric] = float(scores.mean()) if len(scores) else None
        out["ci"][metric] = bootstrap_interval(scores, confidence, seed=seed) if len(scores) else None
        out["scored"][metric] = int(len(scores))
        counts: dict[str, int] = {}
        for r in rows:
            for m, status in r.get("_outcomes", []):
                if m == metric:
                    counts[status] = counts.get(status, 0) + 1
        out["outcomes"][metric] = counts
    if repeats > 1:
        out["repeats"] = {"n": repeats, **{metric: {
            "spread": _mean([r.get(f"{metric} spread") for r in rows]),
            "flip_rate": _mean([None if r.get(f"{metric} flipped") is None else float(r[f"{metric} flipped"])
                                for r in rows])} for metric in metrics}}
    return out


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def answer_report(questions: Questions, answers: dict[str, dict], judge: Judge, *,
                  metrics: Sequence[str] = BEDROCK_METRICS, repeats: int = 1, threshold: float = 0.5,
                  confidence: float = 0.95, save_to: str | None = None) -> Report:
    """Judge each question's answer on `metrics` (see the module docstring)."""
    import pandas as pd

    started = now()
    golden, questions = questions, questions_of(questions)
    known = {q.key() for q in questions}
    stray = sorted(set(answers) - known)
    if stray:
        raise BadInput(f"answers name question(s) not in the golden set: {stray[:5]}; keys are Question.key() "
                       "(the row's id)")
    items = []
    for q in questions:
        given = answers.get(q.key())
        if given is None:
            continue
        if not isinstance(given, dict) or not isinstance(given.get("answer"), str):
            raise BadInput(f"answers[{q.key()!r}] must be {{'answer': text, 'sources': [...]}}, not {given!r}")
        items.append({"key": q.key(), "question": q.question, "reference": q.reference, "answer": given["answer"],
                      "sources": list(given.get("sources") or []), "turns": list(q.turns)})
    for metric in metrics:  # every declared input present before any judge is asked
        check_inputs(rubric(metric).name, items)
    cost_before = model_totals(judge)
    rows = judge_items(judge, items, metrics, repeats=repeats, threshold=threshold)
    values = {"questions": len(items), "unanswered": len(questions) - len(items), "judge": judge_name(judge),
              "threshold": threshold, **summarize(rows, metrics, repeats=repeats, confidence=confidence)}
    values["model"] = model_delta(judge, cost_before)
    if not items:
        values["reason"] = "no question has an answer to judge"
    frame = pd.DataFrame([{k: v for k, v in r.items() if k != "_outcomes"} for r in rows])
    frame = frame.set_index("id") if len(frame) else None
    if frame is not None:
        frame.insert(0, "answer", [i["answer"] for i in items])
        frame.insert(0, "question", [i["question"] for i in items])
    report = Report("answers", values, frame, started=started, meta=provenance(golden, questions))
    if save_to:
        report.save(save_to)
    return report


def judge_name(judge: Any) -> str:
    """A judge in words for a report: a model's repr, else the function's name (answers and run_evaluation)."""
    if is_model(judge):
        return repr(judge)
    return getattr(judge, "__name__", type(judge).__name__)


def model_totals(judge: Any) -> dict | None:
    """A model judge's running totals (calls, tokens, seconds, cost), None for a function: taken before
    a report so model_delta can give the report's own share (answers, run_evaluation, compare_chunking)."""
    return dict(judge.totals()) if is_model(judge) and hasattr(judge, "totals") else None


def model_delta(judge: Any, before: dict | None) -> dict | None:
    """What this report's calls to a model cost (calls, tokens, seconds, cost) when the judge is one."""
    after = model_totals(judge)
    if after is None:
        return None
    return _minus(after, before or {})


def _minus(after: dict, before: dict) -> dict:
    """after - before, key by key and into nested counts (the writer's `statuses` are its totals
    since it was made, shared by every run that used it: a run reports only its own)."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        prior = before.get(key)
        if isinstance(value, dict):
            nested = _minus(value, prior if isinstance(prior, dict) else {})
            out[key] = {k: v for k, v in nested.items() if v != 0}
        elif isinstance(value, (int, float)) and isinstance(prior, (int, float)) and not isinstance(value, bool):
            out[key] = round(value - prior, 6) if isinstance(value, float) else value - prior
        else:
            out[key] = value
    return out


def calibrate(judge: Judge, labelled: Iterable[dict], *, threshold: float = 0.5, repeats: int = 1) -> Report:
    """Agreement between a judge and people: `labelled` rows hold metric, question, answer, human
    (0..1) and optionally reference and sources. Returns a report with kappa on pass/fail,
    quadratic-weighted kappa on a five-point scale, Spearman's rho, and one row per item."""
    import pandas as pd
    from scipy.stats import spearmanr

    started = now()
    rows = list(labelled)
    if len(rows) < 2:
        raise BadInput("calibrate needs at least two items scored by a person")
    items = []
    for i, row in enumerate(rows):
        for key in ("metric", "question", "answer", "human"):
            if key not in row:
                raise BadInput(f"labelled item {i + 1} has no {key!r}")
        items.append({"key": str(row.get("id", i + 1)), **row, "human": None})
    for metric in sorted({row["metric"] for row in rows}):
        check_inputs(rubric(metric).name, [item for item in items if item["metric"] == metric])
    for row in rows:  # every person's score checked before any judge is asked
        check_score(row["human"], row["metric"], row["question"])
    # the items at once, up to a ChatWriter's max_concurrency (a function judge: one at a time, in order)
    every = concurrently(lambda pair: judge_items(judge, [pair[0]], [pair[1]["metric"]], repeats=repeats,
                                                  threshold=threshold)[0], list(zip(items, rows)), workers=width(judge))
    judged = []
    for item, row, got in zip(items, rows, every):
        human = row["human"]
        judged.append({"id": item["key"], "metric": row["metric"], "human": float(human), "judge": got[row["metric"]],
                       "reason": got[f"{row['metric']} reason"], "outcome": got[f"{row['metric']} outcome"]})
    frame = pd.DataFrame(judged).set_index("id")
    scored = frame.dropna(subset=["judge"])
    values: dict[str, Any] = {"items": len(frame), "scored": len(scored), "threshold": threshold,
                              "judge_name": judge_name(judge), "questions": len(frame)}
    if len(scored) < 2:
        values.update({"kappa": None, "weighted_kappa": None, "spearman": None, "agreement": None,
                       "reason": f"only {len(scored)} item(s) got a score from the judge"})
    else:
        h, j = scored["human"].to_numpy(), scored["judge"].to_numpy()
        rho = spearmanr(h, j).statistic if len(set(h)) > 1 and len(set(j)) > 1 else None
        values.update({"kappa": cohen_kappa(h >= threshold, j >= threshold),
                       "weighted_kappa": cohen_kappa(np.rint(h * 4), np.rint(j * 4), weights="quadratic"),
                       "spearman": None if rho is None else float(rho),
                       "agreement": float(np.mean((h >= threshold) == (j >= threshold)))})
    return Report("calibration", values, frame, started=started)


def cohen_kappa(a: Sequence | np.ndarray, b: Sequence | np.ndarray, weights: str | None = None) -> float | None:
    """Cohen's kappa of two raters over the same items (quadratic weights on ordered labels when
    asked); None when it is undefined (every label the same for both)."""
    a, b = np.asarray(a), np.asarray(b)
    labels = np.unique(np.concatenate([a, b]))
    index = {v: i for i, v in enumerate(labels)}
    n = len(labels)
    observed = np.zeros((n, n))
    for x, y in zip(a, b):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    if weights == "quadratic":  # distances on the labels' own scale
        scale = labels.astype(float)
        w = (scale[:, None] - scale[None, :]) ** 2
    else:
        w = (np.arange(n)[:, None] != np.arange(n)[None, :]).astype(float)
    denominator = (w * expected).sum()
    if denominator == 0:
        return None
    return float(1 - (w * observed).sum() / denominator)
