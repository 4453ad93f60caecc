"""Do the intervals the project publishes cover? A simulation where the truth is known (issue 45 item 6).

usage: python scripts/ppi_coverage.py [--reps 20000] [--boot-reps 2000] [--seed 45]
           [--out benchmarks/ppi_coverage.json]

Part 1, ppi_mean's interval. For each judge, n (answers people judged: 10 ... 200) and N (answers
only the model judged: 100, 1,000), --reps data sets are drawn and four 95% intervals computed on
each: the default (vectrixdb.evaluation.runs.ppi.ppi_rows, the shipped code), ppi_py's normal
interval (small_sample=False), a candidate that was not enough (plug-in lambda, unbiased variances,
Welch-Satterthwaite t: "t_plugin") with the same candidate at the lambda a huge sample gives
("t_known_lambda": what remains once lambda's own noise is taken away), and the human-only interval
(Wilson for yes/no, Student's t for graded). Judges: yes/no verdicts (70% right) with a judge that
agrees with people 70, 85 or 95% of the time (errors both ways), a lenient one (passes 40% of the
wrong answers), and graded scores in [0, 1] (Beta(4, 2)) with a close and a noisy judge (the score
plus 0.1 plus normal noise of sd 0.1 or 0.3, cut to [0, 1]). The truth is the population mean.

Part 2, the percentile bootstrap over questions (runs/stats.py bootstrap_interval, called as
reports call it: 2,000 resamples, seed 0) on per-question values like a retrieval measure:
hits (Bernoulli 0.3, 0.7, 0.9), a skewed score (Beta(0.5, 1.5)) and a zero-inflated one (40%
zeros, else Beta(4, 1.5)); beside it Student's t and, for hits, Wilson, as candidate fixes.

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
from vectrixdb.evaluation.runs.stats import bootstrap_interval

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


def human_rows(y, binary: bool):
    """human_only's interval on many rows: Wilson's score interval for 0/1, else Student's t (none when constant)."""
    n = y.shape[1]
    mean = y.mean(axis=1)
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
                tallies = {k: Tally() for k in ("ppi", "ppi_py", "t_plugin", "t_known_lambda", "human_only")}
                done = 0
                while done < reps:
                    rows = min(CHUNK, reps - done)
                    y_all, f = draw(rng, rows, n + N)
                    f_u, f_l, y = f[:, n:], f[:, :n], y_all[:, :n]
                    for key, small in (("ppi", True), ("ppi_py", False)):
                        got = ppi_rows(f_u, f_l, y, confidence=CONFIDENCE, small_sample=small)
                        # ppi_arrays cuts to [0, 1] (every verdict lies there) and gives no interval when se is 0
                        tallies[key].add(np.maximum(got["low"], 0), np.minimum(got["high"], 1), got["se"] == 0, truth)
                    tallies["t_plugin"].add(*t_plugin(f_u, f_l, y, _lambda(f_u, f_l, y)), truth)
                    tallies["t_known_lambda"].add(*t_plugin(f_u, f_l, y, np.full(rows, lam_star)), truth)
                    tallies["human_only"].add(*human_rows(y, binary), truth)
                    done += rows
                out.append({"judge": name, "n": n, "N": N, "truth": round(truth, 4), "known_lambda": round(lam_star, 3),
                            "intervals": {k: v.figures() for k, v in tallies.items()}})
                cells = out[-1]["intervals"]
                print(f"{name[:24]:24s} N={N:4d} n={n:3d} " + " ".join(
                    f"{k}={v['coverage']:.3f}/{v['mean_width']}" for k, v in cells.items()), flush=True)
    return out


VALUES = {  # name: (draw per-question values, true mean, 0/1?)
    "hits, p = 0.3": (lambda rng, size: (rng.random(size) < 0.3).astype(float), 0.3, True),
    "hits, p = 0.7": (lambda rng, size: (rng.random(size) < 0.7).astype(float), 0.7, True),
    "hits, p = 0.9": (lambda rng, size: (rng.random(size) < 0.9).astype(float), 0.9, True),
    "skewed score, Beta(0.5, 1.5)": (lambda rng, size: rng.beta(0.5, 1.5, size), 0.25, False),
    "zero-inflated score, 40% zeros else Beta(4, 1.5)": (
        lambda rng, size: np.where(rng.random(size) < 0.4, 0.0, rng.beta(4, 1.5, size)), 0.6 * 4 / 5.5, False),
}


def bootstrap_part(reps: int, rng) -> list[dict]:
    out = []
    for name, (draw, truth, binary) in VALUES.items():
        for n in BOOT_NS:
            data = np.stack([draw(rng, n) for _ in range(reps)])
            tallies = {k: Tally() for k in ("percentile_bootstrap", "student_t", "wilson")[:3 if binary else 2]}
            ends = np.array([bootstrap_interval(row, CONFIDENCE) or [np.nan, np.nan] for row in data])
            tallies["percentile_bootstrap"].add(ends[:, 0], ends[:, 1], ends[:, 0] == ends[:, 1], truth)
            tallies["student_t"].add(*human_rows(data, False), truth)
            if binary:
                tallies["wilson"].add(*human_rows(data, True), truth)
            out.append({"values": name, "n": n, "truth": round(truth, 4),
                        "intervals": {k: v.figures() for k, v in tallies.items()}})
            print(f"{name[:24]:24s} n={n:3d} " + " ".join(
                f"{k}={v['coverage']:.3f}/{v['mean_width']}" for k, v in out[-1]["intervals"].items()), flush=True)
    return out


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
                    "ppi": "the default: ppi_arrays / ppi_mean (small_sample=True)",
                    "ppi_py": "small_sample=False: ppi_py.ppi_mean_ci's normal interval (the interval before issue 45)",
                    "t_plugin": "candidate: plug-in lambda, ddof-1 variances, Welch-Satterthwaite t (not enough)",
                    "t_known_lambda": "t_plugin at the lambda a huge sample gives: lambda's own noise taken away",
                    "human_only": "the people alone: Wilson for yes/no, Student's t for graded"},
                "summary": summary(ppi, "n", 30), "settings": ppi},
        "bootstrap": {"reps_per_setting": args.boot_reps, "resamples": 2000, "bootstrap_seed": 0,
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
