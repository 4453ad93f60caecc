"""Saved runs: `<folder>/<kind's folder>/runs/<id>/report.json` plus the per-question table as CSV.

The folder may be local, s3:// or an Azure Blob address. A run id is the UTC time and a random
suffix; a run is written once and never over another (Report.save), with a small header.json
beside report.json that listings read instead of the body (kinds.header_of; `listed` says when
the body is read after all). Which folder a kind lives in, its badge and its headline figures are
its declaration's business (evaluation/runs/kinds.py): retrieval reports, evaluate() tables and cut-offs
under retrieval/, chunking comparisons under chunking/, sweeps under sweeps/.
"""
from __future__ import annotations

from typing import Any, Callable

from vectrixdb import io
from vectrixdb.errors import NotFound
from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation.runs.report import KINDS, Report, kind_of


def save_run(report: Report, folder: str, kind: str | None = None) -> str:
    """Report.save under another name (kept for callers of the first version)."""
    if kind is not None:
        kind_of(kind)
    return report.save(folder)


def _folders(kind: str | None) -> list[str]:
    if kind is None:
        return kinds.folders()
    spec = KINDS.get(kind)
    return [spec.folder] if spec else [kind]  # a kind or a folder name


def list_runs(folder: str, kind: str | None = None):
    """The saved runs (of one kind or folder, or all), newest first, as a DataFrame: run id, kind,
    badge (`type`), status, started, duration, question count and the headline figures. A finished
    run is read from its header.json alone (listed()); its body is never parsed."""
    import pandas as pd

    rows = []
    for sub in _folders(kind):
        for run_id in io.listdir(io.join(folder, sub, "runs")):
            if run_id.startswith("."):  # a run being written (io.write_folder's hidden folder), not yet a run
                continue
            base = io.join(folder, sub, "runs", run_id)
            def read(name: str, b: str = base) -> bytes | None:  # b: this run's folder, bound now
                return _read(io.join(b, name))

            got = listed(run_id, io.join(base, "report.json"), read)
            if got is None or (kind in KINDS and got[1].get("kind") != kind):
                continue
            rows.append(got[1])
    frame = pd.DataFrame(rows)
    return frame.sort_values("run_id", ascending=False).reset_index(drop=True) if rows else frame


def unregistered_runs(folder: str) -> list[dict[str, Any]]:
    """Saved runs no listing shows because no registered kind claims their folder: one entry
    {"kind", "runs", "where", "note"} per kind and folder. A run is a `<folder>/<sub>/runs/<id>/` with
    a header.json or report.json; its kind is the one that file names ("?" when it names none)."""
    claimed = set(kinds.folders())
    found: dict[tuple[str, str], int] = {}
    for sub in io.listdir(folder):
        base = io.join(folder, sub, "runs")
        if sub in claimed:
            continue
        for run_id in io.listdir(base):
            kind = None if run_id.startswith(".") else _kind_named(io.join(base, run_id))
            if kind is not None:
                found[(kind, base)] = found.get((kind, base), 0) + 1
    return [{"kind": kind, "runs": n, "where": where, "note": unregistered_note(kind, n, where)}
            for (kind, where), n in sorted(found.items())]


def unregistered_note(kind: str, runs: int, where: str) -> str:
    return (f"{runs} run{'s' if runs != 1 else ''} of unregistered kind {kind!r} under {where}: import the module "
            f"that declares it (name it in {kinds.SETTING}=module,module, or give it an entry point in the group "
            "vectrixdb.report_kinds)")


def _kind_named(run_folder: str) -> str | None:
    """The kind a run folder's header.json (else report.json's head) names; None when it holds neither."""
    for name in (kinds.HEADER, "report.json"):
        raw = _read(io.join(run_folder, name))
        if raw is not None:
            data, _ = read_head(raw) if name == "report.json" else _parsed(raw)
            kind = data.get("kind") if isinstance(data, dict) else None
            return kind if isinstance(kind, str) else "?"
    return None


