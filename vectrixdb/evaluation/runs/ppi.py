"""ppi_mean: a judged metric's mean from many model verdicts and a few human ones, with an honest interval.

A model judged N + n answers; people judged n of them too. The model's mean alone is biased by
however far the judge is from people; the people's mean alone is unbiased but wide. Prediction-
powered inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered
inference", Science 2023; ARES, Saad-Falcon et al. 2024, uses it for RAG judges) keeps the people's
unbiasedness and borrows the model's numbers: the n doubly judged answers measure the judge's
error (the rectifier), which is subtracted from the model's mean over the N others.

RULE (PPI++ power tuning: Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered
inference", 2023), with f the model's verdict, y the person's:

    estimate = lambda * mean_N(f) + mean_n(y - lambda * f)
    lambda   = cov_n(y, f) / ((1 + n / N) * var(f over all N + n)), clipped to [0, 1]

The interval (small_sample=True, the default) is Student's t with a small-sample variance:

    se^2     = lambda^2 * var(f over all N + n) / N  +  jackknife variance of the estimate over the n
               (each person-judged answer left out in turn, lambda fitted again without it)
    df       = Welch-Satterthwaite from the two terms (N + n - 1 and n - 1 degrees of freedom)
    interval = estimate -/+ t_{df, 1 - alpha/2} * se   (cut to [0, 1] when every verdict lies there)

    yes/no verdicts (every model and person verdict 0 or 1): all of the above computed with four
    answers added to the n, one of each (model, person) pair: (1, 0), (0, 1), (1, 1), (0, 0)
    ("plus four", as Agresti and Caffo's interval for two proportions); the estimate and lambda
    reported stay the data's own, and the interval is stretched to hold the estimate.

Why: the interval ppi_py.ppi_mean_ci computes (small_sample=False: se^2 = var_N(lambda f) / N +
var_n(y - lambda f) / n with ddof 0, normal quantile) covered 0.875-0.94 at n = 30-50 in
benchmarks/ppi_coverage.json (scripts/ppi_coverage.py), and a t quantile with unbiased variances
alone still fell short: most of the gap is lambda being fitted on the same n answers (with lambda
known the same interval covers), which the jackknife counts and a plug-in variance does not. A
yes/no judge whose errors all go one way (passing 40% of wrong answers) was still short with the
jackknife alone (0.906 at n = 30, N = 1,000): its rare one-sided disagreements skew the rectifier
and a sample with few of them understates the variance; the four added answers put a disagreement
of each kind in every sample. Measured there (20,000 simulated data sets per setting, 95%
intervals; yes/no verdicts with judges agreeing 70, 85 and 95% both ways and the lenient one,
graded scores with a close and a noisy judge; N = 100 and 1,000): at n >= 30 the default covered
at least 0.948 in all 48 settings (ppi_py's: 0.875), 0.948 at n = 20 and 0.943 at n = 10. The price
is width where the judge is good and n small (95% agreement, n = 30, N = 1,000: 0.225 against 0.181
without the four answers), still narrower than people alone (0.336).

lambda = 1 is plain PPI (tune=False; the jackknife variance is then var_n(y - f) / n with ddof 1);
lambda = 0 is the people alone. Beside it, the human-only interval over the n: Wilson's with
continuity correction for yes/no verdicts (0.955 or more at n >= 30 there, where plain Wilson's
fell to 0.9265), else Student's t. The model-only mean is shown without an interval: its bias is unknown.

Both intervals rest on the n answers people judged being a random sample of all N + n (choose
them at random, not the hard ones). Below WARN_BELOW (30) person-judged answers ppi_mean warns:
there the interval may cover less than asked (0.943 at n = 10 in the simulation).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.report import Report, now
from vectrixdb.evaluation.runs.stats import wilson_cc

WARN_BELOW = 30  # ppi_mean warns with fewer person-judged answers than this (see the module docstring)

RULE = ("PPI++ (Angelopoulos et al. 2023): estimate = lambda * mean_N(model) + mean_n(human - lambda * model), "
        "lambda = cov_n(human, model) / ((1 + n/N) var(model)) in [0, 1] ({how}); {interval}; beside it the "
        "human-only {level:g}% interval ({human}). Valid when the n people judged are a random sample of the answers.")
SMALL_SAMPLE = ("{level:g}% Student's t interval, se^2 = lambda^2 var(model)/N + the jackknife variance over the n "
                "(lambda fitted again with each left out), Welch-Satterthwaite degrees of freedom; for yes/no verdicts "
                "computed with four answers added to the n, one of each (model, person) pair (plus four)")
PLUS_FOUR = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0))  # (model, person): one of each pair of yes/no verdicts
PPI_PY = ("normal {level:g}% interval from var_N(lambda * model)/N + var_n(human - lambda * model)/n "
          "(as ppi_py.ppi_mean_ci)")


def human_only(y, *, confidence: float = 0.95) -> dict:
    """The mean of human verdicts with its interval: Wilson's with continuity correction for 0/1
    verdicts (runs/stats.wilson_cc: plain Wilson fell to 0.9265 at n = 30 in
    benchmarks/ppi_coverage.json), else Student's t."""
    from scipy.stats import t

    y = np.asarray(y, dtype=float)
    n = len(y)
    binary = bool(np.isin(y, (0, 1)).all())
    out: dict[str, Any] = {"estimate": float(y.mean()) if n else None, "ci": None, "n": n,
                           "method": "Wilson, continuity-corrected" if binary else "Student's t", "reason": None}
    if n < 2:
        out["reason"] = f"{n} human verdict(s): an interval needs at least two"
    elif binary:
        out["ci"] = wilson_cc(int(y.sum()), n, confidence)
    elif y.std() == 0:
        out["reason"] = "every human verdict is the same: a t interval would be a single point"
    else:
        half = t.ppf(0.5 + confidence / 2, n - 1) * y.std(ddof=1) / math.sqrt(n)
        out["ci"] = [float(y.mean() - half), float(y.mean() + half)]
    return out


