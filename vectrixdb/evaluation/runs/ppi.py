"""ppi_mean: a judged metric's mean from many model verdicts and a few human ones, with an honest interval.

A model judged N + n answers; people judged n of them too. The model's mean alone is biased by
however far the judge is from people; the people's mean alone is unbiased but wide. Prediction-
powered inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered
inference", Science 2023; ARES, Saad-Falcon et al. 2024, uses it for RAG judges) keeps the people's
unbiasedness and borrows the model's numbers: the n doubly judged answers measure the judge's
error (the rectifier), which is subtracted from the model's mean over the N others.

RULE (PPI++ power tuning: Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered
inference", 2023; as ppi_py.ppi_mean_ci computes it), with f the model's verdict, y the person's:

    estimate = lambda * mean_N(f) + mean_n(y - lambda * f)
    se^2     = var_N(lambda * f) / N + var_n(y - lambda * f) / n
    lambda   = cov_n(y, f) / ((1 + n / N) * var(f over all N + n)), clipped to [0, 1]
    interval = estimate -/+ z_{1 - alpha/2} * se   (normal; cut to [0, 1] when every verdict lies there)

lambda = 1 is plain PPI (tune=False); lambda = 0 is the people alone; the tuned lambda is never
asymptotically wider than either. Beside it, the human-only interval over the n: Wilson's for yes/no
verdicts, else Student's t. The model-only mean is shown without an interval: its bias is unknown.

Both intervals rest on the n answers people judged being a random sample of all N + n (choose
them at random, not the hard ones). The normal interval needs n large enough for a mean of n
(tens, not a handful).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.report import Report, now

RULE = ("PPI++ (Angelopoulos et al. 2023): estimate = lambda * mean_N(model) + mean_n(human - lambda * model), "
        "lambda = cov_n(human, model) / ((1 + n/N) var(model)) in [0, 1] ({how}), normal {level:g}% interval from "
        "var_N(lambda * model)/N + var_n(human - lambda * model)/n; beside it the human-only {level:g}% interval "
        "({human}). Valid when the n people judged are a random sample of the answers.")


def _wilson(y: np.ndarray, confidence: float) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(int(y.sum()), len(y)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def human_only(y, *, confidence: float = 0.95) -> dict:
    """The mean of human verdicts with its interval: Wilson for 0/1 verdicts, else Student's t."""
    from scipy.stats import t

    y = np.asarray(y, dtype=float)
    n = len(y)
    binary = bool(np.isin(y, (0, 1)).all())
    out: dict[str, Any] = {"estimate": float(y.mean()) if n else None, "ci": None, "n": n,
                           "method": "Wilson" if binary else "Student's t", "reason": None}
    if n < 2:
        out["reason"] = f"{n} human verdict(s): an interval needs at least two"
    elif binary:
        out["ci"] = list(_wilson(y, confidence))
    elif y.std() == 0:
        out["reason"] = "every human verdict is the same: a t interval would be a single point"
    else:
        half = t.ppf(0.5 + confidence / 2, n - 1) * y.std(ddof=1) / math.sqrt(n)
        out["ci"] = [float(y.mean() - half), float(y.mean() + half)]
    return out


def ppi_arrays(unlabelled, labelled, human, *, confidence: float = 0.95, tune: bool = True) -> dict:
    """PPI on plain arrays: the model's verdicts on the N answers no person judged (`unlabelled`),
    its verdicts on the n that people judged (`labelled`) and the people's (`human`, aligned with
    `labelled`). Returns estimate, ci, se, lambda, n, N and a reason where a number is undefined."""
    from scipy.stats import norm

    if not 0 < confidence < 1:
        raise BadInput(f"confidence must lie strictly between 0 and 1, not {confidence}")
    f_u, f_l, y = (np.asarray(v, dtype=float).ravel() for v in (unlabelled, labelled, human))
    if len(f_l) != len(y):
        raise BadInput(f"labelled ({len(f_l)}) and human ({len(y)}) must hold the same answers, in one order")
    for name, v in (("unlabelled", f_u), ("labelled", f_l), ("human", y)):
        if np.isnan(v).any():
            raise BadInput(f"{name} holds a missing verdict (NaN); drop unscored answers first")
    n, N = len(y), len(f_u)
    out: dict[str, Any] = {"estimate": None, "ci": None, "se": None, "lambda": None, "n": n, "N": N, "reason": None}
    if n < 2:
        out["reason"] = f"{n} answer(s) judged by both a person and the model: the judge's error needs at least two"
        return out
    if N == 0:
        out["reason"] = "no answer was judged by the model alone: nothing for it to add to the people's verdicts"
        return out
    if not tune:
        lam = 1.0
    else:
        var_f = float(np.var(np.concatenate([f_l, f_u]), ddof=1))
        cov = float(np.mean((y - y.mean()) * (f_l - f_l.mean())))
        lam = 0.0 if var_f == 0 else float(np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0))
    estimate = lam * f_u.mean() + (y - lam * f_l).mean()
    se = math.sqrt(np.var(lam * f_u) / N + np.var(y - lam * f_l) / n)
    out.update({"estimate": float(estimate), "se": se, "lambda": lam})
    if se == 0:
        out["reason"] = "every verdict is the same: a normal interval would be a single point"
        return out
    half = norm.ppf(0.5 + confidence / 2) * se
    low, high = estimate - half, estimate + half
    if all(((v >= 0) & (v <= 1)).all() for v in (f_u, f_l, y)):  # the mean lies in [0, 1]: cutting loses nothing
        low, high = max(low, 0.0), min(high, 1.0)
    out["ci"] = [float(low), float(high)]
    return out


