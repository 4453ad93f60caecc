"""The certification rules: a run's headline figures, its SLA compliance and its overall grade.

SLA thresholds come from a small JSON or YAML file, a mapping from a figure's name to a minimum,
or to `{min: x}` / `{max: x}`:

    ndcg@10: 0.60                 # at least 0.60
    doc_capped_recall@5: {min: 0.8}
    accuracy: {min: 0.85}
    duration_s: {max: 600}        # at most ten minutes

Figure names are those figures() gives: `ndcg@10`, `recall@10`, `mrr@100`, the set figures of a
run's levels with their k (`doc_f1@10`, `page_capped_recall@5`), accuracy, groundedness,
found_share / right_share (a chunking comparison's best build) and duration_s. A name without
`@k` (`ndcg`, `recall`, `page_f1`, the names SLA files used before set figures carried their k)
reads as that figure at the run's largest k, and the SLA row says so ("page_f1, read as
page_f1@10"), so an older file keeps applying. A threshold whose figure the run does not have, or
that its kind's declaration does not let apply (Kind.sla), does not apply to it and is counted apart;
nor does one whose figure the kind gives a unit (Kind.units: ms, counts, $ are not 0..1 scores; the
shared duration_s, in seconds, is the one figure with a unit a threshold reads, by its own max). Without a file, DEFAULT_SLA applies, and the page says so.

The grade (GRADE_RULE says it in words; every page that shows a grade prints it) averages only
figures whose best possible value is 1 for every question at every k, so it measures quality,
not the cut-off: nDCG@k (the ideal ranking is cut at the same k), MRR, capped recall@k (found /
min(k, expected), BEIR's R_cap@k, per level), accuracy, groundedness, found and right share,
and never a figure its kind gives a unit (Kind.units), whatever its name.
Set precision and F1 at k are shown but not graded: with k results and R expected items their
best is 2 min(k, R) / (k + R) at chunk level (0.18 for one expected chunk at k = 10). Each graded
figure can only rise when a right answer moves up, so the grade can too. A from 0.90, B from 0.80,
C from 0.70, D from 0.60, F below; a run that misses an applicable SLA threshold is graded C at
best; a run that did not complete gets no grade. Nothing is rounded before it is compared.

Whether the questions support the grade (SUPPORT_RULE, support()): the grade's score is a mean over
the run's n questions, so it has an interval. It is Wilson's 95% score interval at that mean with
n questions (Wilson 1927), which holds for any per-question score in 0..1, since such a score with
mean p varies at most as a yes/no one does (variance <= p(1 - p)). The grade is supported when
that interval is at most one grade band (0.10) wide; otherwise the grade says plainly that the run
has too few questions to support it, which grades the interval spans, and about how many
questions would pin it within one band. One question never does (0.21 to 1 for a perfect one);
40 perfect ones do (0.91 to 1); 40 at 0.85 do not (0.71 to 0.93, C to A; about 196 would).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.extras import needs

DEFAULT_SLA: dict[str, dict[str, float]] = {
    "ndcg": {"min": 0.60}, "mrr": {"min": 0.50},
    "doc_capped_recall": {"min": 0.80}, "page_capped_recall": {"min": 0.70}, "chunk_capped_recall": {"min": 0.60},
    "accuracy": {"min": 0.80}, "groundedness": {"min": 0.90}, "found_share": {"min": 0.80},
}
GRADED = re.compile(r"ndcg@\d+|mrr(@\d+)?|(chunk|page|doc)_capped_recall@\d+|accuracy|groundedness|found_share|right_share")
QUALITY = ("ndcg", "mrr", "chunk_capped_recall", "page_capped_recall", "doc_capped_recall", "accuracy", "groundedness",
           "found_share", "right_share")  # the graded families (GRADED spells them with their k)
LETTERS = ((0.90, "A"), (0.80, "B"), (0.70, "C"), (0.60, "D"))
BAND = 0.10  # the width of a grade band (A from 0.90, B from 0.80, ...)
SUPPORT_RULE = ("Support: the grade's score is a mean over the run's questions; its 95% Wilson interval (valid for any "
                "per-question score in 0..1) must be at most one grade band (0.10) wide, else the run has too few "
                "questions to support its grade.")
GRADE_RULE = ("Grade: the mean of the run's figures that can reach 1 for every question at any k - nDCG@k, MRR, "
              "capped recall@k (found / min(k, expected), per level), accuracy, groundedness, found share - "
              "whichever the run has: A from 0.90, B from 0.80, C from 0.70, D from 0.60, F below. Set precision "
              "and F1@k are shown, not graded: their best is 2·min(k, R)/(k + R) for R expected items (0.18 for one "
              "at k = 10). A run that misses an applicable SLA threshold is graded C at best; a run that did not "
              "complete is not graded, nor is one whose figures cannot fail (labels finer than the grain, every question "
              "expecting every document the collection holds). " + SUPPORT_RULE)


# How the two verdicts on a certificate relate, printed beside them (a grade D above "MEETS SLA" looked
# like a contradiction): they answer different questions.
SLA_AND_GRADE = ("The SLA verdict checks this run against the thresholds in force (yours, or the defaults); the "
                 "grade rates the same figures on a fixed scale. A run can meet thresholds set below the grade "
                 "bands and still grade D; missing an applicable threshold caps the grade at C.")


def graded(name: str) -> bool:
    """Whether a figure takes part in the grade (GRADE_RULE)."""
    return bool(GRADED.fullmatch(name))


def figures(report, *, aliases: bool = False) -> dict[str, float]:
    """The run's headline figures by name (only those it has, only numbers), set figures with
    their k, as its kind declares them (evaluation/runs/kinds.py: `headline`, plus the kind's
    certificate `figures`: an `evaluate` run's best setup's, a RAG or retrieval evaluation's
    capped recall per level, a chunking comparison's found and right share), and duration_s.
    `aliases` is kept for callers; names without @k are resolved by resolve()."""
    from vectrixdb.evaluation.runs.kinds import call, kind_of

    kind = kind_of(report.kind)
    out = {k: v for k, v in kind.headline_of(dict(report)).items() if _number(v)}
    if kind.figures:
        out.update(call(kind.figures, report))
    if isinstance(report.meta.get("duration_s"), (int, float)):
        out["duration_s"] = float(report.meta["duration_s"])
    if aliases:
        out.update({name: out[resolved] for name in DEFAULT_SLA if (resolved := resolve(name, out)) and name not in out})
    return out


def failless(report, figure: str) -> str | None:
    """Why `figure` of this run cannot fail (the whole report's cannot_fail, or its level's in
    cannot_fail_levels: `doc_f1@10` of a one-document store), None when it can."""
    from vectrixdb.evaluation.retrieval.measures import family_of

    if family_of(figure) is None and not graded(figure):  # not a score (duration_s): nothing to fail
        return None
    whole = report.get("cannot_fail") or []
    if whole:
        return "; ".join(whole)
    levels = report.get("cannot_fail_levels") or {}
    return levels.get(str(figure).split("_", 1)[0]) if isinstance(levels, dict) else None


def attainable(report, figure: str) -> float | None:
    """The best mean `figure` could reach on this run's labels (the mean over its questions of
    measures' Family.best for each one's count of expected items), when that is below 1: set
    precision and F1 at k, whose best with R expected items is min(k, R)/k and 2 min(k, R)/(k + R).
    None for a figure that can reach 1 on every question, or when the run does not say R."""
    from vectrixdb.evaluation.retrieval.measures import Family, family_of

    family = family_of(figure)
    k = figure.split("@", 1)[1] if "@" in figure else ""
    if family is None or family.best is Family.best or not k.isdigit():
        return None
    counts = [r for r in _expected_counts(report, figure) if r > 0]
    best = sum(family.best(int(k), r) for r in counts) / len(counts) if counts else None
    return best if best is not None and best < 1 else None


def heat_value(figure: str, value: Any, row: Any) -> float | None:
    """What a question's cell is coloured by: its score, or, for a figure whose best depends on the
    question's labels (set precision and F1 at k), its share of that best (row: the question's
    row, whose `<level> expected` or `expected_n` says how many items it expects); None for no colour
    (not a number, or a coverage figure)."""
    from vectrixdb.evaluation.retrieval.measures import Family, direction_of, family_of

    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or direction_of(figure) != "higher":
        return None
    family, k = family_of(figure), figure.split("@", 1)[1] if "@" in figure else ""
    if family is None or family.best is Family.best or not k.isdigit():
        return number
    level = figure.split("_", 1)[0]
    expected = row.get(f"{level} expected" if level in ("doc", "page", "chunk") else "expected_n")
    count = len(expected) if isinstance(expected, (list, tuple)) else int(expected) if _number(expected) else 0
    return min(number / family.best(int(k), count), 1.0) if count else number


def _expected_counts(report, figure: str) -> list[int]:
    """How many items each question expects at the figure's level (`page_f1@10`: its expected pages;
    `f1@10` of a retrieval report: its labels at the report's grain)."""
    frame = getattr(report, "frame", None)
    if frame is None:
        return []
    level = figure.split("_", 1)[0]
    column = f"{level} expected" if level in ("doc", "page", "chunk") else "expected_n"
    if column not in frame:
        return []
    return [len(x) if isinstance(x, (list, tuple)) else int(x) if _number(x) else 0 for x in frame[column]]


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def capped_recall(report) -> dict[str, float]:
    """`<level>_capped_recall@k` of a run_evaluation run (kinds_builtin.capped_recall, its rule)."""
    from vectrixdb.evaluation.runs.kinds_builtin import capped_recall as of

    return of(report)