def _parsed(raw: bytes) -> tuple[Any, str | None]:
    from vectrixdb.evaluation.runs.saved import parse

    return parse(raw)


def _read(path: str) -> bytes | None:
    return io.read_bytes(path) if io.exists(path) else None


FINAL = ("completed", "failed")


def listed(run_id: str, report_path: str, read: Callable[[str], bytes | None]) -> tuple[dict, dict] | None:
    """(head, listing row) of one run, or None when its folder holds no run; `read(name)` gives the
    bytes of a file of the run's folder or None. The rule, shared by list_runs and the dashboard:

    - a run with a header.json is listed from it alone when it is finished (completed or failed);
      a header that cannot be used lists the run as `unreadable`, naming header.json and why;
    - a run still going (pending, running) is listed from its report.json's head with its progress
      log applied (the header holds no values to apply the log to), as is a run saved before runs
      had headers; a report.json that cannot be used lists as `unreadable`, naming report.json.
    Either way one bad file is one row saying so, and the rest of the list is unaffected."""
    from vectrixdb.evaluation.runs import progress
    from vectrixdb.evaluation.runs.saved import check_header, parse

    raw = read(kinds.HEADER)
    if raw is not None:
        data, reason = parse(raw)
        reason = reason or check_header(data)
        if reason:
            return {}, unreadable_row(run_id, data, f"{kinds.HEADER}: {reason}")
        if data.get("status") in FINAL:
            return data, header_row(run_id, data)
    body = read("report.json")
    if body is None:
        return None
    data, reason = read_head(body)
    if reason:
        return {}, unreadable_row(run_id, data, f"report.json: {reason}")
    return data, row_of(run_id, progress.apply_head(data, report_path))


_TABLES = b'\n  "tables": '


def read_head(raw: bytes) -> tuple[Any, str | None]:
    """(the meta and values of a report.json, None), or (what parsed, why the run cannot be read).

    For runs without a header (saved before headers, or still going). report.json is written with
    indent=2 and "tables" last, so the first line that is exactly the top-level key `  "tables": `
    ends what a listing needs (a JSON string holds no raw newline, so nothing inside a value looks
    like it): only that part is parsed when the file has that line; otherwise the whole file is."""
    from vectrixdb.evaluation.runs.saved import check_head, parse

    cut = raw.find(_TABLES)
    prefix = raw[:cut].rstrip() if cut != -1 else b""
    if prefix.endswith(b","):
        data, reason = parse(prefix[:-1] + b"\n}")
        if reason is None:
            return data, check_head(data)
    data, reason = parse(raw)
    return data, reason or check_head(data)


def _row(run_id: str, data: dict, badge: str | None, headline: dict, flags: Any = None) -> dict[str, Any]:
    """A listing row; `flags`: the values (or header) naming what cannot fail (cannot_fail, and
    cannot_fail_levels), listed as reasons and the levels they leave uncoloured."""
    status, _ = effective_status(data)
    flags = flags if isinstance(flags, dict) else {}
    whole, levels = flags.get("cannot_fail"), flags.get("cannot_fail_levels")
    levels = {str(k): str(v) for k, v in levels.items()} if isinstance(levels, dict) else {}
    reasons = [str(x) for x in whole] if isinstance(whole, list) else []
    return {"run_id": run_id, "type": badge, "kind": data.get("kind"), "status": status,
            "name": data.get("name"), "started": data.get("started"), "duration_s": data.get("duration_s"),
            "questions": data.get("questions"), **headline, "headline": list(headline),
            "cannot_fail": reasons + [f"{level} level: {why}" for level, why in levels.items()],
            "uncoloured": sorted(levels) if not reasons else ["chunk", "page", "doc"]}


def row_of(run_id: str, data: dict) -> dict[str, Any]:
    """The listing row of a run read from its report.json's head: the kind's declaration computes
    the badge and the headline figures from its values."""
    kind = kind_of(data["kind"])
    values = data.get("values", {})
    return _row(run_id, data, kind.badge(values), kind.headline_of(values), values)


