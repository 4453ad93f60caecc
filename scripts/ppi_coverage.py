"""Do the intervals the project publishes cover? A simulation where the truth is known (issue 45 item 6).

usage: python scripts/ppi_coverage.py [--reps 20000] [--boot-reps 2000] [--seed 45]
           [--out benchmarks/ppi_coverage.json]

Part 1, ppi_mean's interval. For each judge, n (answers people judged: 10 ... 200) and N (answers
only the model judged: 100, 1,000), --reps data sets are drawn and these 95% intervals computed on
each: the default (vectrixdb.evaluation.runs.ppi.ppi_rows, the shipped code; for yes/no verdicts
with four answers added to the n, one of each (model, person) pair) and, for yes/no, the same
without them (the rule before: "ppi_without_plus_four"), ppi_py's normal interval
(small_sample=False), a candidate that was not enough (plug-in lambda, unbiased variances,
Welch-Satterthwaite t: "t_plugin") with the same candidate at the lambda a huge sample gives
("t_known_lambda": what remains once lambda's own noise is taken away), and the human-only interval
(Wilson with continuity correction for yes/no, as shipped, and plain Wilson beside it; Student's t
for graded). Judges: yes/no verdicts (70% right) with a judge that
agrees with people 70, 85 or 95% of the time (errors both ways), a lenient one (passes 40% of the
wrong answers), and graded scores in [0, 1] (Beta(4, 2)) with a close and a noisy judge (the score
plus 0.1 plus normal noise of sd 0.1 or 0.3, cut to [0, 1]). The truth is the population mean.

Part 2, runs/stats.py bootstrap_interval (every report's interval on a mean over questions), called
as reports call it (2,000 resamples, seed 0), beside the percentile bootstrap it replaced (kept here
as percentile_bootstrap), Wilson without continuity correction and Student's t. Hits (0/1 values)
exactly: every count of hits weighted by its binomial chance, at rates 0.3, 0.7, 0.9 and at the worst
rate of 0.01 ... 0.99. Graded scores by simulation, --boot-reps data sets per n: a skewed score
(Beta(0.5, 1.5)) and a zero-inflated one (40% zeros, else Beta(4, 1.5)), with the plain bootstrap-t
(studentized_only: the shipped rule without its Student's t floor). Time per call at n = 300.

Coverage is the share of data sets whose interval holds the truth (no interval counts as a miss),
with its Monte Carlo standard error sqrt(p (1 - p) / reps); widths are means over the intervals given.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm, t

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, versions, write_json

from vectrixdb.evaluation.runs.ppi import SMALL_SAMPLE, WARN_BELOW, _lambda, ppi_rows
from vectrixdb.evaluation.runs.stats import bootstrap_interval, studentized, wilson_cc

ROOT = Path(__file__).resolve().parent.parent
CONFIDENCE = 0.95
NS, BIG_NS = (10, 20, 30, 50, 100, 200), (100, 1000)
BOOT_NS = (10, 20, 30, 50, 100, 300)
CHUNK = 2000  # data sets drawn at once (memory: CHUNK x (n + N) floats, a few times over)


def _yes_no(agree: float | None):
    def draw(rng, rows, size):
        y = (rng.random((rows, size)) < 0.7).astype(float)
        if agree is None:  # lenient: passes 40% of the wrong answers
            return y, np.maximum(y, (rng.random((rows, size)) < 0.4).astype(float))
        return y, np.where(rng.random((rows, size)) < agree, y, 1 - y)
    return draw


def _graded(sd: float):
    def draw(rng, rows, size):
        y = rng.beta(4, 2, (rows, size))
        return y, np.clip(y + 0.1 + rng.normal(0, sd, (rows, size)), 0, 1)
    return draw


JUDGES = {  # name: (draw, the true mean of people's verdicts, yes/no?)
    "yes/no, judge agrees 70%": (_yes_no(0.70), 0.7, True),
    "yes/no, judge agrees 85%": (_yes_no(0.85), 0.7, True),
    "yes/no, judge agrees 95%": (_yes_no(0.95), 0.7, True),
    "yes/no, lenient judge (agrees 88%, biased up)": (_yes_no(None), 0.7, True),
    "graded, close judge (+0.1, sd 0.1)": (_graded(0.1), 4 / 6, False),
    "graded, noisy judge (+0.1, sd 0.3)": (_graded(0.3), 4 / 6, False),
}


def t_plugin(f_u, f_l, y, lam):
    """The candidate that fell short: se^2 = var_N(lam f)/N + var_n(y - lam f)/n (ddof 1), Welch-Satterthwaite t."""
    n, N = y.shape[1], f_u.shape[1]
    column = lam[:, None]
    estimate = lam * f_u.mean(axis=1) + (y - column * f_l).mean(axis=1)
    a, b = np.var(column * f_u, ddof=1, axis=1) / N, np.var(y - column * f_l, ddof=1, axis=1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (a + b) ** 2 / (a ** 2 / (N - 1) + b ** 2 / (n - 1))
    half = t.ppf(0.5 + CONFIDENCE / 2, np.where(np.isfinite(df), df, n - 1.0)) * np.sqrt(a + b)
    return estimate - half, estimate + half, a + b == 0


def human_rows(y, binary: bool, cc: bool = True):
    """human_only's interval on many rows: Wilson's score interval (with continuity correction, as shipped,
    unless cc=False) for 0/1, else Student's t (none when constant)."""
    n = y.shape[1]
    mean = y.mean(axis=1)
    if binary and cc:
        ends = np.array([wilson_cc(int(k), n, CONFIDENCE) for k in np.rint(y.sum(axis=1))])
        return ends[:, 0], ends[:, 1], np.zeros(len(y), bool)
    if binary:
        z = norm.ppf(0.5 + CONFIDENCE / 2)
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n))
        return centre - half, centre + half, np.zeros(len(y), bool)
    sd = y.std(axis=1, ddof=1)
    half = t.ppf(0.5 + CONFIDENCE / 2, n - 1) * sd / np.sqrt(n)
    return mean - half, mean + half, sd == 0


