"""matplotlib figures drawn for a run and handed to a page as PNG data URIs (the PDF takes the PNG).

Why PNG data URIs: the dashboard, the offline HTML copy and the PDF use the very same pictures,
nothing is fetched by the browser, and nothing is written to the folder. pyplot keeps global
state and the server answers from a thread pool, so every drawing happens under one lock and the
figure is closed as soon as it is rendered.
"""
from __future__ import annotations
from vectrixdb.extras import needs

import base64
import io as _io
import threading
from typing import Any, Callable

LOCK = threading.Lock()
DPI = 100


def png(draw: Callable[[], Any], dpi: int = DPI) -> bytes | None:
    """PNG bytes of the figure `draw()` returns; None when it cannot be drawn (the page says so)."""
    with needs("plots"):
        import matplotlib

    matplotlib.use("Agg")
    with needs("plots"):
        import matplotlib.pyplot as plt

    with LOCK:
        fig = None
        try:
            fig = draw()
            buffer = _io.BytesIO()
            fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
            return buffer.getvalue()
        except Exception:  # noqa: BLE001 - a figure that cannot be drawn must not take the page down
            return None
        finally:
            if fig is not None:
                plt.close(fig)


def data_uri(data: bytes | None) -> str | None:
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def run_figures(report) -> list[dict[str, Any]]:
    """The figures a run is shown with: its own plot, plus the extra plots its kind declares
    (Kind.plots, each drawn when its `when` says the run has what it needs). Each is
    {"title", "caption", "png"}; figures that cannot be drawn are left out."""
    from vectrixdb.evaluation.runs.kinds import call, kind_of

    run_id = report.meta.get("run_id")
    spec = [("The run's plot", f"{report.kind} plot of run {run_id}", report.plot)]
    for extra in kind_of(report.kind).plots:
        if extra.when is None or call(extra.when, report):
            spec.append((extra.title, extra.caption.format(run_id=run_id),
                         lambda draw=extra.draw: call(draw, report)))
    out = []
    for title, caption, draw in spec:
        data = png(draw)
        if data is not None:
            out.append({"title": title, "caption": caption, "png": data})
    return out