def header_row(run_id: str, header: dict) -> dict[str, Any]:
    """The listing row of a run read from its header.json (the same row row_of gives from its body)."""
    return _row(run_id, header, header.get("badge"), header.get("headline") or {}, header)


def unreadable_row(run_id: str, data: Any, reason: str) -> dict[str, Any]:
    """The listing row of a run whose report.json cannot be used: its state is `unreadable`, with why."""
    kind = data.get("kind") if isinstance(data, dict) and isinstance(data.get("kind"), str) else None
    return {"run_id": run_id, "type": None, "kind": kind if kind in KINDS else None, "status": "unreadable",
            "name": None, "started": None, "duration_s": None, "questions": None, "error": reason}


def type_of(kind: str | None, values: dict | None) -> str | None:
    """The badge a run of `kind` shows (its declaration's; one of kinds.badges()); None for a kind
    with no badge (shown as Unknown)."""
    spec = KINDS.get(kind) if isinstance(kind, str) else None
    return spec.badge(values) if spec else None


def __getattr__(name: str):
    """TYPES (kind -> badge) and BADGES, read from the kind declarations when asked (kept for callers)."""
    if name == "BADGES":
        return kinds.badges()
    if name == "TYPES":
        return {n: k.badge({}) for n, k in KINDS.items() if k.badges and not k.badge_from}
    raise AttributeError(name)


def _headline(values: dict) -> dict[str, Any]:
    """Kept for callers of the first version: the standard headline rule (kinds_builtin)."""
    from vectrixdb.evaluation.runs.kinds_builtin import standard_headline

    return standard_headline(values)


def load_run(folder: str, run_id: str, kind: str | None = None) -> Report:
    """A saved run as the Report it was (values, frame, extra tables, meta)."""
    if "/" in run_id or "\\" in run_id or run_id in ("", ".", ".."):
        raise NotFound(f"{run_id!r} is not a run id")
    from vectrixdb.evaluation.runs import progress

    for sub in _folders(kind):
        path = io.join(folder, sub, "runs", run_id, "report.json")
        if io.exists(path):
            report = progress.apply_report(checked_report(run_id, io.read_bytes(path)), path)
            report.meta["status"], error = effective_status(report.meta)
            if error:
                report.meta["error"] = error
            return report
    raise NotFound(f"no run {run_id!r} under {folder}")


def checked_report(run_id: str, raw: bytes) -> Report:
    """The Report a report.json holds, checked (evaluation/runs/saved.py); UnreadableRun says why not."""
    from vectrixdb.evaluation.runs.saved import UnreadableRun, check_frame, check_head, check_tables, parse

    data, reason = parse(raw)
    reason = reason or check_head(data) or check_tables(data)
    if reason:
        raise UnreadableRun(run_id, reason)
    try:
        report = Report.from_dict(data)
    except Exception as exc:  # noqa: BLE001 - pandas' many ways to refuse a table become one reason
        raise UnreadableRun(run_id, f"its tables cannot be read back ({type(exc).__name__}: {exc})") from None
    which = KINDS[report.kind].questions
    for name, frame in [("frame", report.frame)] + list(report.tables.items()):
        reason = check_frame(name, frame) if frame is not None else None
        if reason is None and frame is not None and name == ("frame" if which == "frame" else which) \
                and not frame.index.is_unique:
            reason = f"question {frame.index[frame.index.duplicated()][0]!r} appears twice in its table {name!r}"
        if reason:
            raise UnreadableRun(run_id, reason)
    return report


STALE_SECONDS = 15 * 60  # a run on another machine with no sign of life for this long has died


