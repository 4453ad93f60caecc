"""What a run page shows beside its figures so a person can decide with them: how much of the top k
nobody judged, and the smallest difference its questions can detect.

Which runs get the panel, how their share is counted and which measures are sized is how their kind
is shown (`Show.judged`, present/shows.py; an outside kind may declare `Kind.judged` itself): nothing
here names a kind. A kind with no Judged (or a run of a kind nobody registered) gets no panel. The
two ways of counting below are the built-in kinds' hooks (present/shows_builtin.py).

Unjudged share (issue 31). A retrieval report carries it (`ranked_unjudged`): `report["unjudged"][k]` over all the
questions' top-k results at its grain, `unjudged@k` per question (evaluation/retrieval/scoring.py). A
run_evaluation run (Retrieval or RAG) keeps, per question and level, what it expected and what
its k chunks returned, so the share is read from those (`level_unjudged`): at each level with
labels, the returned items that are neither expected nor in a `<level> not relevant` column (a
grade-0 label), over the returned items, counted over the questions that expect something at
that level. A run that did not record its grade-0 labels counts them as unjudged, so its share is
an upper bound, and the page says so.

Power. questions_needed (evaluation/runs/power.py) on the run alone, for its headline measures: the
smallest true difference its questions would detect with 80% power at alpha 0.05 against a second
system of the same spread and independent of it (correlation 0, the widest case), by the paired
t-test (graded measures) or the exact McNemar test (yes/no ones). Two runs compared on the
Experiments page give the paired figure instead.
"""
from __future__ import annotations

import math
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.kinds import KINDS, Judged, call

ALPHA, POWER = 0.05, 0.8
LEVELS = ("chunk", "page", "doc")
UNJUDGED_RULE = ("Unjudged: of the top-k results at the report's grain, the share no label judges (neither expected "
                 "nor judged not relevant with grade 0), over all questions' results together; a 'miss' among them "
                 "may be a right answer nobody labelled. pooling.pool collects them for a person to judge.")
UPPER_BOUND = ("This run did not record which results its golden file judged not relevant (grade 0), so they are "
               "counted as unjudged: the share is an upper bound.")


def judged_of(report) -> Judged | None:
    """The run's Judged (how its kind is shown, present/shows.py, when this run has judged results), else None."""
    from vectrixdb.present.shows import judged_for

    kind = KINDS.get(report.kind)
    return judged_for(kind, report) if kind is not None else None


def applies(report) -> bool:
    """Whether the run has results to be judged, as its kind declares (Kind.judged)."""
    return judged_of(report) is not None


def decisions(report) -> dict[str, Any] | None:
    """{"unjudged", "power"} for a run whose kind declares judged results (None for others); kept
    on the report, which a completed run never changes."""
    if not applies(report) or report.frame is None or not len(report.frame):
        return None
    cached = report.__dict__.get("_decisions")
    if cached is None or cached[0] is not report.frame:
        cached = (report.frame, {"unjudged": unjudged(report), "power": power(report)})
        report.__dict__["_decisions"] = cached
    return cached[1]


def _largest_k(report) -> int | None:
    k = report.get("k")
    k = max(k) if isinstance(k, list) and k else k
    return int(k) if isinstance(k, (int, float)) and not isinstance(k, bool) else None


def unjudged(report) -> dict[str, Any] | None:
    """{"k", "rows": [(what, share, of)], "rule", "note", "per_question": {id: text}}, counted by
    the kind's own hook (Judged.unjudged); None where the kind declares no judged results."""
    spec = judged_of(report)
    return call(spec.unjudged, report) if spec else None


def ranked_unjudged(report) -> dict[str, Any]:
    """A retrieval report's share, as it recorded it per cut-off at its grain (`unjudged@k`)."""
    k = _largest_k(report)
    shares = report.get("unjudged") or {}
    out: dict[str, Any] = {"k": k, "grain": report.get("by"), "rule": UNJUDGED_RULE, "note": None, "rows": [],
                           "per_question": {}}
    if not isinstance(shares, dict) or not shares:
        out["note"] = "not recorded by this run (saved before retrieval reports measured judgement holes)"
        return out
    frame = report.frame
    for at, share in sorted(shares.items(), key=lambda kv: int(kv[0])):
        column = f"unjudged@{at}"
        answered = int(frame[column].notna().sum()) if column in frame else None
        out["rows"].append({"what": f"top {at} by {report.get('by')}", "share": share, "questions": answered})
    column = f"unjudged@{k}"
    if k is not None and column in frame:
        for qid, share, got in zip(frame.index, frame[column], frame.get("retrieved", [None] * len(frame))):
            returned = min(k, len(got)) if isinstance(got, (list, tuple)) else None
            out["per_question"][str(qid)] = _text(share, returned, k, report.get("by"))
    return out


def _text(share: Any, returned: int | None, k: int | None, grain: str | None) -> str:
    if share is None or (isinstance(share, float) and math.isnan(share)):
        return f"nothing returned in the top {k}: no share"
    count = f"{round(share * returned)} of {returned} " if returned else ""
    return f"{count}results in the top {k} by {grain} unjudged ({share:.0%})"