def resolve(name: str, got: dict[str, float]) -> str | None:
    """The figure an SLA name means for this run: itself, or for a name without @k the figure of
    that name at the run's largest k (`page_f1` -> `page_f1@10`, `recall` -> `recall@10`)."""
    if name in got:
        return name
    if "@" in name:
        return None
    named = [k for k in got if re.fullmatch(rf"{re.escape(name)}@\d+", k)]
    return max(named, key=lambda k: int(k.rsplit("@", 1)[1])) if named else None


def load_sla(path: str | None) -> tuple[dict[str, dict[str, float]], str]:
    """(thresholds, where they came from) from a JSON or YAML file, or the defaults."""
    if path is None:
        return {k: dict(v) for k, v in DEFAULT_SLA.items()}, "defaults (no SLA file given)"
    from vectrixdb import io

    try:
        text = io.read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: no SLA file there") from None
    if path.lower().endswith((".yaml", ".yml")):
        try:
            with needs("serve"):
                import yaml
        except ImportError:
            raise BadInput("a YAML SLA file needs PyYAML (pip install 'vectrixdb[serve]'); or give JSON") from None
        data = yaml.safe_load(text)
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BadInput(f"{path}: not JSON ({exc})") from None
    return parse_sla(data, path), path


def parse_sla(data: Any, where: str = "SLA") -> dict[str, dict[str, float]]:
    if not isinstance(data, dict) or not data:
        raise BadInput(f"{where}: give a mapping from figure name to a minimum or {{min: x}} / {{max: x}}")
    out = {}
    for name, rule in data.items():
        rule = {"min": rule} if isinstance(rule, (int, float)) and not isinstance(rule, bool) else rule
        if not isinstance(rule, dict) or not rule or set(rule) - {"min", "max"} or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in rule.values()):
            raise BadInput(f"{where}: threshold {name!r} must be a number or {{min: x}} / {{max: x}}, not {rule!r}")
        out[str(name)] = {k: float(v) for k, v in rule.items()}
    return out