class Tally:
    """Coverage and widths of one interval over the data sets of one setting."""

    def __init__(self):
        self.hits = self.count = self.none = 0
        self.width = 0.0

    def add(self, low, high, missing, truth):
        ok = ~missing & np.isfinite(low) & np.isfinite(high)
        self.hits += int(np.sum(ok & (low <= truth) & (truth <= high)))
        self.count += len(low)
        self.none += int(np.sum(~ok))
        self.width += float(np.sum(np.where(ok, high - low, 0.0)))

    def figures(self) -> dict:
        p = self.hits / self.count
        given = self.count - self.none
        return {"coverage": round(p, 4), "mc_se": round(float(np.sqrt(p * (1 - p) / self.count)), 4),
                "mean_width": round(self.width / given, 4) if given else None,
                "no_interval": round(self.none / self.count, 4)}


def known_lambda(draw, n: int, N: int, rng) -> float:
    """The lambda PPI++ tends to at this n and N: its formula on one huge draw, rescaled by (1 + n/N)."""
    y, f = draw(rng, 1, 400_000)
    big = _lambda(f[:, 200_000:], f[:, :200_000], y[:, :200_000])[0]  # n = N there: (1 + n/N) = 2
    return float(np.clip(big * 2 / (1 + n / N), 0, 1))


