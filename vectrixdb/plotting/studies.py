"""The figures of the studies a run can hold beside its scores: a power analysis (questions_needed),
a judgement pool (pool), a prediction-powered estimate (ppi_mean) and an embedder comparison
(compare_embedders). Each takes the saved report and returns the Figure; the kinds name them in
evaluation/runs/kinds_builtin.py. Here, not beside the code that computes each study, because those
modules import the run's Report, which registers the kinds that name these figures."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from vectrixdb.extras import needs
from vectrixdb.plotting import DASHES, MARKERS, _figure, wrapped_title


def power_plot(report, ax=None, most: int = 8, *, power_at: Callable[..., float]):
    """Power against the number of questions for each measure's target difference (at most `most`
    measures), with the stated power and the current question count drawn. `power_at(delta, sd, n,
    alpha, discordance=)` is the power formula (evaluation/runs/power_formulas.py: the kind passes
    it, so the figures import nothing of evaluation)."""
    fig, ax = _figure(ax, figsize=(7, 4))
    frame = report.frame.dropna(subset=["target"])
    sized = frame["discordance"].where(frame["model"] == "exact McNemar", frame["sd"])
    frame = frame[(sized > 0) & (frame["target"] != 0)].head(most)
    alpha, power, n_now = report["alpha"], report["power"], report["questions"]
    top = max([n_now * 2, *[2 * q for q in frame["questions for"].dropna()]] or [10])
    ns = np.unique(np.linspace(2, top, 60).round().astype(int))
    for i, (measure, row) in enumerate(frame.iterrows()):
        q = row["discordance"] if row["model"] == "exact McNemar" else None
        curve = [power_at(row["target"], row["sd"], int(n), alpha, discordance=q) for n in ns]
        ax.plot(ns, curve, linestyle=DASHES[i % 4],
                marker=MARKERS[i % len(MARKERS)], markevery=10, label=f"{measure} (difference {row['target']:.3g})")
    ax.axhline(power, color="grey", linestyle=":", linewidth=0.8)
    ax.axvline(n_now, color="black", linewidth=0.8)
    ax.text(n_now, 0.02, f" now: {n_now}", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("questions (paired)")
    ax.set_ylabel(f"power (two-sided, alpha {alpha:g})")
    ax.set_title(f"questions needed to detect each difference with power {power:g}"
                 + ("" if report["paired"] else " (one run: second system assumed)"), fontsize=9)
    if len(frame):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def pool_plot(report, ax=None):
    """Per run: the pooled results it found, split into those no other run found and the shared."""
    fig, ax = _figure(ax)
    names = list(report["runs"])
    rows = report.frame.to_dict("records") if report.frame is not None else []
    alone = [sum(1 for r in rows if r["found_by"] == [n]) for n in names]
    shared = [sum(1 for r in rows if n in r["found_by"] and len(r["found_by"]) > 1) for n in names]
    ax.barh(names, alone, label="found by this run only")
    ax.barh(names, shared, left=alone, label="found by other runs too", alpha=0.6)
    ax.invert_yaxis()
    ax.set_xlabel("unjudged results in the pool")
    ax.set_title(f"pool to depth {report['depth']} by {report['by']}: {report['pooled']} unjudged results over "
                 f"{report['pooled_questions']} of {report['questions']} questions")
    with needs("plots"):
        from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return fig


def ppi_plot(report, ax=None):
    """The prediction-powered and human-only intervals side by side, the model-only mean as a mark."""
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


def embedders_plot(report, ax=None):
    """nDCG@k with its 95% interval against the median query time, one point per candidate."""
    fig, ax = _figure(ax, figsize=(7, 4.5))
    rows = report.get("candidates") or []
    quality = report.get("quality") or "ndcg"
    for n, r in enumerate(rows):
        low, high = r.get("ndcg low"), r.get("ndcg high")
        err = [[r["ndcg"] - low], [high - r["ndcg"]]] if low is not None and high is not None else None
        ax.errorbar([r["query_p50_ms"]], [r["ndcg"]], yerr=err, fmt="o", capsize=3)
        ax.annotate(str(r["name"])[-40:], (r["query_p50_ms"], r["ndcg"]), fontsize=7, xytext=(6, 6 - 12 * (n % 3)),
                    textcoords="offset points")
    ax.set_xlabel("median query time (ms: embedding the query and searching)")
    ax.set_ylabel(f"{quality} (95% CI)")
    ax.set_title(wrapped_title(f"{len(rows)} candidates, n = {report.get('questions')} questions: {report.get('verdict')}"),
                 fontsize=9)
    ax.grid(alpha=0.3)
    return fig


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))
