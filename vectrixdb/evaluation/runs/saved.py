"""A saved report.json (and header.json) checked once, where it is read, so every reader gets a sane
run or a reason.

The dashboard, `list_runs`, `load_run` and the exports read files a person or another program may
have damaged. Instead of each page guarding each field, a file is checked here when it is read:
`parse(raw)` returns the parsed object or the reason it cannot be used, `check_head` /
`check_header` why its contents cannot be, and `UnreadableRun` (a BadInput) carries that reason to
whoever asked for the run. What a run is, is published as JSON Schema (draft 2020-12) beside
golden.schema.json, and these checks are those schemas applied with the jsonschema library, so an
editor or a pipeline that validates a saved run against them agrees with this check:

- vectrixdb/report.schema.json: report.json as Report.to_json writes it: meta fields of their
  types, a state, values whose figures are numbers or null and whose scores (levels, judge
  metrics, cut-off families, mrr) lie in 0..1, `best` an object, `techniques`, `misses` and
  `warnings` lists of what their readers take (a chunking comparison's builds in full), and
  `tables` in pandas' table form;
- vectrixdb/header.schema.json: header.json (kinds.header_of): its header version, meta fields of
  their types, a badge, headline figures (numbers, text or null).

On top of the schemas, what a static file cannot say: the file is JSON at most MAX_DEPTH levels
deep with no NaN or Infinity (to_json never writes them: undefined numbers are null), its kind is
one this process has registered, and that kind's own check passes (Kind.check: what only its
readers use). A reason names where in the file it failed, as a JSON pointer (`/values/metrics/accuracy`),
what it found there and what the schema wants. The per-question columns that hold lists
(expected, retrieved, matched, missed, passages) are checked once parsed (check_frame).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from vectrixdb.errors import BadInput

MAX_DEPTH = 64
STATES = (None, "pending", "running", "completed", "failed")
LIST_COLUMNS = re.compile(r"^(chunk|page|doc) (expected|retrieved|matched|missed)$|^passages$")
REPORT_SCHEMA, HEADER_SCHEMA = "report.schema.json", "header.schema.json"


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


@lru_cache(maxsize=None)
def schema(name: str = REPORT_SCHEMA) -> dict:
    """A published schema (report.schema.json, header.schema.json), read from the package once."""
    return json.loads(resources.files("vectrixdb").joinpath(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _validator(name: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema(name))


def pointer(path) -> str:
    """A JSON pointer (RFC 6901) to a place in a file: `/values/levels/doc/f1`, `/misses/0`."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/ (the whole file)"


def schema_reason(data: Any, name: str = REPORT_SCHEMA) -> str | None:
    """Why `data` falls short of the schema `name`, or None: the most telling of its errors (jsonschema's
    best_match), as `at /values/metrics/accuracy: str "high", not a score from 0 to 1 (report.schema.json)`."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator(name).iter_errors(data))
    if error is None:
        return None
    want = error.schema.get("title") if isinstance(error.schema, dict) else None
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"at {pointer(error.absolute_path)}: {missing!r} is missing ({name})"
    if error.validator == "propertyNames":
        return f"at {pointer(error.absolute_path)}: the key {error.instance!r} is not {want or 'allowed'} ({name})"
    return f"at {pointer(error.absolute_path)}: {_shown(error.instance)}, not {want or error.message} ({name})"


def _registered(data: dict) -> str | None:
    """Why the file's kind is not one this process knows (a kind the schema cannot list: kinds register)."""
    from vectrixdb.evaluation.runs import kinds_builtin  # noqa: F401 - registers the built-in kinds
    from vectrixdb.evaluation.runs.kinds import KINDS as kinds

    kind = data.get("kind")
    if kind not in kinds:
        return f"at /kind: its kind {kind!r} is not a kind of run this version knows ({', '.join(sorted(kinds))})"
    return None


def check_head(data: Any) -> str | None:
    """Why the meta and values of a report cannot be used (report.schema.json, a registered kind and
    its own check), or None when they can. Its tables are check_tables'."""
    from vectrixdb.evaluation.runs.kinds import KINDS, call

    if not isinstance(data, dict):
        return f"it holds {type(data).__name__ if data is not None else 'null'}, not a report object"
    head = {k: v for k, v in data.items() if k != "tables"}
    if depth_over(head):
        return f"it is nested more than {MAX_DEPTH} levels deep"
    reason = schema_reason(head) or _registered(head)
    if reason:
        return reason
    check = KINDS[data["kind"]].check  # what the kind's own readers rely on (an outside kind's rule)
    return call(check, data["values"]) if check else None


def check_header(data: Any) -> str | None:
    """Why a run's header.json (kinds.header_of) cannot be used (header.schema.json and a registered
    kind), or None when it can."""
    if not isinstance(data, dict):
        return f"it holds {type(data).__name__ if data is not None else 'null'}, not a header object"
    if depth_over(data):
        return f"it is nested more than {MAX_DEPTH} levels deep"
    return schema_reason(data, HEADER_SCHEMA) or _registered(data)


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


def _shown(value: Any) -> str:
    text = json.dumps(value)[:60] if _jsonable(value) else repr(value)[:60]
    return f"{type(value).__name__} {text}" if value is not None else "null"


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError, RecursionError):
        return False