def level_unjudged(report) -> dict[str, Any]:
    """A run_evaluation run's share, read at each labelled level from what it expected and returned."""
    frame, k = report.frame, _largest_k(report)
    out: dict[str, Any] = {"k": k, "grain": "each level", "rule": UNJUDGED_RULE, "note": None, "rows": [],
                           "per_question": {}}
    recorded = True
    texts: dict[str, list[str]] = {}
    for level in LEVELS:
        if f"{level} expected" not in frame or f"{level} retrieved" not in frame:
            continue
        judged_not = frame[f"{level} not relevant"] if f"{level} not relevant" in frame else None
        recorded &= judged_not is not None
        unjudged_total = returned_total = questions = 0
        for i, (qid, want, got) in enumerate(zip(frame.index, frame[f"{level} expected"], frame[f"{level} retrieved"])):
            if not isinstance(want, (list, tuple)) or not want or not isinstance(got, (list, tuple)):
                continue  # nothing expected at this level: the question is not labelled at this grain
            known = set(want) | set(judged_not.iloc[i] if judged_not is not None and
                                    isinstance(judged_not.iloc[i], (list, tuple)) else [])
            holes = sum(1 for x in got if x not in known)
            questions += 1
            unjudged_total, returned_total = unjudged_total + holes, returned_total + len(got)
            if got:
                texts.setdefault(str(qid), []).append(f"{level}: {holes} of {len(got)} unjudged ({holes / len(got):.0%})")
        if questions:
            out["rows"].append({"what": f"{level}s from the top {k} chunks", "questions": questions,
                                "share": unjudged_total / returned_total if returned_total else None})
    out["per_question"] = {q: "; ".join(t) for q, t in texts.items()}
    if out["rows"] and not recorded:
        out["note"] = UPPER_BOUND
    elif not out["rows"]:
        out["note"] = "no question of this run expects anything at any level: nothing to call judged"
    return out


def headline_measures(report) -> list[str]:
    """The measures the run page sizes, as the kind's hook names them (Judged.measures), keeping
    those the run has per question as numbers; none where the kind declares no judged results."""
    from pandas.api.types import is_numeric_dtype

    spec, frame = judged_of(report), report.frame
    wanted = list(call(spec.measures, report)) if spec and frame is not None else []
    return [c for c in dict.fromkeys(wanted) if c in frame and is_numeric_dtype(frame[c]) and frame[c].notna().any()]


def ranked_measures(report) -> list[str]:
    """A retrieval report's: nDCG, recall and MRR at the largest k, and the first result's hit rate."""
    k = _largest_k(report)
    return [f"ndcg@{k}", f"recall@{k}", f"mrr@{report.get('depth')}", "hit_rate@1"]


def level_measures(report) -> list[str]:
    """A run_evaluation run's: each labelled level's set recall and each judged metric."""
    frame = report.frame
    recall = [c for level in LEVELS for c in frame.columns if str(c).split("@")[0] == f"{level}_recall"
              and f"{level} expected" in frame and frame[f"{level} expected"].map(lambda v: bool(v)).any()]
    return recall + [str(c)[:-len(" reason")] for c in frame.columns if str(c).endswith(" reason")]


def power(report) -> dict[str, Any]:
    """{"rows": [{measure, n, mean, model, detectable, reason}], "rule", "alpha", "power"}."""
    from vectrixdb.evaluation.runs.power import questions_needed

    measures = headline_measures(report)
    out: dict[str, Any] = {"alpha": ALPHA, "power": POWER, "rows": [], "rule": None, "reason": None}
    if not measures:
        out["reason"] = "no per-question measure to size a test on"
        return out
    try:
        got = questions_needed(report, alpha=ALPHA, power=POWER, measures=measures)
    except BadInput as exc:
        out["reason"] = str(exc)
        return out
    out["rule"] = got["rule"]
    for measure, row in got.frame.iterrows():
        out["rows"].append({"measure": measure, "n": int(row["n"]), "mean": row["a"], "model": row["model"],
                            "detectable": row["detectable"], "reason": row["reason"]})
    return out


def comparison_rows(exp) -> list[dict[str, Any]]:
    """The Experiments page's measures: compare_runs' verdict with its detectable difference beside
    it and, for a "could be luck", whether these questions could have told a difference that size."""
    why = exp.get("undetectable") or {}
    rows = []
    for measure, r in exp.frame.iterrows():
        difference, detectable, verdict = r["difference"], r.get("detectable"), r["verdict"]
        detectable = None if detectable is None or (isinstance(detectable, float) and math.isnan(detectable)) \
            else float(detectable)
        if detectable is None:
            tell = why.get(measure) or "no detectable difference for these questions"
        elif verdict != "could be luck":
            tell = "told apart"
        elif abs(difference) < detectable:
            tell = (f"could not tell: |B − A| = {abs(difference):.3g} is below the {detectable:.3g} these "
                    "questions detect with 80% power; more questions needed")
        else:
            tell = f"could tell {detectable:.3g} or more with 80% power; this difference did not pass the test"
        rows.append({"measure": str(measure), "a": r["a"], "b": r["b"], "difference": difference,
                     "low": r["ci low"], "high": r["ci high"], "p_holm": r["p_holm"], "verdict": verdict,
                     "detectable": detectable, "tell": tell, "paired": r["paired"]})
    return rows
