"""Other tools' benchmark rows read as golden rows, as those tools write them: Vecta here, ragas
and DeepEval in anchors.py (is_foreign / foreign_problems / from_foreign take any of the three).

Vecta (the `vecta` package's BenchmarkEntry: `id`, `question`, `answer`, `chunk_ids`,
`page_nums`, `source_paths`; `doc_names` is read as another name for `source_paths`), one entry a
JSON line (`entry.model_dump_json()`), or the CSV `VectaClient.save_benchmark` writes (the same
columns, lists joined with `|`). A row becomes:

- `reference` <- `answer`, `id` <- `id`;
- `expected` <- the pages Vecta judges by, every source x every page number (Vecta's own
  ground truth for its page level), as `doc#page=N`, and the chunk ids, so one entry is scored
  at all three levels as Vecta scores it (labels.qrel keeps them apart: pages at page grain, chunk
  ids at chunk grain, both name the documents); without page numbers, the chunk ids when there
  are any, else the sources as whole documents.
- A source given as a path is its file name, as vectrixdb names a file's document (and as a
  retrieved LangChain `source` path is matched). Page numbers are taken as vectrixdb counts them,
  from 1; a 0 (Vecta's file-store connector counts from 0) is an error on its line.
"""
from __future__ import annotations

import csv
import io as _io
import os
from typing import Any, Iterator

VECTA_FIELDS = ("chunk_ids", "page_nums", "source_paths", "doc_names")
# A Vecta CSV field (an answer, a list of chunk ids) may hold up to FIELD_LIMIT characters; a longer
# one is an error naming its line and column. csv's own limit (131,072 by default, a raw csv.Error
# past it) is raised for the process to CSV_LIMIT, the most it takes: the file is in memory whole
# anyway, so the bound that names the field is ours.
FIELD_LIMIT = 1 << 20
CSV_LIMIT = (1 << 31) - 1
VECTA_COLUMNS = {"question", "answer"}


def is_vecta(row: Any) -> bool:
    """A Vecta BenchmarkEntry: a question and an answer with Vecta's label fields, and no `expected`."""
    return (isinstance(row, dict) and "expected" not in row and VECTA_COLUMNS <= set(row)
            and any(k in row for k in VECTA_FIELDS))


def _items(value: Any) -> list[str]:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return []
    if isinstance(value, str):
        return [v for v in value.split("|") if v != ""]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v) != ""]
    return [str(value)]


def from_vecta(row: dict) -> dict:
    """The golden row a Vecta entry means (see the module docstring); schema-checked by the caller."""
    chunks = _items(row.get("chunk_ids"))
    sources = [os.path.basename(s.rstrip("/\\")) or s for s in _items(row.get("source_paths")) + _items(row.get("doc_names"))]
    sources = list(dict.fromkeys(sources))
    pages = _items(row.get("page_nums"))
    out: dict[str, Any] = {"question": row.get("question")}
    if row.get("id") not in (None, ""):
        out["id"] = str(row["id"])
    if isinstance(row.get("answer"), str) and row["answer"].strip():
        out["reference"] = row["answer"]
    if pages and sources:  # all three levels from one entry, as Vecta scores them (labels.qrel keeps them apart)
        out["expected"] = [f"{doc}#page={p}" for doc in sources for p in pages] + chunks
    else:
        out["expected"] = chunks or sources
    return out


def is_foreign(row: Any) -> bool:
    """A row another tool wrote: a Vecta BenchmarkEntry, a ragas sample or a DeepEval Golden."""
    from vectrixdb.evaluation.golden.anchors import is_deepeval, is_ragas

    return is_vecta(row) or is_ragas(row) or is_deepeval(row)


def foreign_problems(row: dict) -> list[tuple[str, str]]:
    """(field, message) for what another tool's row lacks; empty when it converts."""
    from vectrixdb.evaluation.golden.anchors import anchor_problems

    return vecta_problems(row) if is_vecta(row) else anchor_problems(row)


def from_foreign(row: dict, locator: Any = None) -> dict:
    """The golden row another tool's row means (this module's and anchors.py's docstrings say how);
    `locator` (anchors.Locator over the collection) places contexts that name no document."""
    from vectrixdb.evaluation.golden.anchors import from_anchor

    return from_vecta(row) if is_vecta(row) else from_anchor(row, locator)


def foreign_row(row: dict, held: Any = None) -> tuple[dict, list[tuple[str, str]]]:
    """check_golden's step for another tool's row: (the golden row, problems). `held` (label_check.Held,
    given a collection) places contexts; one Locator is kept on it, so documents are read once."""
    from vectrixdb.evaluation.golden.anchors import Locator, unlabelled_problem

    problems = foreign_problems(row)
    if problems:
        return row, problems
    locator = None
    if held is not None:
        locator = getattr(held, "anchor_locator", None) or Locator(held.db)
        held.anchor_locator = locator
    out = from_foreign(row, locator)
    return out, [] if out.get("expected") else [unlabelled_problem(row, locator is not None)]


def vecta_problems(row: dict) -> list[tuple[str, str]]:
    """(field, message) for what a Vecta entry lacks; the converted row gets the schema's check too."""
    out = []
    if not any(_items(row.get(k)) for k in ("chunk_ids", "source_paths", "doc_names")):
        out.append(("source_paths", "a Vecta entry with no chunk_ids and no source_paths names nothing to find"))
    for p in _items(row.get("page_nums")):
        if not p.isdigit() or int(p) < 1:
            out.append(("page_nums", f"page {p!r}: pages count from 1 here (Vecta's file-store connector counts "
                                     "from 0: add 1 to each)"))
            break
    return out


