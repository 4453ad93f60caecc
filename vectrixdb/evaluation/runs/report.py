"""Report: what every evaluation verb returns, and the contract it is saved and loaded by.

A Report is a dict holding the keys the spec names (`report["recall"]`, `found["cutoff"]`,
`report["best"]`), plus `.frame` (a pandas DataFrame: one row per question, candidate, setup or
build), named extra tables (`report.tables`, also reachable as attributes: `found.candidates`,
`report.outcomes`) and `.meta` (schema version, vectrixdb version, status, started, finished,
duration, question count, and what it was measured on: golden file and SHA-256, a SHA-256 of the
questions, collection, its generation and embedding model; golden.provenance). Undefined numbers are None with a `reason`, never 0 or 1; anything a
reader must know before trusting a number is in `report["warnings"]`.

Every kind is declared once (evaluation/runs/kinds.py, the built-ins in kinds_builtin.py): where its
runs are saved, its plot, its extra tables, which table holds one row per question, its schema
version, and what listings, the dashboard and the certificate show of it. `save()` and `load_run()`
go through that registry only, so a saved report loads back equal to the one saved (values, frame and
tables), integer keys such as k come back as integers, and `.plot()` works after loading.
"""
from __future__ import annotations

import io as _io
import json
import math
import secrets
import time
from typing import Any

from vectrixdb.errors import BadInput, NotFound
from vectrixdb.extras import needs


from vectrixdb.evaluation.runs import kinds_builtin  # noqa: F401 - registers the built-in kinds
from vectrixdb.evaluation.runs.kinds import HEADER, KINDS, Kind, call, header_of, kind_of, register  # noqa: F401


