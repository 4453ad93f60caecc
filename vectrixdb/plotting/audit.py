"""The plot of a golden_audit report: drafted questions against real ones, four panels.

Lengths (words), overlap with the evidence, how often each search finds the right page at rank 1,
and the kinds. Registered as the golden_audit kind's plot, so `report.plot()` draws it.
"""
from __future__ import annotations

from typing import Any
from vectrixdb.extras import needs

COLOURS = {"drafted": "#d9822b", "real": "#2b6cb0"}


def audit_plot(report: Any, *, figsize: tuple[float, float] = (11, 7)):
    """A 2x2 figure for a golden_audit report; returns the Figure."""
    with needs("plots"):
        import matplotlib.pyplot as plt
    import numpy as np

    sets = {k: v for k, v in report["sets"].items() if v.get("questions")}
    frame = report.frame
    fig, axes = plt.subplots(2, 2, figsize=figsize)
    (lengths, overlaps), (ranks, kinds) = axes
    names = list(sets)
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        colour = COLOURS.get(name)
        label = f"{name} (n={sets[name]['questions']})"
        bins = list(sets[name]["lengths"])
        share = np.array(list(sets[name]["lengths"].values())) / sets[name]["questions"]
        lengths.bar(np.arange(len(bins)) + i * width, share, width, label=label, color=colour)
        lengths.set_xticks(np.arange(len(bins)) + width * (len(names) - 1) / 2, bins)
        values = frame.loc[name]["overlap"].dropna() if frame is not None and len(frame) else []
        if len(values):
            overlaps.hist(values, bins=np.linspace(0, 1, 11), alpha=0.6, label=f"{name} (n={len(values)})", color=colour,
                          density=True)
        at_1 = [sets[name]["keyword_at_1"], sets[name]["dense_at_1"]]
        bars = ranks.bar(np.arange(2) + i * width, at_1, width, label=label, color=colour)
        ranks.bar_label(bars, fmt="%.2f", fontsize=8)  # a bar at the ceiling reads as 1.00, not as a cut-off bar
        shares = sets[name]["kinds"]
        kinds.bar(np.arange(len(shares)) + i * width, list(shares.values()), width, label=label, color=colour)
        kinds.set_xticks(np.arange(len(shares)) + width * (len(names) - 1) / 2, list(shares), rotation=20)
    ranks.set_xticks(np.arange(2) + width * (len(names) - 1) / 2, ["keyword", "dense"])
    lengths.set(title="question length (words)", ylabel="share of questions")
    overlaps.set(title="words shared with the evidence", xlabel="share of the question's words", ylabel="density")
    ranks.set(title="right page at rank 1", ylabel="share of questions", ylim=(0, 1.25), yticks=np.linspace(0, 1, 6))
    kinds.set(title="kinds", ylabel="share of questions")
    for ax in (lengths, overlaps, ranks, kinds):
        if ax.get_legend_handles_labels()[0]:  # a panel with nothing drawn (no evidence to overlap) has no key
            ax.legend(fontsize=8, **({"loc": "upper center", "ncol": len(names)} if ax is ranks else {}))
        else:
            ax.text(0.5, 0.5, "nothing to show", ha="center", va="center", transform=ax.transAxes, color="grey")
    fig.suptitle("golden set audit: " + " against ".join(names) if names else "golden set audit: no questions")
    fig.tight_layout()
    return fig
