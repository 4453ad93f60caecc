"""matplotlib helpers, one per report kind; each returns the Figure (notebooks display it).

One style for all (STYLE): a title that says what and over how many questions, labelled axes,
intervals where the report has them, a colour key on every heatmap, and lines told apart by marker
and dash as well as colour, so two series that coincide (or sit at a ceiling of 1.0) still show as
two. `report.plot(save="fig.png")` writes the figure to a new file.

The package: the charts are here (one function per report kind, which the kind's declaration in
evaluation/runs/kinds_builtin.py names); studies.py draws the power, pool, PPI and embedder
studies; colours.py is a score's colour everywhere (pages, PDF, notebooks), heat.py matplotlib's
colour map and cell numbers, heatmap.py the questions x scores heatmap, audit.py the golden
audit's chart. A new chart: a function here (or a module of its own) named by its report kind.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from typing import Any

STYLE = {"figure.dpi": 110, "axes.titlesize": 10, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
         "legend.fontsize": 8, "axes.spines.top": False, "axes.spines.right": False, "savefig.bbox": "tight"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
DASHES = ("-", "--", ":", "-.")


def _figure(ax, figsize=(6, 4)):
    with needs("plots"):
        import matplotlib.pyplot as plt

    plt.rcParams.update(STYLE)
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    return ax.figure, ax


def save_figure(fig, path: str) -> str:
    """Write a figure to a new file (PNG, SVG or PDF by its suffix); never over an existing one."""
    import io as _io

    from vectrixdb import io

    buffer = _io.BytesIO()
    fig.savefig(buffer, format=str(path).rsplit(".", 1)[-1].lower(), dpi=150, bbox_inches="tight")
    return io.write_new(path, buffer.getvalue())


def recall_curve(report, ax=None, label: str | None = None, families=("recall", "ndcg", "hit_rate")):
    """Recall@k (and nDCG@k, hit rate@k) against k for a retrieval report."""
    fig, ax = _figure(ax)
    ks = report["k"]
    ci = report.get("ci") or {}
    shift = 0.04 * (max(ks) - min(ks) or 1)  # series side by side, so coinciding ones stay visible
    for n, family in enumerate(families):
        values = report.get(family)
        if not values:
            continue
        xs = [k + (n - (len(families) - 1) / 2) * shift for k in ks]
        ys = [values[k] for k in ks]
        bounds = ci.get(family) or {}
        name = f"{label + ' ' if label else ''}{family}@k"
        if all(bounds.get(k) for k in ks):
            err = [[y - bounds[k][0] for y, k in zip(ys, ks)], [bounds[k][1] - y for y, k in zip(ys, ks)]]
            ax.errorbar(xs, ys, yerr=err, marker=MARKERS[n], linestyle=DASHES[n % 4], capsize=3,
                        label=f"{name} (95% CI)")
        else:
            ax.plot(xs, ys, marker=MARKERS[n], linestyle=DASHES[n % 4], label=name)
    ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel("k (results read)")
    ax.set_ylabel("score (0-1)")
    ax.set_ylim(0, 1.06)
    ax.set_xticks(ks)
    ax.set_title(f"retrieval by {report['by']}: n = {report['questions']} questions")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def hit_heatmap(report, ax=None, max_questions: int = 60):
    """Questions x k: green where something right was in the top k, red where not, grey where the
    question has no label; a colour bar says which is which and each cell says yes or no."""
    import numpy as np
    with needs("plots"):
        from matplotlib.colors import ListedColormap

    from vectrixdb.plotting.heat import cell_numbers, colour_bar

    frame = report.frame.head(max_questions)
    ks = report["k"]
    data = np.array([[frame[f"hit_rate@{k}"].iloc[i] for k in ks] for i in range(len(frame))], dtype=float)
    fig, ax = _figure(ax, figsize=(1.2 * len(ks) + 4.5, 0.22 * len(frame) + 1.8))
    cmap = ListedColormap(["#d73027", "#1a9850"]).with_extremes(bad="#dddddd")  # RdYlGn's two ends
    image = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cmap, vmin=0, vmax=1)
    cell_numbers(ax, image, data, lambda v: "yes" if v >= 0.5 else "no")
    colour_bar(fig, ax, image, "right answer in the top k", ticks=[0.25, 0.75], ticklabels=["missed", "found"])
    ax.set_xticks(range(len(ks)), [f"top {k}" for k in ks])
    ax.set_yticks(range(len(frame)), [str(i)[:30] for i in frame.index], fontsize=7)
    ax.set_xlabel("results read")
    ax.set_ylabel("question")
    shown = f"first {len(frame)} of {len(report.frame)}" if len(frame) < len(report.frame) else f"n = {len(frame)}"
    ax.set_title(f"right answer in the top k ({shown} questions)")
    fig.tight_layout()
    return fig


def setup_comparison(report, ax=None):
    """Quality against median latency for each setup of evaluate(); the three picks are marked."""
    frame = report.frame
    quality = next(c for c in frame.columns if c.startswith("ndcg@") and " " not in c)
    fig, ax = _figure(ax, figsize=(7, 4.5))
    if f"{quality} low" in frame and frame[f"{quality} low"].notna().all():
        err = [frame[quality] - frame[f"{quality} low"], frame[f"{quality} high"] - frame[quality]]
        ax.errorbar(frame["median_ms"], frame[quality], yerr=err, fmt="o", capsize=3, label="setup (95% CI)")
    else:
        ax.scatter(frame["median_ms"], frame[quality])
    for n, (_, row) in enumerate(frame.iterrows()):  # labels offset in turn, so they do not sit on the points
        ax.annotate(f"{row['mode']}/{row['vectors']}/{row['rerank']}", (row["median_ms"], row[quality]), fontsize=7,
                    xytext=(6, 6 - 12 * (n % 3)), textcoords="offset points")
    for pick, marker in (("best", "*"), ("fastest_close", "D"), ("best_per_ms", "s")):
        row = report[pick]
        ax.scatter([row["median_ms"]], [row[quality]], marker=marker, s=140, facecolors="none", edgecolors="red",
                   label=pick)
    spread = frame["median_ms"].max() / max(frame["median_ms"].min(), 1e-9)
    if spread > 10:  # a log scale only where latencies span orders of magnitude
        ax.set_xscale("log")
    else:  # plain milliseconds: no "1e-11+7.55e-2" offset when the setups' latencies (or one setup's) barely differ
        ax.ticklabel_format(axis="x", useOffset=False, style="plain")
        low, high = float(frame["median_ms"].min()), float(frame["median_ms"].max())
        if high - low <= 0.05 * high:  # one latency: centre it on a readable 0..2x axis
            ax.set_xlim(0, 2 * high if high > 0 else 1)
    ax.set_xlabel("median latency per query (ms" + (", log scale)" if spread > 10 else ")"))
    ax.set_ylabel(f"{quality} (95% CI)")
    setups = f"{len(frame)} search setup{'s' if len(frame) != 1 else ''}"
    ax.set_title(f"{setups}: quality against speed (n = {report['questions']} questions)")
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
    ax.set_xlabel(f"top result's {found.get('measure', 'score')}")
    ax.set_ylabel("density")
    ax.set_title(f"answers vs near misses (n = {len(found['answers'])} + {len(found['near_misses'])})")
    ax.legend()
    return fig


def chunking_plot(report, ax=None):
    """Share of questions found against chunk size, one line per technique and heading setting.

    The x axis is marked at the sizes measured, as plain numbers; it is logarithmic only where the
    sizes span more than 4x, and a single size sits in the middle of a short linear axis."""
    fig, ax = _figure(ax, figsize=(7, 4.5))
    frame = report.frame
    share = "right_share" if "right_share" in frame else "found_share"
    sizes = sorted({int(s) for s in frame["chunk_size"]})
    groups = list(frame.groupby(["technique", "embed_heading"]))
    techniques = list(dict.fromkeys(t for t, _ in (g for g, _ in groups)))
    palette = plt_colours(len(techniques))  # one colour per technique; headings dashed and hollow
    for n, ((technique, heading), rows) in enumerate(groups):
        rows = rows.sort_values("chunk_size")
        which = techniques.index(technique)
        ax.plot(rows["chunk_size"] * (1 + 0.015 * (n - (len(groups) - 1) / 2)), rows[share],
                marker=MARKERS[which % len(MARKERS)], color=palette[which], linestyle="--" if heading else "-",
                markerfacecolor="white" if heading else palette[which],  # hollow: told apart in the legend too
                label=f"{technique}{' + heading' if heading else ''}")
    logarithmic = len(sizes) > 1 and sizes[-1] > 4 * sizes[0]
    if logarithmic:
        ax.set_xscale("log")
        ax.minorticks_off()
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] * 0.75, sizes[0] * 1.25)
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.set_xlabel("chunk size (characters" + (", log scale)" if logarithmic else ")"))
    what = "answered right" if share == "right_share" else "found"
    ax.set_ylabel(f"share {what} within {report['budget']:,} characters")
    ax.set_ylim(0, 1.06)
    ax.axhline(1.0, color="grey", linewidth=0.6, linestyle=":")
    ax.set_title(f"techniques x size: n = {report['questions']} questions (points nudged apart where they coincide)")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    return fig


def plt_colours(n: int) -> list:
    """n colours no two alike: matplotlib's ten-colour cycle (tab10), then tab20's for more."""
    with needs("plots"):
        from matplotlib import colormaps

    return [colormaps["tab10" if n <= 10 else "tab20"](i) for i in range(n)]


def tie_matrix(report, ax=None):
    """Exact McNemar p-values between techniques' best builds; high means the questions cannot tell them apart.
    With one technique there is nothing to compare: the figure says so instead of a 1 x 1 matrix."""
    import numpy as np

    names = [t["name"] for t in report["techniques"]]
    if len(names) < 2:
        fig, ax = _figure(ax, figsize=(5, 1.2))
        ax.axis("off")
        ax.text(0.5, 0.5, f"one technique ({', '.join(names) or 'none'}): nothing to compare", ha="center", va="center")
        return fig
    data = np.array([[report["pairs"][a][b] for b in names] for a in names])
    fig, ax = _figure(ax, figsize=(2.5 + 0.9 * len(names), 1.5 + 0.7 * len(names)))
    from vectrixdb.plotting.heat import cell_numbers, colour_bar

    image = ax.imshow(data, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    cell_numbers(ax, image, data, "{:.2f}", fontsize=8)
    colour_bar(fig, ax, image, "p-value (exact McNemar)")
    ax.set_title(f"could the difference be luck? each technique's best build, n = {report['questions']} questions",
                 fontsize=10, pad=8)
    fig.tight_layout()
    return fig


def sweep_plot(report, ax=None):
    """nDCG at the largest k of every sweep build, best first."""
    frame = report.frame
    quality = next(c for c in frame.columns if c.startswith("ndcg@"))
    labels = [f"{r.chunk}/{r.chunk_size}{'+h' if r.embed_heading else ''} {r.search}" for r in frame.itertuples()]
    fig, ax = _figure(ax, figsize=(7, 0.35 * len(frame) + 1.5))
    ax.barh(range(len(frame)), frame[quality], color="tab:blue")
    ax.set_yticks(range(len(frame)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.02)
    ax.set_xlabel(f"{quality} (0-1)")
    ax.set_ylabel("build / search")
    ax.set_title(f"sweep: {len(frame)} builds, n = {report['questions']} questions, best first")
    fig.tight_layout()
    return fig


def _interval_bars(ax, names, means, intervals, color=None):
    import numpy as np

    ys = np.array([np.nan if m is None else m for m in means], dtype=float)
    low = [np.nan if c is None or m is None else m - c[0] for m, c in zip(means, intervals)]  # no interval: no bar
    high = [np.nan if c is None or m is None else c[1] - m for m, c in zip(means, intervals)]
    ax.bar(range(len(names)), ys, yerr=[low, high], capsize=4, color=color)
    ax.set_xticks(range(len(names)), names)


def wrapped_title(text: str, width: int = 100, lines: int = 3) -> str:
    """A long title on up to `lines` lines of `width` characters, broken between words; past that,
    cut at a word and ended with an ellipsis (never mid-word, never off the figure's edge)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width, max_lines=lines, placeholder=" …", break_on_hyphens=False))


def answers_plot(report, ax=None):
    """Mean judge score per metric with its 95% interval; how many answers each mean is over."""
    fig, ax = _figure(ax, figsize=(6, 4))
    names = list(report["metrics"])
    _interval_bars(ax, names, [report["metrics"][m] for m in names], [report["ci"].get(m) for m in names])
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("mean score (0-1), 95% CI")
    # a served judge's name is its address and model (often over 60 characters): wrapped, never cut
    ax.set_title(wrapped_title(f"answers judged by {report['judge']} (n={report['questions']})", 60), fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def calibration_plot(report, ax=None):
    """The judge's score against a person's for each item, with the pass threshold drawn."""
    fig, ax = _figure(ax, figsize=(5, 5))
    frame = report.frame.dropna(subset=["judge"])
    counts = frame.groupby(["human", "judge"]).size()  # coinciding items: one marker sized by how many, labelled
    ax.scatter([h for h, _ in counts.index], [j for _, j in counts.index], s=[30 + 25 * (n - 1) for n in counts],
               alpha=0.7)
    for (h, j), n in counts.items():
        if n > 1:
            ax.annotate(f"x{n}", (h, j), textcoords="offset points", xytext=(8, 6), fontsize=8)
    t = report["threshold"]
    ax.axvline(t, color="grey", linestyle=":")
    ax.axhline(t, color="grey", linestyle=":")
    ax.plot([0, 1], [0, 1], color="black", linewidth=0.8)
    ax.text(0.62, 0.58, "agreement", rotation=45, ha="center", va="center", fontsize=8)  # no legend box over a corner
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("person's score")
    ax.set_ylabel("judge's score")
    kappa = report.get("kappa")
    ax.set_title(f"judge vs people (n={report['scored']}; kappa {kappa:.2f})" if kappa is not None
                 else f"judge vs people (n={report['scored']})", fontsize=10)
    fig.tight_layout()
    return fig


def evaluation_plot(report, ax=None):
    """A run_evaluation: F1 at each level and the generation scores, with intervals where there are."""
    fig, ax = _figure(ax, figsize=(7, 4))
    names, means, intervals = [], [], []
    for level, got in (report.get("levels") or {}).items():
        if got:
            names.append(f"{level} F1@{report['k']}" if report.get("k") else f"{level} F1")  # the k it was read at
            means.append(got["f1"])
            intervals.append(None)
    outcomes = report.get("outcomes") or {}
    for metric, value in (report.get("metrics") or {}).items():
        scored = (outcomes.get(metric) or {}).get("ok")
        names.append(metric if scored in (None, report["questions"]) else f"{metric}\n(scored {scored})")
        means.append(value)
        intervals.append((report.get("ci") or {}).get(metric))
    _interval_bars(ax, names, means, intervals)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("score (0-1)")
    ax.set_title(f"{report['type']} evaluation{' ' + report['name'] if report.get('name') else ''} "
                 f"(n={report['questions']}; 95% CI on judged scores)", fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def experiment_plot(report, ax=None):
    """B - A for each measure with its interval (at the measure's Holm level); filled where the
    verdict is better or worse (compare_runs' RULE, printed under the figure)."""
    frame = report.frame
    fig, ax = _figure(ax, figsize=(7, 0.4 * len(frame) + 1.6))
    ys = range(len(frame))
    err = [frame["difference"] - frame["ci low"].fillna(frame["difference"]),
           frame["ci high"].fillna(frame["difference"]) - frame["difference"]]
    ax.errorbar(frame["difference"], ys, xerr=err, fmt="none", ecolor="grey", capsize=3)
    significant = frame["verdict"].isin(["better", "worse"]) if "verdict" in frame else frame["p_value"] < 0.05
    ax.scatter(frame["difference"][significant], [y for y, s in zip(ys, significant) if s], color="tab:red",
               label="Holm-adjusted p < 0.05" if "verdict" in frame else "p < 0.05", zorder=3)
    ax.scatter(frame["difference"][~significant], [y for y, s in zip(ys, significant) if not s], facecolors="none",
               edgecolors="tab:blue", label="could be luck", zorder=3)
    ax.axvline(0, color="black", linewidth=0.8)
    most = int(frame["paired"].max()) if "paired" in frame and len(frame) else report["questions"]
    labels = [name if "paired" not in frame or int(n) == most else f"{name} (n={int(n)})"
              for name, n in zip(frame.index, frame["paired"] if "paired" in frame else [most] * len(frame))]
    ax.set_yticks(list(ys), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("B - A (interval at each measure's Holm level, over paired questions)" if "verdict" in frame
                  else "B - A (95% CI over paired questions)")
    a, b = run_names(report)
    ax.set_title(f"B ({b}) against A ({a}): n = {most} paired questions"
                 + (" (fewer where marked)" if any("(n=" in label for label in labels) else ""), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def run_names(report) -> tuple[str, str]:
    """What an experiment's A and B are called: each run's name (its id beside it only when the two
    names are the same), its id where it has no name."""
    names = [report.get(f"{side}_name") or report.get(side) or side.upper() for side in ("a", "b")]
    if names[0] == names[1] and report.get("a") != report.get("b"):
        names = [f"{name} {report.get(side)}" for name, side in zip(names, ("a", "b"))]
    return names[0], names[1]