def ppi_part(reps: int, rng) -> list[dict]:
    out = []
    for name, (draw, truth, binary) in JUDGES.items():
        for N in BIG_NS:
            for n in NS:
                lam_star = known_lambda(draw, n, N, rng)
                yes_no_only = ("ppi_without_plus_four", "human_only_plain_wilson")
                tallies = {k: Tally() for k in ("ppi", "ppi_without_plus_four", "ppi_py", "t_plugin", "t_known_lambda",
                                                "human_only", "human_only_plain_wilson") if binary or k not in yes_no_only}
                done = 0
                while done < reps:
                    rows = min(CHUNK, reps - done)
                    y_all, f = draw(rng, rows, n + N)
                    f_u, f_l, y = f[:, n:], f[:, :n], y_all[:, :n]
                    for key, small, plus in (("ppi", True, None), ("ppi_without_plus_four", True, False),
                                             ("ppi_py", False, None)):
                        if key not in tallies:
                            continue
                        got = ppi_rows(f_u, f_l, y, confidence=CONFIDENCE, small_sample=small, plus_four=plus)
                        # ppi_arrays cuts to [0, 1] (every verdict lies there) and gives no interval when se is 0
                        tallies[key].add(np.maximum(got["low"], 0), np.minimum(got["high"], 1), got["se"] == 0, truth)
                    tallies["t_plugin"].add(*t_plugin(f_u, f_l, y, _lambda(f_u, f_l, y)), truth)
                    tallies["t_known_lambda"].add(*t_plugin(f_u, f_l, y, np.full(rows, lam_star)), truth)
                    tallies["human_only"].add(*human_rows(y, binary), truth)
                    if binary:
                        tallies["human_only_plain_wilson"].add(*human_rows(y, True, cc=False), truth)
                    done += rows
                out.append({"judge": name, "n": n, "N": N, "truth": round(truth, 4), "known_lambda": round(lam_star, 3),
                            "intervals": {k: v.figures() for k, v in tallies.items()}})
                cells = out[-1]["intervals"]
                print(f"{name[:24]:24s} N={N:4d} n={n:3d} " + " ".join(
                    f"{k}={v['coverage']:.3f}/{v['mean_width']}" for k, v in cells.items()), flush=True)
    return out


VALUES = {  # name: (draw per-question values, true mean, 0/1?)
    "skewed score, Beta(0.5, 1.5)": (lambda rng, size: rng.beta(0.5, 1.5, size), 0.25, False),
    "zero-inflated score, 40% zeros else Beta(4, 1.5)": (
        lambda rng, size: np.where(rng.random(size) < 0.4, 0.0, rng.beta(4, 1.5, size)), 0.6 * 4 / 5.5, False),
}
HIT_RATES = (0.3, 0.7, 0.9)
BOOT_RULE = ("values all 0 or 1: Wilson's score interval with continuity correction (Newcombe 1998, method 4); "
             "other values: studentized (bootstrap-t) interval, each end at least as far from the mean as "
             "Student's t's; none for fewer than two values, or for equal values that are not 0/1")
RATE_GRID = np.round(np.linspace(0.01, 0.99, 99), 2)


