"""A saved report.json checked once, where it is read, so every reader gets a sane run or a reason.

The dashboard, `list_runs`, `load_run` and the exports read files a person or another program may
have damaged. Instead of each page guarding each field, a file is checked here when it is read:
`read(raw)` returns the parsed object or the reason it cannot be used, and `UnreadableRun` (a
BadInput) carries that reason to whoever asked for the run. The rules are what the library itself
writes (Report.to_json), checked field by field where a reader relies on the type:

- the file is a JSON object at most MAX_DEPTH levels deep, with no NaN or Infinity (to_json never
  writes them: undefined numbers are null); `kind` is a registered kind and `values` an object;
- meta fields (status, started, duration_s, questions, pid, heartbeat, ...) have their types;
- figures are numbers or null, and scores (levels, judge metrics, cut-off families) lie in 0..1: every entry of `levels` (an object of objects), `metrics`, the
  per-cut-off families (`recall`, `ndcg`, ... keyed by whole numbers), `mrr`; `best` is an object
  (a chunking comparison's best build with its name, size, heading and counts), `techniques`,
  `misses` and `warnings` are lists of what their readers take;
- a header.json (check_header) holds the header version, a registered kind, meta fields of their
  types, a badge and headline figures (numbers, text or null);
- `tables` is an object of tables in pandas' table form, and the per-question columns that hold
  lists (expected, retrieved, matched, missed, passages) hold lists.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from vectrixdb.errors import BadInput

MAX_DEPTH = 64
STATES = (None, "pending", "running", "completed", "failed")
#: values a retrieval report saves as scores from 0 to 1 (by k, or one number): checked when read back
SCORE_VALUES = ("recall", "ndcg", "precision", "f1", "hit_rate", "mrr")
LIST_COLUMNS = re.compile(r"^(chunk|page|doc) (expected|retrieved|matched|missed)$|^passages$")
META = {"run_id": str, "name": str, "started": str, "finished": str, "error": str, "host": str, "status": str,
        "vectrixdb": str, "pid": int, "schema_version": int, "questions": int, "duration_s": float, "heartbeat": float}


class UnreadableRun(BadInput):
    """A saved run whose report.json cannot be used; `reason` says why (shown as the run's state)."""

    def __init__(self, run_id: str, reason: str):
        super().__init__(f"run {run_id} cannot be read: {reason}")
        self.run_id, self.reason = run_id, reason


def _constant(name: str):
    raise ValueError(f"it holds {name}, which a saved report never does (undefined numbers are null)")


def parse(raw: bytes) -> tuple[Any, str | None]:
    """(object, None) or (None, reason) for the bytes of a report.json."""
    try:
        return json.loads(raw, parse_constant=_constant), None
    except RecursionError:
        return None, f"it is nested too deeply to read (more than {MAX_DEPTH} levels)"
    except UnicodeDecodeError as exc:
        return None, f"it is not UTF-8 text ({exc.reason} at byte {exc.start})"
    except ValueError as exc:
        return None, f"it is not JSON ({exc})"


def depth_over(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed JSON value nests deeper than limit (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))


def _score(value: Any) -> bool:
    """A figure that is a mean of per-question scores in 0..1 (or null): every level, judge metric
    and cut-off family this library writes is one, and the grade's interval assumes it."""
    return _number(value) and (value is None or 0 <= value <= 1)


def _kind(value: Any, want: type) -> bool:
    if value is None:
        return True
    if want is float:
        return _number(value)
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return isinstance(value, want)


def check_head(data: Any) -> str | None:
    """Why the meta and values of a report cannot be used, or None when they can."""
    if not isinstance(data, dict):
        return f"it holds {type(data).__name__ if data is not None else 'null'}, not a report object"
    if depth_over({k: v for k, v in data.items() if k != "tables"}):
        return f"it is nested more than {MAX_DEPTH} levels deep"
    reason = _check_meta(data)
    if reason:
        return reason
    values = data.get("values")
    if not isinstance(values, dict):
        return f"its values are {_shown(values)}, not an object"
    return _check_values(values, data["kind"])


def _check_meta(data: dict) -> str | None:
    """What a report and its header share: a registered kind, meta fields of their types, a state."""
    from vectrixdb.evaluation.runs import kinds_builtin  # noqa: F401 - registers the built-in kinds
    from vectrixdb.evaluation.runs.kinds import KINDS

    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return f"its kind {kind!r} is not a kind of run this version knows ({', '.join(sorted(KINDS))})"
    for key, want in META.items():
        if not _kind(data.get(key), want):
            return f"its {key} is {_shown(data.get(key))}, not {'a number' if want is float else want.__name__}"
    if data.get("status") not in STATES:
        return f"its status {data.get('status')!r} is none of pending, running, completed, failed"
    return None


def check_header(data: Any) -> str | None:
    """Why a run's header.json (kinds.header_of) cannot be used, or None when it can: an object of
    this header version, a registered kind, meta fields of their types, a badge that is text or
    null, and headline figures that are numbers, text or null by name."""
    from vectrixdb.evaluation.runs.kinds import HEADER_VERSION

    if not isinstance(data, dict):
        return f"it holds {type(data).__name__ if data is not None else 'null'}, not a header object"
    if data.get("header_version") != HEADER_VERSION:
        return f"its header_version is {_shown(data.get('header_version'))}; this version reads {HEADER_VERSION}"
    reason = _check_meta(data)
    if reason:
        return reason
    if data.get("badge") is not None and not isinstance(data.get("badge"), str):
        return f"its badge is {_shown(data.get('badge'))}, not text"
    headline = data.get("headline")
    if not isinstance(headline, dict) or not all(
            isinstance(v, str) or _number(v) for v in headline.values()):
        return f"its headline is {_shown(headline)}, not an object of figures (numbers, text or null)"
    return None


def _check_values(values: dict, kind: str) -> str | None:
    levels = values.get("levels")
    if levels is not None:
        if not isinstance(levels, dict):
            return f"values.levels is {_shown(levels)}, not an object of levels"
        for level, got in levels.items():
            if got is not None and not (isinstance(got, dict) and all(_number(v) for v in got.values())):
                return f"values.levels.{level} is {_shown(got)}, not an object of numbers"
            outside = [(m, v) for m, v in (got or {}).items() if not _score(v)]
            if outside:
                return f"values.levels.{level}.{outside[0][0]} is {_shown(outside[0][1])}, not a score from 0 to 1"
    metrics = values.get("metrics")
    if metrics is not None and not (isinstance(metrics, dict) and all(_number(v) for v in metrics.values())):
        return f"values.metrics is {_shown(metrics)}, not an object of numbers"
    outside = [(m, v) for m, v in (metrics or {}).items() if not _score(v)]
    if outside:
        return f"values.metrics.{outside[0][0]} is {_shown(outside[0][1])}, not a score from 0 to 1"
    for family in SCORE_VALUES:
        got = values.get(family)
        if isinstance(got, dict):
            bad = [k for k in got if not (isinstance(k, str) and k.isdigit())]
            if bad:
                return f"values.{family} has the cut-off {bad[0]!r}, not a whole number"
            if not all(_number(v) for v in got.values()):
                return f"values.{family} holds {_shown(next(v for v in got.values() if not _number(v)))}, not a number"
            if not all(_score(v) for v in got.values()):
                return f"values.{family} holds {_shown(next(v for v in got.values() if not _score(v)))}, not a score from 0 to 1"
        elif not _number(got):
            return f"values.{family} is {_shown(got)}, not a number"
        elif not _score(got):
            return f"values.{family} is {_shown(got)}, not a score from 0 to 1"
    for name in ("questions", "of", "duration_s"):
        if not _number(values.get(name)):
            return f"values.{name} is {_shown(values.get(name))}, not a number"
    best = values.get("best")
    if best is not None and not isinstance(best, dict):
        return f"values.best is {_shown(best)}, not an object"
    from vectrixdb.evaluation.runs.kinds import KINDS, call

    check = KINDS[kind].check  # what the kind's own readers rely on (a chunking comparison: its builds)
    reason = call(check, values) if check else None
    if reason:
        return reason
    for name in ("techniques", "misses", "warnings", "skipped"):
        got = values.get(name)
        if got is not None and not isinstance(got, list):
            return f"values.{name} is {_shown(got)}, not a list"
    if not all(isinstance(w, str) for w in _list(values, "warnings")):
        return "values.warnings holds something other than text"
    for i, miss in enumerate(_list(values, "misses")):
        if not isinstance(miss, dict) or not _passages(miss.get("got")):
            return f"values.misses[{i}] is not a miss (an object whose got is a list of passages)"
    for name in ("cost", "search"):
        got = values.get(name)
        if got is not None and not isinstance(got, dict):
            return f"values.{name} is {_shown(got)}, not an object"
    if isinstance(values.get("cost"), dict) and not isinstance(values["cost"].get("seconds") or {}, dict):
        return "values.cost.seconds is not an object"
    return None


def check_builds(values: dict) -> str | None:
    """A chunking comparison's best build and each technique's row, as their readers use them."""
    builds = [("best", values.get("best"))] + [(f"techniques[{i}]", t) for i, t in enumerate(_list(values, "techniques"))]
    for where, build in builds:
        reason = _build(where, build)
        if reason:
            return reason
    return None


def _build(where: str, build: Any) -> str | None:
    """A chunking comparison's build (its best, or one technique's row) as its readers use it."""
    if build is None and where == "best":
        return None
    if not isinstance(build, dict):
        return f"values.{where} is {_shown(build)}, not a build"
    if not isinstance(build.get("name"), str) or not _kind(build.get("chunk_size"), int) \
            or not isinstance(build.get("embed_heading", False), bool):
        return f"values.{where} lacks a name, size or heading of the right type"
    for count in ("found", "right", "of", "chunks"):
        if not _number(build.get(count)):
            return f"values.{where}.{count} is {_shown(build.get(count))}, not a number"
    return None


def check_tables(data: dict) -> str | None:
    """Why the saved tables cannot be read back, or None (their cells are checked after parsing)."""
    tables = data.get("tables", {})
    if not isinstance(tables, dict):
        return f"its tables are {_shown(tables)}, not an object"
    if depth_over(tables, MAX_DEPTH - 1):
        return f"its tables are nested more than {MAX_DEPTH} levels deep"
    for name, table in tables.items():
        fields = table.get("schema", {}).get("fields") if isinstance(table, dict) and isinstance(
            table.get("schema"), dict) else None
        named = isinstance(fields, list) and all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in fields)
        if not named \
                or not isinstance(table.get("data"), list) or not all(isinstance(r, dict) for r in table["data"]):
            return f"its table {name!r} is not a saved table (a schema with fields, and rows of objects)"
    return None


def check_frame(name: str, frame) -> str | None:
    """Why a parsed table cannot be shown: the per-question columns of ids hold lists of ids, and
    `passages` lists of passages (objects whose pages are a list and whose text is text)."""
    for column in frame.columns:
        if not LIST_COLUMNS.match(str(column)):
            continue
        ok = _passages if column == "passages" else _ids
        bad = frame[column].map(lambda v, ok=ok: not ok(v))
        if bad.any():
            what = "a list of passages" if column == "passages" else "a list of ids"
            return f"table {name!r} column {column!r} holds {_shown(frame[column][bad].iloc[0])}, not {what}"
    return None


def _ids(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value)


def _passages(value: Any) -> bool:
    return value is None or isinstance(value, list) and all(
        isinstance(p, dict) and isinstance(p.get("pages") or [], list) and isinstance(p.get("text") or "", str)
        for p in value)


def _list(values: dict, name: str) -> list:
    got = values.get(name)
    return got if isinstance(got, list) else []


def _shown(value: Any) -> str:
    text = json.dumps(value)[:60] if _jsonable(value) else repr(value)[:60]
    return f"{type(value).__name__} {text}" if value is not None else "null"


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError, RecursionError):
        return False
