"""Report: what every evaluation verb returns.

A dict holding the keys the spec names (`report["recall"]`, `found["cutoff"]`, `report["best"]`),
plus `.frame`, a pandas DataFrame with one row per question, candidate, setup or build. Undefined
numbers are None with a `reason`, never 0 or 1.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable


class Report(dict):
    def __init__(self, kind: str, values: dict[str, Any], frame=None, plot: Callable | None = None):
        super().__init__(values)
        self.kind = kind
        self.frame = frame
        self._plot = plot

    def plot(self, *args, **kwargs):
        if self._plot is None:
            raise ValueError(f"a {self.kind} report has no plot")
        return self._plot(self, *args, **kwargs)

    def to_json(self, path: str | None = None) -> str:
        """The report (its frame as records under "rows") as JSON; written to a new file if path."""
        data = {"kind": self.kind, **self}
        if self.frame is not None:
            data["rows"] = json.loads(self.frame.reset_index().to_json(orient="records"))
        text = json.dumps(_plain(data), indent=2, ensure_ascii=False)
        if path:
            from vectrixdb.io import write_new

            write_new(path, text + "\n")
        return text

    def to_polars(self):
        try:
            import polars as pl
        except ImportError:
            raise ImportError("to_polars() needs polars: pip install 'vectrixdb[polars]'") from None

        # through records, so object columns (lists of ids) need no pyarrow
        return pl.from_dicts(self.frame.reset_index().to_dict(orient="records"))

    def _repr_html_(self) -> str:
        summary = {k: v for k, v in self.items() if not isinstance(v, (list, dict)) or k in ("recall", "ndcg")}
        head = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{_short(v)}</td></tr>" for k, v in summary.items())
        table = self.frame.head(20).to_html() if self.frame is not None else ""
        return f"<b>{self.kind} report</b><table>{head}</table>{table}"

    def __repr__(self) -> str:
        keys = ", ".join(f"{k}={_short(v)}" for k, v in self.items() if not isinstance(v, list))
        return f"Report[{self.kind}]({keys})"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in list(value.items())[:8]) + "}"
    return str(value)


def _plain(value: Any) -> Any:
    """JSON-safe copy: NumPy scalars to Python, NaN to None, tuple keys to strings."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return _plain(value.to_dict())
    return value