def _keyed(value: Any, metric: str | None, role: str) -> tuple[dict, dict, str | None]:
    """(id -> verdict, id -> the model's verdict paired with it, metric) from a mapping, a Series,
    a calibration report (human verdicts and the judge's beside them) or a report with a metric column."""
    import pandas as pd

    if isinstance(value, Report):
        frame = value.frame
        if value.kind == "calibration" or {"metric", "human", "judge"} <= set(frame.columns):
            names = sorted(set(frame["metric"]))
            if metric is None and len(names) != 1:
                raise BadInput(f"the calibration holds metrics {names}: say which with metric=")
            metric = metric or names[0]
            rows = frame[frame["metric"] == metric]
            if not len(rows):
                raise BadInput(f"the calibration holds no item for metric {metric!r}; it holds {names}")
            column = "human" if role == "human" else "judge"
            return (dict(zip(map(str, rows.index), rows[column])), dict(zip(map(str, rows.index), rows["judge"])),
                    metric)
        if metric is None or metric not in frame.columns:
            raise BadInput(f"the {value.kind} report's {role} verdicts need metric= naming one of its columns "
                           f"({', '.join(map(str, frame.columns))})")
        return dict(zip(map(str, frame.index), frame[metric])), {}, metric
    if isinstance(value, pd.Series):
        return dict(zip(map(str, value.index), value)), {}, metric
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}, {}, metric
    raise BadInput(f"{role} verdicts must be a mapping id -> score, a pandas Series or a report, not "
                   f"{type(value).__name__} (plain arrays: pass labelled=, or use ppi_arrays)")