def percentile_bootstrap(values) -> list[float] | None:
    """bootstrap_interval before issue 45 item 6, kept here to measure against: scipy's percentile
    bootstrap, 2,000 resamples, seed 0; [v, v] on constant values."""
    from scipy.stats import bootstrap

    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return None
    if np.all(data == data[0]):
        return [float(data[0])] * 2
    got = bootstrap((data,), np.mean, vectorized=True, confidence_level=CONFIDENCE, n_resamples=2000,
                    method="percentile", batch=max(1, 5_000_000 // len(data)), random_state=np.random.default_rng(0))
    return [float(got.confidence_interval.low), float(got.confidence_interval.high)]


def _ends(fn, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ends = np.array([fn(row) or [np.nan, np.nan] for row in rows], dtype=float)
    return ends[:, 0], ends[:, 1], np.isnan(ends[:, 0])


def _exact(ends, n: int, rate: float) -> dict:
    """Exact coverage for 0/1 values: the interval depends only on the count of ones, k ~ Binomial(n, rate);
    `ends` holds the interval at each k = 0 ... n."""
    from scipy.stats import binom

    low, high, missing = ends
    pmf = binom.pmf(np.arange(n + 1), n, rate)
    inside = ~missing & (low <= rate) & (rate <= high)
    given = float(pmf @ ~missing)
    return {"coverage": round(float(pmf @ inside), 4), "mc_se": 0.0,
            "mean_width": round(float(pmf @ np.where(missing, 0.0, high - low)) / given, 4) if given else None,
            "no_interval": round(float(pmf @ missing), 4),
            "zero_width": round(float(pmf @ (~missing & (high == low))), 4)}


def bootstrap_part(reps: int, rng) -> list[dict]:
    """Hits exactly (every count of hits, weighted by its binomial chance); graded scores by simulation."""
    out = []
    for_hits = {"shipped": lambda v: bootstrap_interval(v, CONFIDENCE), "percentile_bootstrap": percentile_bootstrap,
                "wilson": lambda v: [float(x[0]) for x in human_rows(np.asarray([v]), True, cc=False)[:2]],
                "student_t": lambda v: None if np.std(v) == 0 else [float(x[0]) for x in human_rows(np.asarray([v]), False)[:2]]}
    for n in BOOT_NS:
        every_count = [np.r_[np.ones(k), np.zeros(n - k)] for k in range(n + 1)]
        ends = {key: _ends(fn, every_count) for key, fn in for_hits.items()}
        for rate in (*HIT_RATES, None):
            cells = {}
            for key in for_hits:
                if rate is not None:
                    cells[key] = _exact(ends[key], n, rate)
                    continue
                grid = [_exact(ends[key], n, r) for r in RATE_GRID]
                worst = int(np.argmin([g["coverage"] for g in grid]))
                cells[key] = {**grid[worst], "at_rate": float(RATE_GRID[worst])}
            name = f"hits, p = {rate}" if rate is not None else "hits, lowest over p = 0.01 ... 0.99"
            out.append({"values": name, "n": n, "truth": rate, "exact": True, "intervals": cells})
            print(f"{name[:24]:24s} n={n:3d} " + " ".join(f"{k}={v['coverage']:.3f}/{v['mean_width']}"
                                                          for k, v in cells.items()), flush=True)
    for name, (draw, truth, _) in VALUES.items():
        for n in BOOT_NS:
            data = np.stack([draw(rng, n) for _ in range(reps)])
            tallies = {k: Tally() for k in ("shipped", "percentile_bootstrap", "studentized_only", "student_t")}
            for key, fn in (("shipped", lambda v: bootstrap_interval(v, CONFIDENCE)),
                            ("percentile_bootstrap", percentile_bootstrap),
                            ("studentized_only", lambda v: list(studentized(v, CONFIDENCE)))):
                low, high, missing = _ends(fn, data)
                tallies[key].add(low, high, missing, truth)
            tallies["student_t"].add(*human_rows(data, False), truth)
            out.append({"values": name, "n": n, "truth": round(truth, 4), "exact": False,
                        "intervals": {k: v.figures() for k, v in tallies.items()}})
            print(f"{name[:24]:24s} n={n:3d} " + " ".join(
                f"{k}={v['coverage']:.3f}/{v['mean_width']}" for k, v in out[-1]["intervals"].items()), flush=True)
    return out


def seconds_per_call(n: int = 300, calls: int = 50) -> dict:
    """Time per call at n questions (a skewed score and hits), shipped against the percentile bootstrap."""
    rng = np.random.default_rng(0)
    graded, hits = rng.beta(0.5, 1.5, n), (rng.random(n) < 0.7).astype(float)
    out = {}
    for key, fn in (("shipped", lambda v: bootstrap_interval(v, CONFIDENCE)), ("percentile_bootstrap", percentile_bootstrap)):
        for kind, values in (("graded", graded), ("hits", hits)):
            fn(values)
            start = time.perf_counter()
            for _ in range(calls):
                fn(values)
            out[f"{key}, {kind}"] = round((time.perf_counter() - start) / calls * 1000, 2)
    return {"n": n, "ms_per_call": out}


def summary(settings: list[dict], key: str, floor: int) -> dict:
    """Per interval: the lowest coverage at n >= floor, at each smaller n, and the cells below 0.945 at n >= floor."""
    out = {}
    for name in dict.fromkeys(k for s in settings for k in s["intervals"]):  # Wilson only where values are 0/1
        settings_all, settings = settings, [s for s in settings if name in s["intervals"]]
        big = [s for s in settings if s[key] >= floor]
        low = min(big, key=lambda s: s["intervals"][name]["coverage"])
        out[name] = {f"lowest_at_n>={floor}": low["intervals"][name]["coverage"],
                     "lowest_where": f"{low.get('judge') or low.get('values')}, n={low[key]}"
                                     + (f", N={low['N']}" if "N" in low else ""),
                     f"cells_below_0.945_at_n>={floor}": sum(s["intervals"][name]["coverage"] < 0.945 for s in big),
                     f"cells_at_n>={floor}": len(big),
                     "lowest_by_n": {str(n): min(s["intervals"][name]["coverage"] for s in settings if s[key] == n)
                                     for n in sorted({s[key] for s in settings})},
                     "median_width_by_n": {str(n): float(np.median([s["intervals"][name]["mean_width"] or np.nan
                                                                    for s in settings if s[key] == n]))
                                           for n in sorted({s[key] for s in settings})}}
        settings = settings_all
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20_000, help="simulated data sets per PPI setting")
    ap.add_argument("--boot-reps", type=int, default=2_000, help="simulated data sets per bootstrap setting")
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "ppi_coverage.json"))
    args = ap.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    ppi = ppi_part(args.reps, rng)
    ppi_seconds = time.perf_counter() - start
    boot = bootstrap_part(args.boot_reps, rng)
    boot_seconds = time.perf_counter() - start - ppi_seconds
    out = {
        "what": __doc__.split("\n")[0], "how": __doc__.split("\n\n", 2)[2].strip(),
        "confidence": CONFIDENCE, "seed": args.seed,
        "ppi": {"reps_per_setting": args.reps, "default_rule": SMALL_SAMPLE.format(level=100 * CONFIDENCE),
                "warn_below_n": WARN_BELOW, "intervals": {
                    "ppi": "the default: ppi_arrays / ppi_mean (small_sample=True; plus four for yes/no verdicts)",
                    "ppi_without_plus_four": "yes/no: the default without the four added answers (the rule before)",
                    "ppi_py": "small_sample=False: ppi_py.ppi_mean_ci's normal interval (the interval before issue 45)",
                    "t_plugin": "candidate: plug-in lambda, ddof-1 variances, Welch-Satterthwaite t (not enough)",
                    "t_known_lambda": "t_plugin at the lambda a huge sample gives: lambda's own noise taken away",
                    "human_only": "the people alone: Wilson with continuity correction for yes/no, Student's t for graded",
                    "human_only_plain_wilson": "yes/no: the people alone by plain Wilson (the rule before)"},
                "summary": summary(ppi, "n", 30), "settings": ppi},
        "bootstrap": {"reps_per_setting": args.boot_reps, "resamples": 2000, "bootstrap_seed": 0,
                      "rule": BOOT_RULE, "intervals": {
                          "shipped": "bootstrap_interval as shipped (the rule above)",
                          "percentile_bootstrap": "the interval before: scipy percentile bootstrap, [v, v] on constant values",
                          "studentized_only": "graded: the bootstrap-t without the Student's t floor",
                          "wilson": "hits: Wilson's score interval without continuity correction",
                          "student_t": "Student's t (none on constant values)"},
                      "time": seconds_per_call(),
                      "summary": summary(boot, "n", 30), "settings": boot},
        "seconds": {"ppi": round(ppi_seconds, 1), "bootstrap": round(boot_seconds, 1),
                    "wall": round(time.perf_counter() - start, 1)},
        "machine": machine_cpu(), "load_average_before": load_before, "versions": versions("vectrixdb", "numpy", "scipy"),
    }
    write_json(args.out, out)
    print({k: {i: (v["lowest_at_n>=30"], v["lowest_where"]) for i, v in out[k]["summary"].items()}
           for k in ("ppi", "bootstrap")}, out["seconds"])


if __name__ == "__main__":
    main()
