"""The certification rules: a run's headline figures, its SLA compliance and its overall grade.

SLA thresholds come from a small JSON or YAML file, a mapping from a figure's name to a minimum,
or to `{min: x}` / `{max: x}`:

    doc_f1: 0.75            # at least 0.75
    accuracy: {min: 0.85}
    duration_s: {max: 600}  # at most ten minutes

Figure names are the dashboard's column names (chunk_f1, page_f1, doc_f1, accuracy,
groundedness, recall@10, ndcg@10, mrr@100, duration_s) plus `recall`, `ndcg` and `mrr` for the
run's largest cut-off, and `found_share` / `right_share` for a chunking comparison's best build.
Without a file, DEFAULT_SLA applies, and the page says so and prints it.

The grade (GRADE_RULE says it in words, and every page that shows a grade prints it): the mean of
the run's quality figures (those in QUALITY that the run has), A from 0.90, B from 0.80, C from
0.70, D from 0.60, F below; a run that misses any SLA threshold is graded C at best; a run that
did not complete gets no grade. Nothing is rounded before it is compared.
"""
from __future__ import annotations

import json
import re
from typing import Any

from vectrixdb.errors import BadInput

DEFAULT_SLA: dict[str, dict[str, float]] = {
    "doc_f1": {"min": 0.70}, "page_f1": {"min": 0.60}, "chunk_f1": {"min": 0.50},
    "accuracy": {"min": 0.80}, "groundedness": {"min": 0.90},
    "recall": {"min": 0.80}, "ndcg": {"min": 0.60}, "mrr": {"min": 0.50}, "found_share": {"min": 0.80},
}
QUALITY = ("chunk_f1", "page_f1", "doc_f1", "accuracy", "groundedness", "recall", "ndcg", "mrr",
           "found_share", "right_share")
LETTERS = ((0.90, "A"), (0.80, "B"), (0.70, "C"), (0.60, "D"))
GRADE_RULE = ("Grade: the mean of the run's quality figures (chunk, page and document F1, accuracy, "
              "groundedness, recall, nDCG, MRR, found share, whichever the run has): A from 0.90, B from 0.80, "
              "C from 0.70, D from 0.60, F below. A run that misses any SLA threshold is graded C at best; "
              "a run that did not complete is not graded.")


def figures(report, *, aliases: bool = True) -> dict[str, float]:
    """The run's headline figures by name (only those it has, only numbers); with aliases, also
    recall / ndcg / mrr for the largest cut-off (the names an SLA file may use)."""
    from vectrixdb.evaluation.runs import _headline

    values = dict(report)
    out = {k: v for k, v in _headline(values).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    for family in ("recall", "ndcg", "mrr"):
        named = [k for k in out if re.fullmatch(rf"{family}(@\d+)?", k)]
        if named and aliases and family not in out:
            out[family] = out[max(named, key=lambda k: int(k.split("@")[1]) if "@" in k else 0)]
    best = values.get("best") if report.kind == "chunking" else None
    if isinstance(best, dict) and best.get("of"):
        out["found_share"] = best["found"] / best["of"]
        if values.get("decided_by") == "answered right":
            out["right_share"] = best["right"] / best["of"]
    if isinstance(report.meta.get("duration_s"), (int, float)):
        out["duration_s"] = float(report.meta["duration_s"])
    return out


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
    """Each threshold against the run's figure: rows of (figure, rule, actual, verdict) and the verdict."""
    got = figures(report)
    rows = []
    for name, rule in sla.items():
        actual = got.get(name)
        if actual is None:
            verdict = "not measured"
        else:
            ok = ("min" not in rule or actual >= rule["min"]) and ("max" not in rule or actual <= rule["max"])
            verdict = "pass" if ok else "fail"
        text = " and ".join(f"{'≥' if k == 'min' else '≤'} {v:g}" for k, v in rule.items())
        rows.append({"figure": name, "rule": text, "actual": actual, "verdict": verdict})
    failed = [r for r in rows if r["verdict"] == "fail"]
    measured = [r for r in rows if r["verdict"] != "not measured"]
    if not measured:
        verdict = "NO SLA THRESHOLD APPLIES"
    elif failed:
        verdict = f"FAILS SLA ({len(failed)} of {len(measured)} thresholds missed)"
    else:
        verdict = f"MEETS SLA (all {len(measured)} thresholds met)"
    return {"rows": rows, "verdict": verdict, "met": bool(measured) and not failed}


def grade(report, sla: dict[str, dict[str, float]]) -> dict[str, Any]:
    """{"letter", "score", "why"} by GRADE_RULE."""
    status = report.meta.get("status")
    if status != "completed":
        return {"letter": "–", "score": None, "why": f"not graded: the run is {status}"}
    got = figures(report)
    quality = [got[k] for k in QUALITY if k in got]
    if not quality:
        return {"letter": "–", "score": None, "why": "not graded: the run has no quality figure"}
    score = sum(quality) / len(quality)
    letter = next((letter for floor, letter in LETTERS if score >= floor), "F")
    why = f"mean of {len(quality)} quality figure(s) = {score:.3f}"
    sla_check = compliance(report, sla)
    if not sla_check["met"] and sla_check["verdict"].startswith("FAILS") and letter in ("A", "B"):
        letter, why = "C", why + "; capped at C because an SLA threshold was missed"
    return {"letter": letter, "score": score, "why": why}