def _number(v) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def ppi_mean(model: Any, human: Any, *, labelled=None, metric: str | None = None, threshold: float | None = None,
             confidence: float = 0.95, tune: bool = True) -> Report:
    """The mean of a judged metric (accuracy, or any score in 0..1) from the model's verdicts on
    many answers and people's on some of the same, with the prediction-powered interval next to the
    human-only one (RULE above; report["rule"]).

    Keyed by question id: `model` maps ids to the model's verdicts (a dict, Series, or an answers /
    evaluation report with metric=), `human` maps ids to people's (dict, Series, or the calibration
    report calibrate() returns, whose judge column is then the model's verdict on those items).
    Answers people judged form the n; the model's other answers the N. Plain arrays: `model` the N
    unlabelled, `labelled` the model on the n, `human` the people on the n. `threshold` turns scores
    into pass (>= threshold) / fail first, for accuracy."""
    started = now()
    warnings: list[str] = []
    if labelled is not None:
        f_u, f_l, y = (np.asarray(v, dtype=float).ravel() for v in (model, labelled, human))
    else:
        people, paired, metric = _keyed(human, metric, "human")
        people = {q: h for q, h in people.items() if _number(h) is not None}  # no person's verdict: unlabelled
        verdicts, _, metric = _keyed(model, metric, "model")
        pairs = [(_number(paired.get(q, verdicts.get(q))), _number(h)) for q, h in people.items()]
        unscored = sum(1 for f, _ in pairs if f is None)
        pairs = [(f, h) for f, h in pairs if f is not None]
        missing = sum(1 for q, v in verdicts.items() if q not in people and _number(v) is None)
        if unscored:
            warnings.append(f"{unscored} answer(s) people judged have no model verdict: left out")
        if missing:
            warnings.append(f"{missing} answer(s) the model did not score: left out (if unscored answers differ, "
                            "the estimate is of the scored ones)")
        if not pairs:
            raise BadInput("no answer was judged by both a person and the model: match the ids of the two")
        f_l = np.array([f for f, _ in pairs])
        y = np.array([h for _, h in pairs])
        f_u = np.array([_number(v) for q, v in verdicts.items() if q not in people and _number(v) is not None])
    if threshold is not None:
        f_u, f_l, y = ((v >= threshold).astype(float) for v in (f_u, f_l, y))
    got = ppi_arrays(f_u, f_l, y, confidence=confidence, tune=tune)
    if 2 <= got["n"] < 30:
        warnings.append(f"only {got['n']} answers judged by people: the normal interval may cover less than "
                        f"{100 * confidence:g}% (the Wilson interval beside it holds better at this size)")
    alone = human_only(y, confidence=confidence)
    level = 100 * confidence
    rule = RULE.format(how="tuned" if tune else "fixed at 1: plain PPI", level=level, human=alone["method"])
    model_mean = float(np.concatenate([f_u, f_l]).mean()) if len(f_u) + len(f_l) else None
    import pandas as pd

    rows = [{"interval": "prediction-powered", "estimate": got["estimate"], "low": (got["ci"] or [None])[0],
             "high": (got["ci"] or [None, None])[1], "n": got["n"], "N": got["N"], "method": "PPI++ normal",
             "reason": got["reason"]},
            {"interval": "human only", "estimate": alone["estimate"], "low": (alone["ci"] or [None])[0],
             "high": (alone["ci"] or [None, None])[1], "n": alone["n"], "N": 0, "method": alone["method"],
             "reason": alone["reason"]},
            {"interval": "model only", "estimate": model_mean, "low": None, "high": None, "n": 0,
             "N": len(f_u) + len(f_l), "method": "mean of the model's verdicts",
             "reason": "no interval: the judge's bias is unknown without people's verdicts"}]
    frame = pd.DataFrame(rows).set_index("interval")
    for column in ("method", "reason"):  # text with gaps stays None (pandas would make the gaps NaN), as it loads back
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    frame["width"] = frame["high"] - frame["low"]
    frame.attrs["rule"] = rule
    widths = frame["width"][["prediction-powered", "human only"]]
    values = {"metric": metric, "threshold": threshold, "confidence": confidence, "n": got["n"], "N": got["N"],
              "questions": got["n"] + got["N"], "estimate": got["estimate"], "ci": got["ci"], "lambda": got["lambda"],
              "human_only": {"estimate": alone["estimate"], "ci": alone["ci"], "method": alone["method"]},
              "model_only": model_mean, "rule": rule, "warnings": warnings,
              "width_ratio": (float(widths["prediction-powered"] / widths["human only"])
                              if widths.notna().all() and widths["human only"] > 0 else None)}
    reason = got["reason"] or alone["reason"]
    if reason:
        values["reason"] = reason
    return Report("ppi", values, frame, started=started)


def ppi_plot(report, ax=None):
    """The prediction-powered and human-only intervals side by side, the model-only mean as a mark."""
    from vectrixdb.plotting import _figure

    fig, ax = _figure(ax, figsize=(6, 2.6))
    frame = report.frame
    for y, (_name, row) in enumerate(frame.iterrows()):
        if row["estimate"] is None or _missing(row["estimate"]):
            continue
        if not _missing(row["low"]):
            ax.errorbar(row["estimate"], y, xerr=[[row["estimate"] - row["low"]], [row["high"] - row["estimate"]]],
                        fmt="o", capsize=4)
            ax.text(row["high"], y, f"  width {row['width']:.3f}", va="center", fontsize=8)
        else:
            ax.plot(row["estimate"], y, marker="x", color="grey", linestyle="none")
            ax.text(row["estimate"], y, "   no interval: the judge's bias is unknown", va="center", fontsize=8)
    ax.set_yticks(range(len(frame)), [f"{name}\n(n={r['n']}, N={r['N']})" for name, r in frame.iterrows()], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"{report.get('metric') or 'mean verdict'} ({100 * report['confidence']:g}% intervals)")
    ax.set_title(f"{report['n']} answers judged by people, {report['N']} by the model alone", fontsize=9)
    fig.tight_layout()
    return fig


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
