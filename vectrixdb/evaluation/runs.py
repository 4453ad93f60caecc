"""Saved runs: `<folder>/<kind>/runs/<id>/report.json` plus the per-question table as CSV.

The folder may be local, s3:// or an Azure Blob address. A run id is the UTC time and a random
suffix; a run is written once and never over another.
"""
from __future__ import annotations

import io as _io
import json
import secrets
import time
from typing import Any

from vectrixdb import io
from vectrixdb.evaluation.report import Report

KINDS = ("retrieval", "chunking")


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def save_run(report: Report, folder: str, kind: str = "retrieval") -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown run kind {kind!r}; one of {KINDS}")
    run_id = new_run_id()
    base = io.join(folder, kind, "runs", run_id)
    body = json.loads(report.to_json())
    body.pop("rows", None)
    body.update({"run_id": run_id, "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    if report.frame is not None:
        buffer = _io.StringIO()
        report.frame.to_csv(buffer)
        io.write_new(io.join(base, "questions.csv"), buffer.getvalue())
    io.write_new(io.join(base, "report.json"), json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    return run_id


def list_runs(folder: str, kind: str = "retrieval"):
    """The saved runs of one kind, newest first, as a DataFrame of their headline figures."""
    import pandas as pd

    rows = []
    for run_id in reversed(io.listdir(io.join(folder, kind, "runs"))):
        path = io.join(folder, kind, "runs", run_id, "report.json")
        if not io.exists(path):
            continue
        data = json.loads(io.read_bytes(path))
        rows.append({"run_id": run_id, "saved": data.get("saved"), "kind": data.get("kind"),
                     "questions": data.get("questions"), "by": data.get("by"), **_headline(data)})
    return pd.DataFrame(rows)


def _headline(data: dict) -> dict[str, Any]:
    out = {}
    for family in ("recall", "ndcg"):
        values = data.get(family)
        if isinstance(values, dict) and values:
            last = max(values, key=lambda x: int(x))
            out[f"{family}@{last}"] = values[last]
    if "mrr" in data:
        out["mrr"] = data["mrr"]
    if data.get("best") is not None:
        out["best"] = json.dumps(data["best"]) if isinstance(data["best"], dict) else data["best"]
    return out


def load_run(folder: str, run_id: str, kind: str = "retrieval") -> Report:
    import pandas as pd

    base = io.join(folder, kind, "runs", run_id)
    data = json.loads(io.read_bytes(io.join(base, "report.json")))
    frame = None
    if io.exists(io.join(base, "questions.csv")):
        frame = pd.read_csv(_io.BytesIO(io.read_bytes(io.join(base, "questions.csv"))), index_col=0)
    return Report(data.pop("kind", kind), data, frame)