def ppi_rows(unlabelled, labelled, human, *, confidence: float = 0.95, tune: bool = True,
             small_sample: bool = True, plus_four: bool | None = None) -> dict[str, np.ndarray]:
    """ppi_arrays' arithmetic on many data sets at once, one per row of 2-D arrays (N >= 1 and n >= 2
    columns, no NaN: unchecked here; ppi_arrays checks one data set, scripts/ppi_coverage.py simulates
    thousands). Returns arrays estimate, se, df (inf for the normal interval), lambda, low and high
    (not cut to [0, 1]). plus_four (None: with small_sample, when every verdict is 0 or 1): the
    interval is computed with the four PLUS_FOUR answers added to the n (module docstring); the
    estimate and lambda are the data's own, and the interval is stretched to hold the estimate."""
    from scipy.stats import norm, t

    f_u, f_l, y = (np.atleast_2d(np.asarray(v, dtype=float)) for v in (unlabelled, labelled, human))
    n, N = y.shape[1], f_u.shape[1]
    lam = _lambda(f_u, f_l, y) if tune else np.ones(len(y))
    column = lam[:, None]
    estimate = lam * f_u.mean(axis=1) + (y - column * f_l).mean(axis=1)
    if plus_four is None:
        plus_four = small_sample and all(bool(np.isin(v, (0.0, 1.0)).all()) for v in (f_u, f_l, y))
    if plus_four:
        model, person = (np.tile(np.array(side, dtype=float), (len(y), 1)) for side in zip(*PLUS_FOUR))
        wide = ppi_rows(f_u, np.concatenate([f_l, model], axis=1), np.concatenate([y, person], axis=1),
                        confidence=confidence, tune=tune, small_sample=small_sample, plus_four=False)
        return {**wide, "estimate": estimate, "lambda": lam, "low": np.minimum(wide["low"], estimate),
                "high": np.maximum(wide["high"], estimate)}
    if small_sample:
        model = lam ** 2 * np.var(np.concatenate([f_l, f_u], axis=1), ddof=1, axis=1) / N
        people = _jackknife(f_u, f_l, y, tune)
        se = np.sqrt(model + people)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (model + people) ** 2 / (model ** 2 / (N + n - 1) + people ** 2 / (n - 1))
        df = np.where(np.isfinite(df), df, n - 1.0)
        half = t.ppf(0.5 + confidence / 2, df) * se
    else:  # ppi_py.ppi_mean_ci's interval, operation for operation
        se = np.sqrt(np.var(column * f_u, axis=1) / N + np.var(y - column * f_l, axis=1) / n)
        df = np.full(len(y), np.inf)
        half = norm.ppf(0.5 + confidence / 2) * se
    return {"estimate": estimate, "se": se, "df": df, "lambda": lam, "low": estimate - half, "high": estimate + half}