def now() -> float:
    return time.time()


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Report(dict):
    def __init__(self, kind: str, values: dict[str, Any], frame=None, *, tables: dict | None = None,
                 started: float | None = None, meta: dict | None = None):
        from vectrixdb.version import __version__

        spec = kind_of(kind)
        super().__init__(plain(values))
        self.kind = kind
        self.frame = frame
        self.tables = dict(tables or {})
        finished = now()
        self.meta = {"kind": kind, "schema_version": spec.version, "vectrixdb": __version__, "status": "completed",
                     "questions": values.get("questions"), "run_id": None}
        if started is not None:
            self.meta.update({"started": _iso(started), "finished": _iso(finished),
                              "duration_s": round(finished - started, 3)})
        self.meta.update(meta or {})

    def __getattr__(self, name: str):
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(f"a {self.__dict__.get('kind', '?')} report has no attribute {name!r}")

    def plot(self, *args, save: str | None = None, **kwargs):
        """The kind's figure; save= writes it to a new file too (PNG, SVG or PDF by the suffix)."""
        target = kind_of(self.kind).plot
        if target is None:
            raise BadInput(f"a {self.kind} report has no plot")
        fig = call(target, self, *args, **kwargs)  # a callable or "module:function" (kinds.py)
        if save:
            from vectrixdb.plotting import save_figure

            save_figure(fig, save)
        return fig

    # the saved form ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """What report.json holds: the meta fields at the top, then values and tables."""
        tables = {"frame": _table(self.frame)} if self.frame is not None else {}
        tables.update({name: _table(t) for name, t in self.tables.items() if t is not None})
        return {**plain(self.meta), "values": plain(dict(self)), "tables": tables}

    def to_json(self, path: str | None = None) -> str:
        """The report as JSON (see to_dict); written to a new file when path is given."""
        text = json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)
        if path:
            from vectrixdb.io import write_new

            write_new(path, text + "\n")
        return text

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        values = _int_keys(data["values"])
        tables = {name: _read_table(t) for name, t in data["tables"].items()}
        meta = {k: v for k, v in data.items() if k not in ("values", "tables")}
        frame = tables.pop("frame", None)
        if frame is not None:
            frame = frame.rename(columns=set_names_at(frame.columns, values.get("k")))
        return cls(data["kind"], values, frame, tables=tables, meta=meta)

    @staticmethod
    def new_run_id() -> str:
        """The UTC time and a random suffix: sorts by time, never collides in practice."""
        return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)

    def save(self, folder: str) -> str:
        """Save as <folder>/<kind's folder>/runs/<run id>/report.json (plus questions.csv, the
        per-question table, for people, guarded against spreadsheet formulas: runs/questions_csv.py;
        and header.json, what a listing reads); never over another run. The run's folder is written
        whole or not at all (io.write_folder: a full disk is an IOFailure and leaves nothing). A report
        reading would refuse (saved.py's checks) is refused before anything is written, naming the
        field; a unit its kind declares for a name the run lacks adds a warning. Returns the run id."""
        from vectrixdb import io

        from vectrixdb.evaluation.runs import questions_csv
        from vectrixdb.evaluation.runs.saved import check_head, check_tables

        spec = kind_of(self.kind)
        unknown = spec.unknown_units(self)  # a unit for a name the run lacks: a typo, or an optional column
        note = f"the kind's units name {unknown}, which no column or figure of this run has (a typo?)"
        if unknown and note not in (self.get("warnings") or []):
            self["warnings"] = [*(self.get("warnings") or []), note]
        run_id = self.new_run_id()
        self["run_id"] = run_id
        self.meta["run_id"] = run_id
        base = io.join(folder, spec.folder, "runs", run_id)
        body = self.to_json() + "\n"
        data = json.loads(body)
        reason = check_head(data) or check_tables(data)  # what reading checks: never save a run nobody can open
        if reason:
            raise BadInput(f"{self.kind} report {run_id} not saved: it could not be read back, since {reason}")
        per_question = self.frame if spec.questions == "frame" else self.tables.get(spec.questions or "")
        files = [] if per_question is None else [("questions.csv", questions_csv.to_csv(per_question))]
        files += [("report.json", body), (HEADER, self.header_json() + "\n")]  # after the body: a header names a whole run
        io.write_folder(base, files)  # all or nothing: a full disk leaves no half run
        return run_id

    def header_json(self) -> str:
        """The run's header (kinds.header_of): what a listing shows, readable without report.json."""
        return json.dumps(header_of({**plain(self.meta), "values": plain(dict(self))}), ensure_ascii=False,
                          allow_nan=False)

    def to_trec(self, path: str, tag: str = "vectrixdb") -> str:
        """A retrieval report's run as a TREC run file that trec_eval ranks exactly as the report did,
        ties included (interop.write_trec_run says how scores are written); never over a file."""
        from vectrixdb.evaluation.retrieval.interop import report_to_trec

        return report_to_trec(self, path, tag)

    def to_dataset(self):
        """The per-question frame as a Hugging Face datasets.Dataset."""
        from vectrixdb.evaluation.retrieval.interop import to_dataset

        return to_dataset(self)

    def to_polars(self):
        with needs("polars"):
            import polars as pl

        # through records, so object columns (lists of ids) need no pyarrow
        return pl.from_dicts(self.frame.reset_index().to_dict(orient="records"))

    # how it looks ------------------------------------------------------------------------------
    def _headline(self) -> dict[str, Any]:
        shown = ("recall", "ndcg", "unjudged", "ci")
        return {k: v for k, v in self.items() if not isinstance(v, (list, dict)) or k in shown}

    def _repr_html_(self) -> str:
        from html import escape

        warnings = "".join(f"<li>{escape(w)}</li>" for w in self.get("warnings") or [])
        head = "".join(f"<tr><th style='text-align:left'>{escape(str(k))}</th><td>{escape(_short(v))}</td></tr>"
                       for k, v in self._headline().items() if k != "warnings")
        table = self.frame.head(20).to_html() if self.frame is not None else ""
        warn = f"<p><b>warnings</b></p><ul>{warnings}</ul>" if warnings else ""
        return f"<b>{escape(self.kind)} report</b>{warn}{self._dashboard_link()}<table>{head}</table>{table}"

    def _dashboard_link(self) -> str:
        """A saved run links to its page in `vectrixdb serve` ($VECTRIXDB_DASHBOARD, else 127.0.0.1:8000)."""
        import os
        from html import escape

        run_id = self.meta.get("run_id")
        if not run_id:
            return ""
        base = os.environ.get("VECTRIXDB_DASHBOARD", "http://127.0.0.1:8000").rstrip("/")
        shown = escape(str(run_id))
        return (f"<p><a href='{escape(base)}/runs/{shown}'>open run {shown} in the dashboard</a> "
                f"(<code>vectrixdb serve FOLDER</code>; offline: <code>vectrixdb export {shown} --folder "
                f"FOLDER --html run.html</code>)</p>")

    def __repr__(self) -> str:
        keys = ", ".join(f"{k}={_short(v)}" for k, v in self._headline().items())
        warnings = "".join(f"\n  warning: {w}" for w in self.get("warnings") or [])
        return f"Report[{self.kind}]({keys}){warnings}"


