"""Which per-question columns are scores, and the questions x scores heatmap drawn from them.

A score column is numeric (or yes/no), every value it holds lies in 0..1, and it is not a count,
a rank or a time. Columns that are empty for every question (chunk F1 on a run labelled by pages)
are left out, since an all-grey column says nothing. Empty cells stay grey: undefined is not 0.
"""
from __future__ import annotations

SKIP = ("latency", "first_right", "expected", "expected_n", "of", "chunks", "questions")
MAX_ROWS = 60


def heat_rgb(value: float) -> tuple[int, int, int]:
    """A score's cell colour, the same on pages and in the PDF: red at 0, pale yellow at 0.5,
    green at 1 (light enough for black text)."""
    v = min(max(float(value), 0.0), 1.0)
    red, green = (255, int(150 + 105 * v / 0.5)) if v < 0.5 else (int(255 - 95 * (v - 0.5) / 0.5), 240)
    return red, green, 170


def score_columns(frame) -> list[str]:
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    out = []
    for column in frame.columns:
        name = str(column)
        if name.startswith(SKIP) or name.endswith((" low", " high")):
            continue
        values = frame[column]
        if not (is_bool_dtype(values) or is_numeric_dtype(values)):
            continue
        present = values.dropna().astype(float)
        if len(present) and present.between(0, 1).all():
            out.append(column)
    return out


def key_scores(frame) -> list[str]:
    """The score columns worth a heatmap: F1 stands for its precision and recall, recall@k and
    nDCG@k for precision@k and f1@k."""
    columns = score_columns(frame)
    names = {str(c) for c in columns}
    keep = []
    for c in columns:
        name = str(c)
        stem = name.rsplit("_", 1)[0]
        if name.endswith(("_precision", "_recall")) and f"{stem}_f1" in names:
            continue
        if name.startswith(("precision@", "f1@")):
            continue
        keep.append(c)
    return keep


def question_heatmap(report, max_rows: int = MAX_ROWS):
    """Questions (first max_rows) x score columns, red 0 to green 1; the number in each cell."""
    import matplotlib.pyplot as plt
    import numpy as np

    frame = report.frame
    columns = key_scores(frame)
    if not columns:
        raise ValueError("no score columns")
    shown = frame.head(max_rows)
    data = shown[columns].astype(float).to_numpy()
    fig, ax = plt.subplots(figsize=(1.0 * len(columns) + 3.5, 0.32 * len(shown) + 1.8))
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="#dddddd")
    ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cmap, vmin=0, vmax=1)
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            if not np.isnan(data[i, j]):
                ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(columns)), [str(c) for c in columns], rotation=40, ha="right", fontsize=8)
    labels = [str(i) if len(str(i)) <= 28 else str(i)[:27] + "…" for i in shown.index]
    ax.set_yticks(range(len(shown)), labels, fontsize=7)
    more = f" (first {max_rows} of {len(frame)})" if len(frame) > max_rows else ""
    ax.set_title(f"per-question scores{more}; grey: undefined", fontsize=9)
    fig.tight_layout()
    return fig