class LiveRun:
    """A run saved as it goes: `pending` when created, `running`, then `completed` or `failed` (with
    the error). report.json is rewritten in one step each time (it is the library's own file), a few
    times per run; `append` records each question in between in the run's progress log
    (evaluation/runs/progress.py: constant cost per question), which load_run and the listings apply.
    header.json is rewritten after report.json each time, so it never claims more than the body holds.
    It records the process and a heartbeat (each write, each logged question), so a run whose
    process died is shown as failed, not running forever."""

    def __init__(self, folder: str, kind: str, name: str | None = None):
        import os
        import socket

        spec = kind_of(kind)
        self.run_id = Report.new_run_id()
        self.path = io.join(folder, spec.folder, "runs", self.run_id, "report.json")
        self.extra = {"name": name, "pid": os.getpid(), "pid_started": process_started(os.getpid()),
                      "host": socket.gethostname()}
        self.kind = kind
        self.write(Report(kind, {"questions": 0}, None), "pending")

    def write(self, report: Report, status: str, error: str | None = None) -> None:
        import time

        report["run_id"] = self.run_id
        report.meta.update({**self.extra, "run_id": self.run_id, "status": status, "heartbeat": time.time()})
        if error is not None:
            report.meta["error"] = error
        io.overwrite_owned(self.path, report.to_json() + "\n")
        io.overwrite_owned(self.path[: -len("report.json")] + kinds.HEADER, report.header_json() + "\n")
        if status in ("completed", "failed"):  # report.json now holds all the log recorded
            from vectrixdb.evaluation.runs import progress

            progress.clear(self.path)

    def append(self, record: dict) -> None:
        """Record one question's results (and the time: a heartbeat) without rewriting report.json."""
        import time

        from vectrixdb.evaluation.runs import progress

        self.logged = getattr(self, "logged", 0) + 1
        progress.append(self.path, self.logged, {"t": time.time(), **record})


def effective_status(data: dict) -> tuple[str | None, str | None]:
    """(status, error) as a reader should see them. A pending or running run has failed when
    - on this machine, its process is gone, a zombie, or its PID now names another process: the
      start time recorded with the PID (`pid_started`, see process_started) is not that of the
      process holding the PID now (PIDs are reused, so a PID alone proves nothing);
    - on another machine, it has given no sign of life (heartbeat) for STALE_SECONDS."""
    import socket
    import time

    status, error = data.get("status"), data.get("error")
    if status not in ("pending", "running"):
        return status, error
    pid, host = data.get("pid"), data.get("host")
    if host == socket.gethostname() and isinstance(pid, int) and not isinstance(pid, bool):
        recorded = data.get("pid_started")
        if not _alive(pid):
            return "failed", f"the process that ran it (pid {pid}) ended without finishing"
        now = process_started(pid)
        if isinstance(recorded, str) and now is not None and now != recorded:
            return "failed", (f"the process that ran it (pid {pid}) ended without finishing; "
                              "that pid now belongs to another process")
        return status, error
    beat = data.get("heartbeat")
    if isinstance(beat, (int, float)) and time.time() - beat > STALE_SECONDS:
        return "failed", f"no sign of life for {int(time.time() - beat)} s; its process has stopped"
    return status, error


def process_started(pid: int) -> str | None:
    """Who holds `pid`, as "<boot id>:<start time>": the kernel's start time of the process
    (/proc/<pid>/stat field 22, clock ticks since boot) on this boot. Two processes that held the same
    PID never share it. None where /proc does not say (not Linux, or no such process)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        with open("/proc/sys/kernel/random/boot_id", "rb") as fh:
            boot = fh.read().decode("ascii", "replace").strip()
    except (OSError, ValueError):
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the name (field 2) may hold spaces and ")"; field 3 on
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def _alive(pid: int) -> bool:
    """Whether a process holds `pid` and has not ended (a zombie, ended but not yet reaped, has)."""
    import os

    if pid <= 0:
        return False  # 0 and negatives name process groups, not a process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except (OSError, OverflowError):
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        return stat[stat.rfind(")") + 2:][:1] not in ("Z", "X")
    except OSError:
        return not os.path.exists("/proc/self")  # no /proc here: the signal's answer stands
