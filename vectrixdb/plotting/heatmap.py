"""Which per-question columns are scores, and the questions x scores heatmap drawn from them.

A score column is numeric (or yes/no), every value it holds lies in 0..1, and it is not a count,
a rank or a time. Columns that are empty for every question (chunk F1 on a run labelled by pages)
are left out, since an all-grey column says nothing. Empty cells stay grey: undefined is not 0.
"""
from __future__ import annotations

from vectrixdb.errors import BadInput
from vectrixdb.plotting.colours import KEY_STEPS, UNDEFINED_RGB, heat_css, heat_rgb, luminance, text_on  # noqa: F401
from vectrixdb.extras import needs

SKIP = ("latency", "first_right", "expected", "expected_n", "of", "chunks", "questions",
        "unjudged")  # unjudged@k is a share of holes, not a score: higher is not better (run page: decisions.py)
MAX_ROWS = 40  # the heatmap figure's rows and columns: see question_heatmap
MAX_COLUMNS = 10


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


def question_heatmap(report, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS, skip: tuple = ()):
    """Questions (first max_rows) x score columns (first max_columns) in the tables' colours (red 0
    to green 1), with a colour bar; each cell's number in black or white, whichever is legible on
    its colour (text_on). Sized so its 7 pt numbers stay at least 6 pt where the PDF fits it to the
    page (present.pdf.FIGURE_HEIGHT) and 9 px on the dashboard: a cell is 0.55 x 0.2 inches, hence
    the caps; the run's table has every row and column. `skip`: columns that are not scores although
    their values lie in 0..1 (its kind's `units`)."""
    with needs("plots"):
        import matplotlib.pyplot as plt
    import numpy as np

    from vectrixdb.plotting.heat import cell_numbers, colour_bar, heat_cmap

    frame = report.frame
    every = [c for c in key_scores(frame) if c not in skip]
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
    ax.set_title("per-question scores" + (f" ({'; '.join(cut)}; the run's questions.csv has all)" if cut else ""), fontsize=8)
    fig.tight_layout()
    return fig
