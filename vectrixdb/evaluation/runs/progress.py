"""A running run's progress: one line per question appended beside report.json, read back on load.

Rewriting report.json after every question costs the whole run so far each time (quadratic: 1,000
questions took 135 s against 0.4 s unsaved). So a LiveRun writes report.json a fixed number of
times (pending; running after the first question; completed or failed at the end) and records
each question in between as one JSON line appended to `progress.jsonl` in the run's folder, which
costs the same for the 10th question as for the 10,000th. On an object store, where nothing can be
appended to, each question is its own small object under `progress/`.

A reader of a run that is not finished (pending, running, or dead while running) rebuilds what was
reached from report.json plus the log (`apply_head` for a listing, `apply_report` for load_run):
the questions answered so far and their figures, and the time of the last one as the heartbeat. A
line cut short by a kill is not a whole JSON object, so it is left out: the rebuilt run holds only
questions that were fully recorded. The final write holds everything, so the log is then removed.
Which kinds record progress, and the module that recomputes their values (progress_values,
progress_report), is each kind's declaration's business (Kind.progress, evaluation/runs/kinds.py).
"""
from __future__ import annotations

import importlib
import json
import os
from typing import Any

from vectrixdb import io

LOG = "progress.jsonl"
FOLDER = "progress"
FINAL = ("completed", "failed")


def _base(report_path: str) -> str:
    return report_path.rsplit("/", 1)[0] if io.is_remote(report_path) else os.path.dirname(report_path)


def line(record: dict[str, Any]) -> bytes:
    from vectrixdb.evaluation.runs.report import plain

    return (json.dumps(plain(record), ensure_ascii=False, allow_nan=False, default=str) + "\n").encode("utf-8")


def append(report_path: str, n: int, record: dict[str, Any]) -> None:
    """Record question n (1, 2, ...) of a run: a line appended locally, an object of its own remotely."""
    data = line(record)
    if io.is_remote(report_path):
        io.overwrite_owned(io.join(_base(report_path), FOLDER, f"{n:09d}.json"), data)
        return
    with open(os.path.join(_base(report_path), LOG), "ab") as fh:
        fh.write(data)
        fh.flush()


def read(report_path: str) -> list[dict[str, Any]]:
    """The whole records of a run's log, in order; [] when it has none."""
    base = _base(report_path)
    if io.is_remote(report_path):
        names = [n for n in io.listdir(io.join(base, FOLDER)) if n.endswith(".json")]
        chunks = [io.read_bytes(io.join(base, FOLDER, n)) for n in sorted(names)]
        raw = b"".join(c if c.endswith(b"\n") else c + b"\n" for c in chunks)
    else:
        try:
            with open(os.path.join(base, LOG), "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            return []
    out = []
    for text in raw.split(b"\n")[:-1]:  # what follows the last newline was cut short
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def clear(report_path: str) -> None:
    """Remove the log once report.json holds everything it recorded."""
    base = _base(report_path)
    if io.is_remote(report_path):
        fs, inner = io.filesystem(io.join(base, FOLDER))
        if fs.exists(inner):
            fs.rm(inner, recursive=True)
        return
    try:
        os.unlink(os.path.join(base, LOG))
    except FileNotFoundError:
        pass


def _module(kind: Any):
    """The module that rebuilds a running run of `kind` (its declaration's `progress`), or None."""
    from vectrixdb.evaluation.runs.report import KINDS

    spec = KINDS.get(kind) if isinstance(kind, str) else None
    return importlib.import_module(spec.progress) if spec is not None and spec.progress else None


def apply_head(data: dict, report_path: str) -> dict:
    """A listing's view of a run that is not finished: report.json's head with the log applied."""
    module = _module(data.get("kind"))
    if module is None or data.get("status") in FINAL:
        return data
    records = read(report_path)
    if not records:
        return data
    out = dict(data, values=module.progress_values(data.get("values") or {}, records))
    return _beat(out, records)


def apply_report(report, report_path: str):
    """load_run's view of a run that is not finished: the Report rebuilt with what the log holds."""
    module = _module(report.kind)
    if module is None or report.meta.get("status") in FINAL:
        return report
    records = read(report_path)
    if not records:
        return report
    rebuilt = module.progress_report(report, records)
    rebuilt.meta = _beat(dict(report.meta), records)
    rebuilt.meta["questions"] = rebuilt.get("questions")
    return rebuilt


def _beat(data: dict, records: list[dict]) -> dict:
    """The last question's time is the run's latest sign of life; the count is what was reached."""
    beats: list[float] = [r["t"] for r in records if isinstance(r.get("t"), (int, float))]
    last = data.get("heartbeat")
    if beats and max(beats) > (last if isinstance(last, (int, float)) else 0):
        data["heartbeat"] = max(beats)
    data["questions"] = len(records)
    return data