def rows_of(path: str, problems: list | None = None) -> Iterator[tuple[int, str, Any]]:
    """(line, text, row) for each row of a golden file: JSON Lines (row is the parsed value, or the
    ValueError that says why the line is not one), one JSON array (a file whose first line begins
    with `[`, unless it is JSON Lines of arrays: each element, with the line it begins on), or a
    Vecta CSV, recognised by its header (row is a dict of the columns; line is where the record begins;
    a field over FIELD_LIMIT characters is a BadInput naming its column)."""
    from vectrixdb.errors import BadInput
    from vectrixdb.evaluation.golden.questions import iter_rows, parse_row

    lines = iter_rows(path, problems)
    first = next(lines, None)
    if first is None:
        return
    if first[1].lstrip().startswith("["):
        second = next(lines, None)
        if second is None or not first[1].rstrip().endswith("]"):  # one JSON array (not JSON Lines of arrays)
            lines.close()
            yield from _json_array(path)
            return
        lines = _chain(second, lines)
    other = _other_csv(first[1])
    if other:  # one error, not one a line
        lines.close()
        yield first[0], first[1][:200], BadInput(other)
        return
    if not _is_vecta_header(first[1]):
        for n, text in _chain(first, lines):
            try:
                yield n, text, parse_row(text)
            except ValueError as exc:
                yield n, text, exc
        return
    lines.close()
    yield from _vecta_csv(path, problems)


def _json_array(path: str) -> Iterator[tuple[int, str, Any]]:
    """Each element of a file that is one JSON array (DeepEval's `save_as("json")`), with the line it
    begins on; a file that does not parse is one error on the line where it stops."""
    import json

    from vectrixdb import io
    from vectrixdb.errors import BadInput
    from vectrixdb.reading import decode

    text = decode(io.read_bytes(path), path).lstrip("\ufeff")
    decoder = json.JSONDecoder(object_pairs_hook=_pairs)
    at = text.index("[") + 1
    while True:
        at = _skip(text, at)
        if at < len(text) and text[at] == "]":
            return
        try:
            value, end = decoder.raw_decode(text, at)
        except (json.JSONDecodeError, RecursionError, ValueError) as exc:
            line = text.count("\n", 0, getattr(exc, "pos", at)) + 1
            yield line, text[at:at + 200], BadInput(f"not a JSON array of objects ({getattr(exc, 'msg', exc)})")
            return
        yield text.count("\n", 0, at) + 1, text[at:end][:200], value
        at = _skip(text, end)
        if at < len(text) and text[at] == ",":
            at += 1
        elif at >= len(text) or text[at] != "]":
            yield text.count("\n", 0, at) + 1, text[at:at + 200], BadInput("not a JSON array of objects "
                                                                              "(a comma or ] was expected)")
            return


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _pairs(pairs):
    from vectrixdb.evaluation.golden.questions import _pairs as keep_duplicates

    return keep_duplicates(pairs)


def _chain(first, rest):
    yield first
    yield from rest


def _other_csv(line: str) -> str | None:
    """Why a ragas or DeepEval CSV is not read (their lists do not survive it), or None."""
    if line.lstrip().startswith(("{", "[")):
        return None
    try:
        header = set(next(csv.reader([line]), []))
    except csv.Error:
        return None
    if {"user_input", "reference"} <= header or {"user_input", "reference_contexts"} <= header:
        return "a ragas CSV is not read (its lists are Python text there): save the test set with to_jsonl()"
    if {"input", "expected_output"} <= header:
        return "a DeepEval CSV is not read: save the dataset as json (EvaluationDataset.save_as('json', folder))"
    return None


def _is_vecta_header(line: str) -> bool:
    if line.lstrip().startswith(("{", "[")):
        return False
    try:
        header = next(csv.reader([line]), [])
    except csv.Error:  # a bare carriage return inside the line: not a CSV header
        return False
    return VECTA_COLUMNS <= set(header) and any(k in header for k in VECTA_FIELDS)


def _vecta_csv(path: str, problems: list | None) -> Iterator[tuple[int, str, Any]]:
    from vectrixdb import io
    from vectrixdb.errors import BadInput

    data = io.read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        if problems is None:
            raise BadInput(f"{path}, line {line}: not UTF-8") from None
        problems.append((line, "not UTF-8; the CSV is not read past it"))
        text = data[:exc.start].decode("utf-8-sig", errors="ignore").rsplit("\n", 1)[0]
    csv.field_size_limit(max(csv.field_size_limit(), CSV_LIMIT))
    reader = csv.reader(_io.StringIO(text, newline=""))
    header = next(reader)
    start = reader.line_num + 1
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a NUL byte, a field past even CSV_LIMIT: the CSV cannot be read on
            yield start, "", BadInput(f"not a CSV record ({exc}); the file is not read past it")
            return
        if any(v.strip() for v in values):
            row = dict(zip(header, values))
            long = next((name for name, v in row.items() if len(v) > FIELD_LIMIT), None)
            yield start, ",".join(values)[:200], (
                BadInput(f"{long}: {len(row[long]):,} characters, over the {FIELD_LIMIT:,} a field may hold") if long
                else row if len(values) == len(header)
                else BadInput(f"{len(values)} values for the {len(header)} columns of the header"))
        start = reader.line_num + 1