SET_FIGURES = tuple(f"{level}_{m}" for level in ("doc", "page", "chunk") for m in ("precision", "recall", "f1"))


def set_name(level: str, measure: str, k: int) -> str:
    """A set figure's per-question column: it carries the k it was read at (`page_f1@10`), as its
    headline does, since its ceiling depends on k (2·min(k, R)/(k + R) for F1)."""
    return f"{level}_{measure}@{k}"


def set_names_at(columns, k: Any) -> dict[str, str]:
    """Renames that give a run saved before set columns carried their k (`page_f1`) today's names,
    read at the run's k (the largest, for a list): an old saved run loads and shows as a new one."""
    if isinstance(k, list) and k:
        k = max(k)
    if isinstance(k, bool) or not isinstance(k, int):
        return {}
    return {c: f"{c}@{k}" for c in columns if c in SET_FIGURES}


def _table(frame) -> dict:
    return json.loads(frame.to_json(orient="table", default_handler=str))


def _read_table(saved: dict):
    """A table from its saved form; a text column's missing values stay None (pandas reads a column
    of nothing but nulls as NaN)."""
    import pandas as pd

    frame = pd.read_json(_io.StringIO(json.dumps(saved)), orient="table")
    for field in saved["schema"]["fields"]:
        name = field["name"]
        if field.get("type") in ("string", "any") and name in frame.columns:
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
    return frame


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in list(value.items())[:8]) + "}"
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{value[0]:.4f}, {value[1]:.4f}]"
    return str(value)


def plain(value: Any) -> Any:
    """A JSON-safe copy that JSON gives back equal: NumPy scalars to Python, tuples to lists, NaN
    to None, objects with to_dict() to dicts; integer keys stay integers (JSON writes them as
    strings, and loading turns all-digit keys back)."""
    import numpy as np

    if isinstance(value, dict):
        return {(k if isinstance(k, int) and not isinstance(k, bool) else int(k) if isinstance(k, np.integer)
                 else str(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return plain(value.to_dict())
    return value


def _int_keys(value: Any) -> Any:
    """Undo JSON's stringing of integer keys: a dict whose keys are all digits gets int keys."""
    if isinstance(value, dict):
        keys = list(value)
        digits = bool(keys) and all(isinstance(k, str) and k.isdigit() for k in keys)
        return {(int(k) if digits else k): _int_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_int_keys(v) for v in value]
    return value


def load_report(path: str) -> Report:
    """A report from its report.json (a path, s3:// or Blob address)."""
    from vectrixdb import io

    try:
        data = json.loads(io.read_bytes(path))
    except FileNotFoundError:
        raise NotFound(f"{path}: no saved report there") from None
    except ValueError as exc:
        raise BadInput(f"{path}: not a report ({exc})") from None
    if "values" not in data or "kind" not in data:
        raise BadInput(f"{path}: not a report saved by this version (no 'values'); re-run it to save it again")
    return Report.from_dict(data)