def compliance(report, sla: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Each threshold against the run's figure: rows of (figure, rule, actual, verdict) and the
    verdict over the thresholds that apply to the run (those whose figure it has)."""
    got = figures(report)
    kind = _kind(report)
    declared = kind.sla  # the SLA names the kind lets apply; None: any whose figure it has
    rows: list[dict[str, Any]] = []
    for name, rule in sla.items():
        figure = resolve(name, got) if declared is None or name.split("@")[0] in declared else None
        text = " and ".join(f"{'≥' if k == 'min' else '≤'} {v:g}" for k, v in rule.items())
        unit = kind.units.get(figure.split("@")[0]) if figure else None  # the kind's units: not scores
        if figure is None or unit:
            why = f"does not apply ({figure} is in {unit}, not a 0..1 score)" if unit else "does not apply"
            rows.append({"figure": name, "rule": text, "actual": None, "verdict": why})
            continue
        if failless(report, figure):  # met by any retriever: judging it would say nothing
            rows.append({"figure": name, "rule": text, "actual": got[figure],
                         "verdict": "does not apply (cannot fail: the run says why)"})
            continue
        actual = got[figure]
        ok = ("min" not in rule or actual >= rule["min"]) and ("max" not in rule or actual <= rule["max"])
        shown = name if figure == name else f"{name}, read as {figure}"
        rows.append({"figure": shown, "rule": text, "actual": actual, "verdict": "pass" if ok else "fail"})
    failed = [r for r in rows if r["verdict"] == "fail"]
    applicable = [r for r in rows if not r["verdict"].startswith("does not apply")]
    apart = len(rows) - len(applicable)
    rest = f"; {apart} do{'es' if apart == 1 else ''} not apply to {_what(report)}" if apart else ""
    if report.get("cannot_fail"):  # thresholds on figures that cannot fail are met by any retriever
        verdict = "SLA NOT JUDGED: these figures cannot fail, so any retriever would meet any threshold"
        return {"rows": rows, "verdict": verdict, "met": False, "applicable": len(applicable), "not_applicable": apart}
    if not applicable:
        verdict = f"NO SLA THRESHOLD APPLIES (none of {len(rows)} applies to {_what(report)})"
    elif failed:
        verdict = f"FAILS SLA ({len(failed)} of {len(applicable)} applicable thresholds missed{rest})"
    else:
        verdict = f"MEETS SLA ({len(applicable)} of {len(applicable)} applicable thresholds met{rest})"
    return {"rows": rows, "verdict": verdict, "met": bool(applicable) and not failed,
            "applicable": len(applicable), "not_applicable": apart}


def _kind(report):
    from vectrixdb.evaluation.runs.kinds import kind_of

    return kind_of(report.kind)


def _what(report) -> str:
    return _kind(report).words(dict(report))


def grade(report, sla: dict[str, dict[str, float]]) -> dict[str, Any]:
    """{"letter", "score", "why", "graded"} by GRADE_RULE."""
    status = report.meta.get("status")
    if status != "completed":
        return {"letter": "–", "score": None, "why": f"not graded: the run is {status}", "graded": {}}
    flags = report.get("cannot_fail") or []
    if flags:  # a figure that cannot fail grades nothing: an A here would only say the test was empty
        return {"letter": "–", "score": None, "graded": {},
                "why": f"not graded: these figures cannot fail, for {len(flags)} reason(s) the run states (cannot_fail)"}
    got = figures(report)
    extra = _kind(report).grades  # figures the kind declares gradable (each can reach 1 for every question)
    kind = _kind(report)
    quality = {k: v for k, v in got.items() if (graded(k) or k.split("@")[0] in extra) and not kind.unit_of(k)
               and not failless(report, k)}
    if not quality:
        why = "; ".join(dict.fromkeys(r for k in got if (r := failless(report, k))))
        return {"letter": "–", "score": None, "graded": {},
                "why": "not graded: the run has no graded figure" + (f" that can fail ({why})" if why else "")}
    score = sum(quality.values()) / len(quality)
    letter = next((letter for floor, letter in LETTERS if score >= floor), "F")
    best = report.get("best")
    setup = ""
    if isinstance(best, dict) and "mode" in best:  # an evaluate run is graded on its best setup: say which
        from vectrixdb.evaluation.runs.kinds_builtin import best_text

        setup = f"the best setup, {best_text(best)}: "
    why = f"{setup}mean of {len(quality)} graded figure(s) ({', '.join(f'{k} {v:.3f}' for k, v in quality.items())}) = {score:.3f}"
    sla_check = compliance(report, sla)
    if sla_check["verdict"].startswith("FAILS") and letter in ("A", "B"):
        letter, why = "C", why + "; capped at C because an SLA threshold was missed"
    backing = support(score, _questions(report), letter)
    return {"letter": letter, "score": score, "why": f"{why}. {backing['text']}", "graded": quality,
            "support": backing}


def _letter(score: float) -> str:
    return next((letter for floor, letter in LETTERS if score >= floor), "F")


def _questions(report) -> int | None:
    n = report.meta.get("questions", report.get("questions"))
    return int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) else None


def wilson(p: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's score interval (95% by default) for a mean p of n scores in 0..1; a mean outside
    0..1 (a figure with a unit, not a score) or n < 1 is refused, never a math error."""
    if not (isinstance(p, (int, float)) and 0.0 <= p <= 1.0) or not n or n < 1:
        raise BadInput(f"Wilson's interval is for a mean of n >= 1 scores in 0..1, not mean {p!r} of n={n!r} "
                       "(a figure with a unit is not a score and is not graded)")
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def support(score: float, n: int | None, letter: str | None = None) -> dict[str, Any]:
    """Whether n questions support the grade of `score` (SUPPORT_RULE): {"supported", "n", "low",
    "high", "spans", "needed", "text"}; `needed` is the fewest questions whose interval at this
    score is within one band."""
    letter = letter or _letter(score)
    if not n or n < 1:
        return {"supported": False, "n": n, "low": None, "high": None, "spans": None, "needed": None,
                "text": f"TOO FEW QUESTIONS to support grade {letter}: the run does not say how many it scored."}
    low, high = wilson(score, n)
    spans = _letter(low) if _letter(low) == _letter(high) else f"{_letter(low)} to {_letter(high)}"
    needed = n
    while wilson(score, needed)[1] - wilson(score, needed)[0] > BAND:
        needed *= 2
    small = max(n, needed // 2)
    while needed - small > 1:  # the width shrinks as n grows: bisect to the first n within a band
        middle = (small + needed) // 2
        small, needed = (small, middle) if wilson(score, middle)[1] - wilson(score, middle)[0] <= BAND else (middle, needed)
    ok = high - low <= BAND
    interval = f"its score {score:.3f} has the 95% interval {low:.3f} to {high:.3f} (Wilson)"
    if ok:
        text = f"{n} questions support grade {letter}: {interval}, within one grade band (0.10)."
    else:
        text = (f"TOO FEW QUESTIONS to support grade {letter}: with {n} question{'s' if n != 1 else ''}, {interval}, "
                f"wider than one grade band (0.10) and spanning grade{'s' if ' to ' in spans else ''} {spans}; "
                f"about {needed} questions would pin it within one band.")
    return {"supported": ok, "n": n, "low": low, "high": high, "spans": spans, "needed": needed, "text": text}
