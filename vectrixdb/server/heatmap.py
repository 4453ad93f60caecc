"""Which per-question columns are scores, and the questions x scores heatmap drawn from them.

A score column is numeric (or yes/no), every value it holds lies in 0..1, and it is not a count,
a rank or a time. Columns that are empty for every question (chunk F1 on a run labelled by pages)
are left out, since an all-grey column says nothing. Empty cells stay grey: undefined is not 0.
"""
from __future__ import annotations

from vectrixdb.errors import BadInput

SKIP = ("latency", "first_right", "expected", "expected_n", "of", "chunks", "questions",
        "unjudged")  # unjudged@k is a share of holes, not a score: higher is not better (run page: decisions.py)
MAX_ROWS = 40  # the heatmap figure's rows and columns: see question_heatmap
MAX_COLUMNS = 10


UNDEFINED_RGB = (221, 221, 221)  # grey: a score that is undefined for the question, not 0
KEY_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the values a colour key shows


def heat_rgb(value: float) -> tuple[int, int, int]:
    """A score's cell colour, the same on pages and in the PDF: red at 0, pale yellow at 0.5,
    green at 1."""
    v = min(max(float(value), 0.0), 1.0)
    red, green = (255, int(150 + 105 * v / 0.5)) if v < 0.5 else (int(255 - 95 * (v - 0.5) / 0.5), 240)
    return red, green, 170


def luminance(rgb, scale: float = 255) -> float:
    """WCAG 2 relative luminance of an sRGB colour; channels out of `scale` (255, or 1 for matplotlib)."""
    values = [float(c) / scale for c in rgb[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in values]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def text_on(rgb, scale: float = 255) -> str:
    """The text colour legible on a background: black where black's contrast ratio is the larger,
    else white. (L + 0.05) / 0.05 = 1.05 / (L + 0.05) at L = 0.179, so black above that."""
    return "#000000" if luminance(rgb, scale) > 0.179 else "#ffffff"


def heat_css(value) -> str:
    """A score cell's inline style: its heat colour and the text colour legible on it."""
    if value is None:
        return ""
    rgb = heat_rgb(value)
    return "background-color: rgb({},{},{}); color: {}".format(*rgb, text_on(rgb))


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
        name, at = (str(c).split("@", 1) + [""])[:2]  # a set figure names its k: `page_recall@10`
        stem = name.rsplit("_", 1)[0]
        if name.endswith(("_precision", "_recall")) and (f"{stem}_f1@{at}" if at else f"{stem}_f1") in names:
            continue
        if str(c).startswith(("precision@", "f1@")):
            continue
        keep.append(c)
    return keep


def question_heatmap(report, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS):
    """Questions (first max_rows) x score columns (first max_columns) in the tables' colours (red 0
    to green 1), with a colour bar; each cell's number in black or white, whichever is legible on
    its colour (text_on). Sized so its 7 pt numbers stay at least 6 pt where the PDF fits it to the
    page (export.pdf.FIGURE_HEIGHT) and 9 px on the dashboard: a cell is 0.55 x 0.2 inches, hence
    the caps; the run's table has every row and column."""
    import matplotlib.pyplot as plt
    import numpy as np

    from vectrixdb.plotting.heat import cell_numbers, colour_bar, heat_cmap

    frame = report.frame
    every = key_scores(frame)
    if not every:
        raise BadInput("no score columns")
    columns = every[:max_columns]
    shown = frame.head(max_rows)
    data = shown[columns].astype(float).to_numpy()
    fig, ax = plt.subplots(figsize=(0.55 * len(columns) + 2.8, 0.2 * len(shown) + 1.7))
    image = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=heat_cmap(), vmin=0, vmax=1)
    cell_numbers(ax, image, data, "{:.2f}", fontsize=7)
    colour_bar(fig, ax, image, "score (0-1); grey: undefined")
    ax.set_xticks(range(len(columns)), [str(c) for c in columns], rotation=45, ha="right", fontsize=7)
    labels = [str(i) if len(str(i)) <= 24 else str(i)[:23] + "…" for i in shown.index]
    ax.set_yticks(range(len(shown)), labels, fontsize=7)
    cut = [f"first {len(shown)} of {len(frame)} questions"] if len(frame) > len(shown) else []
    cut += [f"first {len(columns)} of {len(every)} scores"] if len(every) > len(columns) else []
    ax.set_title("per-question scores" + (f" ({'; '.join(cut)}; the table has all)" if cut else ""), fontsize=8)
    fig.tight_layout()
    return fig
