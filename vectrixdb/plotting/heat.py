"""What every heatmap carries, on pages, in notebooks and in the PDF: a colour bar saying what the
colours mean, and each cell's number in black or white, whichever contrasts more with the cell's
colour (WCAG relative luminance, plotting.colours.text_on), so no number is lost on a dark cell.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from typing import Callable


def cell_numbers(ax, image, data, fmt: str | Callable[[float], str] = "{:.2f}", fontsize: float = 7) -> None:
    """Write each defined cell's value on it; the text colour follows the cell's own colour."""
    import numpy as np

    from vectrixdb.plotting.colours import text_on

    say = fmt.format if isinstance(fmt, str) else fmt
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            value = data[i, j]
            if value is None or np.isnan(value):
                continue
            colour = text_on(image.cmap(image.norm(value)), scale=1)
            ax.text(j, i, say(value), ha="center", va="center", fontsize=fontsize, color=colour)


def colour_bar(fig, ax, image, label: str, ticks=None, ticklabels=None):
    """A colour bar beside the heatmap, labelled; ticks (and their words) where given."""
    bar = fig.colorbar(image, ax=ax, label=label, fraction=0.05, pad=0.03, aspect=30, ticks=ticks)
    if ticklabels is not None:
        bar.set_ticklabels(ticklabels)
    bar.ax.tick_params(labelsize=7)
    return bar


def heat_cmap():
    """The dashboard's and the PDF's cell colours (plotting.colours.heat_rgb) as a matplotlib
    colour map, grey where a value is undefined, so a figure and a table read the same way."""
    with needs("plots"):
        from matplotlib.colors import LinearSegmentedColormap

    from vectrixdb.plotting.colours import UNDEFINED_RGB, heat_rgb

    steps = [tuple(c / 255 for c in heat_rgb(i / 20)) for i in range(21)]
    grey = tuple(c / 255 for c in UNDEFINED_RGB)
    return LinearSegmentedColormap.from_list("vectrixdb_heat", steps).with_extremes(bad=grey)
