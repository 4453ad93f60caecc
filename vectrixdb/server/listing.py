"""The dashboard's view of a folder of runs: a fast listing and the only way a run id becomes a path.

`list_runs()` (evaluation/runs/store.py) reads one run at a time. The dashboard lists thousands, so it
differs in two ways, neither of which changes a row:

- every run's header.json is fetched with one fsspec `cat` call per listing (concurrent on s3://
  and Blob, a plain loop locally), and the report.json of the few runs that need it (no header:
  saved before headers; or still going) with one more;
- a row whose header says completed or failed is kept in memory: such a run is written once and
  never again (runs.LiveRun's last write), so only pending and running runs are read again (with
  their progress log, evaluation/runs/progress.py).

Runs saved under a folder no registered kind claims are not rows (nothing here can draw them), but
`unregistered()` counts them by kind and the list page says so, naming the module setting to use.

Rows are made by runs.listed, the rule list_runs uses, so `frame()` equals `list_runs(folder)`: a
header or report.json that cannot be used (evaluation/runs/saved.py says why) is a row in state
`unreadable` naming the file and why, and never stops the others from being listed. A run id
from a URL is looked up in this index and never joined to a path, so no id can reach outside FOLDER.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any

from vectrixdb import io
from vectrixdb.errors import NotFound
from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation.runs.kinds import KINDS
from vectrixdb.evaluation.runs.store import FINAL, listed

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True)
class Ref:
    """Where one listed run lives: its kind's folder and its report.json."""
    run_id: str
    folder: str
    path: str


class Runs:
    """A folder of runs (local, s3:// or Blob), listed on demand; thread-safe."""

    def __init__(self, folder: str):
        self.folder = str(folder) if io.is_remote(str(folder)) else os.path.abspath(os.path.expanduser(str(folder)))
        self._lock = threading.Lock()
        self._final: dict[str, tuple[Ref, dict, dict]] = {}  # run id -> (ref, head, row) for finished runs
        self._refs: dict[str, Ref] = {}

    def _scan(self) -> dict[str, Ref]:
        refs = {}
        for sub in kinds.folders():
            base = io.join(self.folder, sub, "runs")
            for run_id in io.listdir(base):
                if RUN_ID.match(run_id) and run_id not in refs:
                    refs[run_id] = Ref(run_id, sub, io.join(base, run_id, "report.json"))
        return refs

    def heads(self) -> list[tuple[Ref, dict, dict]]:
        """(ref, head, row) for every run that has a report.json, in folder order (as list_runs reads)."""
        refs = self._scan()
        with self._lock:
            todo = [r for r in refs.values() if r.run_id not in self._final]
        heads = _cat([_header(r) for r in todo]) if todo else {}
        later = [r for r in todo if _needs_body(heads.get(_header(r)))]
        bodies = _cat([r.path for r in later]) if later else {}
        out = []
        with self._lock:
            for ref in refs.values():
                if ref.run_id in self._final:
                    out.append(self._final[ref.run_id])
                    continue
                files = {kinds.HEADER: heads.get(_header(ref)), "report.json": bodies.get(ref.path)}
                got = listed(ref.run_id, ref.path, files.get)
                if got is None:
                    continue
                entry = (ref, got[0], got[1])
                if got[1].get("status") in FINAL and got[0].get("status") in FINAL:
                    self._final[ref.run_id] = entry  # an unreadable run is read again next time (it may be mended)
                out.append(entry)
            self._refs = {e[0].run_id: e[0] for e in out}
        return out

    def rows(self) -> list[dict[str, Any]]:
        """The listing rows (copies: the cache stays as read), newest first."""
        return sorted((dict(e[2]) for e in self.heads()), key=lambda r: r["run_id"], reverse=True)

    def frame(self):
        """The listing exactly as list_runs returns it (a DataFrame, newest first)."""
        import pandas as pd

        rows = [e[2] for e in self.heads()]
        frame = pd.DataFrame(rows)
        return frame.sort_values("run_id", ascending=False).reset_index(drop=True) if rows else frame

    def unregistered(self) -> list[dict[str, Any]]:
        """The runs under folders no registered kind claims (store.unregistered_runs): the list says
        how many there are and what to import instead of leaving them out in silence."""
        from vectrixdb.evaluation.runs.store import unregistered_runs

        return unregistered_runs(self.folder)

    def ref(self, run_id: str) -> Ref:
        """The listed run with this id; NotFound for anything else (never a path built from it)."""
        if not isinstance(run_id, str) or not RUN_ID.match(run_id) or ".." in run_id:
            raise NotFound(f"{run_id!r} is not a run id")
        if run_id not in self._refs:
            self.heads()
        if run_id not in self._refs:
            raise NotFound(f"no run {run_id!r} in this folder")
        return self._refs[run_id]

    def stamp(self, ref: Ref) -> tuple | None:
        """What says a run's report.json is the one read: its size and modification time (an object
        store's ETag where it gives no time); None when it is gone (the run was removed)."""
        fs, inner = io.filesystem(ref.path)
        try:
            info = fs.info(inner)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (info.get("size"), info.get("mtime") or info.get("LastModified") or info.get("last_modified")
                or info.get("ETag") or info.get("etag"))

    def forget(self, run_id: str) -> None:
        """Drop what is kept of a run (it was removed or rewritten): the next listing reads it afresh."""
        with self._lock:
            self._final.pop(run_id, None)
            self._refs.pop(run_id, None)

    def load(self, run_id: str):
        """The listed run as its Report (through load_run, so dead runs read as failed)."""
        from vectrixdb.evaluation.runs.store import load_run

        ref = self.ref(run_id)
        return load_run(self.folder, ref.run_id, next(k for k, spec in KINDS.items() if spec.folder == ref.folder))


def _header(ref: Ref) -> str:
    return ref.path[: -len("report.json")] + kinds.HEADER


def _needs_body(header: bytes | None) -> bool:
    """Whether runs.listed will read report.json too: no header, or one that is not final. A header
    that cannot be parsed is listed as unreadable from itself, without the body."""
    if header is None:
        return True
    from vectrixdb.evaluation.runs.saved import check_header, parse

    data, reason = parse(header)
    return reason is None and check_header(data) is None and data.get("status") not in FINAL


def _cat(paths: list[str]) -> dict[str, bytes]:
    """path -> bytes for each path that exists, in one fsspec call (concurrent on object stores)."""
    fs, _ = io.filesystem(paths[0])
    inner = {fs._strip_protocol(io.filesystem(p)[1] if io.is_remote(p) else p): p for p in paths}
    got = fs.cat(list(inner), on_error="omit")
    return {inner[fs._strip_protocol(k)]: v for k, v in got.items() if fs._strip_protocol(k) in inner}