def _lambda(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray) -> np.ndarray:
    """PPI++'s plug-in lambda per row: cov_n(y, f) / ((1 + n/N) var(f over all N + n)), in [0, 1]; 0 where f is constant."""
    n, N = y.shape[1], f_u.shape[1]
    var_f = np.var(np.concatenate([f_l, f_u], axis=1), ddof=1, axis=1)
    cov = np.mean((y - y.mean(axis=1, keepdims=True)) * (f_l - f_l.mean(axis=1, keepdims=True)), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var_f == 0, 0.0, np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0))


def _jackknife(f_u: np.ndarray, f_l: np.ndarray, y: np.ndarray, tune: bool) -> np.ndarray:
    """The jackknife variance of the estimate over the n person-judged answers, (n-1)/n * sum (est_-i - mean)^2,
    with lambda fitted again without answer i (the N model-only verdicts held): O(n) per row from sums."""
    n, N = y.shape[1], f_u.shape[1]
    m = n - 1
    centre = np.concatenate([f_l, f_u], axis=1).mean(axis=1, keepdims=True)  # shifts change nothing but rounding
    f_l, f_u, y = f_l - centre, f_u - centre, y - y.mean(axis=1, keepdims=True)
    sy = y.sum(axis=1, keepdims=True) - y  # each column: the sum over the other n - 1
    sf = f_l.sum(axis=1, keepdims=True) - f_l
    lam: np.ndarray | float = 1.0
    if tune:
        syf = (y * f_l).sum(axis=1, keepdims=True) - y * f_l
        square = (f_l ** 2).sum(axis=1, keepdims=True) - f_l ** 2 + (f_u ** 2).sum(axis=1, keepdims=True)
        total = sf + f_u.sum(axis=1, keepdims=True)
        var_f = np.maximum(square - total ** 2 / (m + N), 0.0) / (m + N - 1)
        cov = syf / m - (sy / m) * (sf / m)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(var_f > 1e-12 * (1 + square / (m + N)),
                           np.clip(cov / ((1 + m / N) * var_f), 0.0, 1.0), 0.0)
    est = lam * f_u.mean(axis=1, keepdims=True) + (sy - lam * sf) / m
    return (n - 1) / n * ((est - est.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)


def ppi_arrays(unlabelled, labelled, human, *, confidence: float = 0.95, tune: bool = True,
               small_sample: bool = True) -> dict:
    """PPI on plain arrays: the model's verdicts on the N answers no person judged (`unlabelled`),
    its verdicts on the n that people judged (`labelled`) and the people's (`human`, aligned with
    `labelled`). Returns estimate, ci, se, df, lambda, method, n, N and a reason where a number is
    undefined. small_sample=False gives ppi_py.ppi_mean_ci's normal interval exactly (it covers less
    than asked at small n: module docstring)."""
    if not 0 < confidence < 1:
        raise BadInput(f"confidence must lie strictly between 0 and 1, not {confidence}")
    f_u, f_l, y = (np.asarray(v, dtype=float).ravel() for v in (unlabelled, labelled, human))
    if len(f_l) != len(y):
        raise BadInput(f"labelled ({len(f_l)}) and human ({len(y)}) must hold the same answers, in one order")
    for name, v in (("unlabelled", f_u), ("labelled", f_l), ("human", y)):
        if np.isnan(v).any():
            raise BadInput(f"{name} holds a missing verdict (NaN); drop unscored answers first")
    n, N = len(y), len(f_u)
    yes_no = all(bool(np.isin(v, (0.0, 1.0)).all()) for v in (f_u, f_l, y))
    method = ("PPI++, jackknife t" + (", plus four" if yes_no else "")) if small_sample else "PPI++ normal (ppi_py)"
    out: dict[str, Any] = {"estimate": None, "ci": None, "se": None, "df": None, "lambda": None, "method": method,
                           "n": n, "N": N, "reason": None}
    if n < 2:
        out["reason"] = f"{n} answer(s) judged by both a person and the model: the judge's error needs at least two"
        return out
    if N == 0:
        out["reason"] = "no answer was judged by the model alone: nothing for it to add to the people's verdicts"
        return out
    got = {k: float(v[0]) for k, v in ppi_rows(f_u, f_l, y, confidence=confidence, tune=tune,
                                                 small_sample=small_sample).items()}
    out.update({"estimate": got["estimate"], "se": got["se"], "lambda": got["lambda"],
                "df": got["df"] if small_sample else None})
    if got["se"] == 0:
        out["reason"] = "every verdict is the same: an interval would be a single point"
        return out
    low, high = got["low"], got["high"]
    if all(((v >= 0) & (v <= 1)).all() for v in (f_u, f_l, y)):  # the mean lies in [0, 1]: cutting loses nothing
        low, high = max(low, 0.0), min(high, 1.0)
    out["ci"] = [low, high]
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
             confidence: float = 0.95, tune: bool = True, small_sample: bool = True) -> Report:
    """The mean of a judged metric (accuracy, or any score in 0..1) from the model's verdicts on
    many answers and people's on some of the same, with the prediction-powered interval next to the
    human-only one (RULE above; report["rule"]).

    Keyed by question id: `model` maps ids to the model's verdicts (a dict, Series, or an answers /
    evaluation report with metric=), `human` maps ids to people's (dict, Series, or the calibration
    report calibrate() returns, whose judge column is then the model's verdict on those items).
    Answers people judged form the n; the model's other answers the N. Plain arrays: `model` the N
    unlabelled, `labelled` the model on the n, `human` the people on the n. `threshold` turns scores
    into pass (>= threshold) / fail first, for accuracy. small_sample=False: ppi_py's normal interval
    (module docstring). Fewer than WARN_BELOW (30) person-judged answers: a warning."""
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
    got = ppi_arrays(f_u, f_l, y, confidence=confidence, tune=tune, small_sample=small_sample)
    if 2 <= got["n"] < WARN_BELOW:
        warnings.append(f"only {got['n']} answers judged by people (fewer than {WARN_BELOW}): the interval may cover "
                        f"less than {100 * confidence:g}%, yes/no verdicts most of all (benchmarks/ppi_coverage.json)")
    alone = human_only(y, confidence=confidence)
    level = 100 * confidence
    interval = (SMALL_SAMPLE if small_sample else PPI_PY).format(level=level)
    rule = RULE.format(how="tuned" if tune else "fixed at 1: plain PPI", interval=interval, level=level,
                       human=alone["method"])
    model_mean = float(np.concatenate([f_u, f_l]).mean()) if len(f_u) + len(f_l) else None
    import pandas as pd

    rows = [{"interval": "prediction-powered", "estimate": got["estimate"], "low": (got["ci"] or [None])[0],
             "high": (got["ci"] or [None, None])[1], "n": got["n"], "N": got["N"], "method": got["method"],
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
