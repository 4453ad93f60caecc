"""matplotlib helpers, one per report kind; each returns the Figure (notebooks display it)."""
from __future__ import annotations

from typing import Any


def _figure(ax, figsize=(6, 4)):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    return ax.figure, ax


def recall_curve(report, ax=None, label: str | None = None, families=("recall", "ndcg", "hit_rate")):
    """Recall@k (and nDCG@k, hit rate@k) against k for a retrieval report."""
    fig, ax = _figure(ax)
    ks = report["k"]
    for family in families:
        values = report.get(family)
        if values:
            ax.plot(ks, [values[k] for k in ks], marker="o", label=f"{label + ' ' if label else ''}{family}")
    ax.set_xlabel("k")
    ax.set_ylabel("score")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(ks)
    ax.set_title(f"retrieval by {report['by']} ({report['questions']} questions)")
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def hit_heatmap(report, ax=None, max_questions: int = 60):
    """Questions x k: green where something right was in the top k."""
    import numpy as np

    frame = report.frame.head(max_questions)
    ks = report["k"]
    data = np.array([[frame[f"hit_rate@{k}"].iloc[i] for k in ks] for i in range(len(frame))])
    fig, ax = _figure(ax, figsize=(1.2 * len(ks) + 3, 0.22 * len(frame) + 1.5))
    ax.imshow(data, aspect="auto", cmap="RdYlGn", vmin=0, vmax=1)
    ax.set_xticks(range(len(ks)), [f"@{k}" for k in ks])
    ax.set_yticks(range(len(frame)), [str(i)[:30] for i in frame.index], fontsize=7)
    ax.set_title("right answer in the top k")
    fig.tight_layout()
    return fig


def setup_comparison(report, ax=None):
    """Quality against median latency for each setup of evaluate(); the three picks are marked."""
    frame = report.frame
    quality = next(c for c in frame.columns if c.startswith("ndcg@"))
    fig, ax = _figure(ax, figsize=(7, 4.5))
    ax.scatter(frame["median_ms"], frame[quality])
    for _, row in frame.iterrows():
        ax.annotate(f"{row['mode']}/{row['vectors']}/{row['rerank']}", (row["median_ms"], row[quality]), fontsize=7)
    for pick, marker in (("best", "*"), ("fastest_close", "D"), ("best_per_ms", "s")):
        row = report[pick]
        ax.scatter([row["median_ms"]], [row[quality]], marker=marker, s=140, facecolors="none", edgecolors="red",
                   label=pick)
    ax.set_xscale("log")
    ax.set_xlabel("median latency per query (ms)")
    ax.set_ylabel(quality)
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def cutoff_plot(found, ax=None) -> Any:
    """The two score distributions of answer_cutoff (answers vs near misses) and the cut-off."""
    fig, ax = _figure(ax, figsize=(7, 4))
    ax.hist(found["answers"], bins=30, alpha=0.6, label=f"answers ({len(found['answers'])})", density=True)
    ax.hist(found["near_misses"], bins=30, alpha=0.6, label=f"near misses ({len(found['near_misses'])})", density=True)
    if found.get("cutoff") is not None:
        ax.axvline(found["cutoff"], color="black", linestyle="--", label=f"cut-off {found['cutoff']:.3f}")
    ax.set_xlabel(found.get("measure", "score"))
    ax.set_ylabel("density")
    ax.legend()
    return fig


def chunking_plot(report, ax=None):
    """Share of questions found against chunk size, one line per technique and heading setting."""
    fig, ax = _figure(ax, figsize=(7, 4.5))
    frame = report.frame
    for (technique, heading), rows in frame.groupby(["technique", "embed_heading"]):
        rows = rows.sort_values("chunk_size")
        ax.plot(rows["chunk_size"], rows["found_share"], marker="o", linestyle="--" if heading else "-",
                label=f"{technique}{' + heading' if heading else ''}")
    ax.set_xscale("log")
    ax.set_xlabel("chunk size (characters)")
    ax.set_ylabel(f"found within {report['budget']:,} characters")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    return fig


def tie_matrix(report, ax=None):
    """Exact McNemar p-values between techniques' best builds; high means the questions cannot tell them apart."""
    import numpy as np

    names = [t["name"] for t in report["techniques"]]
    data = np.array([[report["pairs"][a][b] for b in names] for a in names])
    fig, ax = _figure(ax, figsize=(2.5 + 0.9 * len(names), 1.5 + 0.7 * len(names)))
    image = ax.imshow(data, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", color="white" if data[i, j] < 0.5 else "black",
                    fontsize=8)
    fig.colorbar(image, ax=ax, label="p-value (exact McNemar)")
    ax.set_title("could the difference be luck?", fontsize=10, pad=8)
    fig.tight_layout()
    return fig
