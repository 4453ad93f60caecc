"""A PDF page's layout text and styled runs to Markdown: the rules both PDF readers share.

A reader gives, for each page, a fixed-width layout text (lines in reading order, the page's
spacing kept) and the page's styled runs `(text, size, heavy)`; `pages_document` makes the
Document. A line set larger than the document's body text, or a short bold line, becomes a
Markdown heading (`#` for the largest size in the document, `##`, `###` below it). Runs of lines
split by wide gaps are either two columns of prose (a blank gutter in the middle third: read left
column, then right) or a table (a Markdown table); bullets become `-` items; an indented line
starts a paragraph. A page with no text (a scan) is kept empty and noted.
"""
from __future__ import annotations

import re
from collections import Counter

from vectrixdb.reading.document import Document, join_pages

_BULLET = re.compile(r"^[•●▪◦‣∙·]\s*")
_GAP = re.compile(r"\s{3,}")


def collapse(text: str) -> str:
    return " ".join(text.split())


def pages_document(pages: list[tuple[str, list[tuple[str, float, bool]]]], doc_id: str,
                   source: str | None, heading_chars: int = 120) -> Document:
    """A Document from each page's layout text and styled runs `(text, size, heavy)`, whichever
    reader gave them: the body size is the size set in most characters; sizes at least 1.15x the
    body's, in 3 characters or more, are heading sizes, the largest `#`, the next `##`, the rest
    `###`; each page becomes Markdown (`_markdown`, a line in a heading size being a heading when
    it has at most `heading_chars` characters); pages with no text are kept empty and noted."""
    sizes: Counter = Counter()
    for _, runs in pages:
        for text, size, _heavy in runs:
            sizes[size] += len(text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    heading_sizes = sorted({s for s, n in sizes.items() if body and s >= body * 1.15 and n >= 3}, reverse=True)
    level = {s: min(i + 1, 3) for i, s in enumerate(heading_sizes)}
    texts = [_markdown(text, runs, body, level, heading_chars) for text, runs in pages]
    empty = [i + 1 for i, t in enumerate(texts) if not t.strip()]
    notes: tuple[str, ...] = ()
    if empty:
        notes = (f"{len(empty)} of {len(texts)} pages have no text layer (scanned images?): pages {empty[:20]}",)
    return join_pages(doc_id, texts, source, notes)


def _heading(line: str, styles: dict, body: float, level: dict, heading_chars: int = 120) -> str | None:
    style = styles.get(line)
    if not style or len(line) > heading_chars or not any(c.isalpha() for c in line):
        return None
    size, heavy = style
    if size in level:
        return "#" * level[size] + " " + line
    if heavy and body and size >= body * 0.95 and len(line) < 80 and not line.endswith((".", ",", ";", ":")):
        return "#" * min(len(level) + 1, 3) + " " + line
    return None


def _gutter(lines: list[str]) -> int | None:
    """The character column of a gutter between two columns of prose, if these lines have one:
    a position in the middle third that is blank on at least 90% of the lines reaching it."""
    width = max(len(line) for line in lines)
    reaching = [line for line in lines if len(line) > width * 0.6]
    if len(lines) < 4 or len(reaching) < len(lines) * 0.6:
        return None
    for col in range(int(width * 0.35), int(width * 0.65)):
        blank = sum(1 for line in reaching if line[col - 1 : col + 2].strip() == "")
        if blank >= 0.9 * len(reaching):
            return col
    return None


def _prose(cells: list[str]) -> bool:
    text = " ".join(cells)
    return sum(c.isalpha() for c in text) > 0.7 * max(len(text.replace(" ", "")), 1)


def _columns(raw_lines: list[str]) -> list[str] | None:
    """Lines of a two-column page section, read left column first, or None when not columns."""
    col = _gutter(raw_lines)
    if col is None or not _prose([c for line in raw_lines for c in _GAP.split(line.strip())]):
        return None
    left = [line[:col] for line in raw_lines]
    right = [line[col:] for line in raw_lines]
    return [collapse(x) for x in left + [""] + right]


def _markdown(text: str, runs, body: float, level: dict, heading_chars: int = 120) -> str:
    styles: dict[str, tuple[float, bool]] = {}
    for run_text, size, heavy in runs:
        old = styles.get(run_text)
        if old is None or size > old[0]:
            styles[run_text] = (size, heavy)
    out: list[str] = []
    table: list[str] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        cells = [c for c in _GAP.split(raw.strip()) if c]
        if len(cells) >= 2 and not _BULLET.match(raw.strip()):
            table.append(raw)
            continue
        _flush(table, out)
        line = collapse(raw)
        if not line:
            continue
        heading = _heading(line, styles, body, level, heading_chars)
        if heading:
            out += ["", heading, ""]
        elif _BULLET.match(line):
            out.append(_BULLET.sub("- ", line))
        else:
            if raw[: len(raw) - len(raw.lstrip())].count(" ") >= 3 and out and out[-1]:
                out.append("")  # an indented line starts a paragraph
            out.append(line)
    _flush(table, out)
    return "\n".join(out).strip("\n")


def _flush(table: list[str], out: list[str]) -> None:
    """Lines split by wide gaps: two columns of prose are read one after the other; otherwise two
    or more such lines become a Markdown table, and a single one is kept as a line."""
    columns = _columns(table) if len(table) >= 4 else None
    if columns is not None:
        out += ["", *columns, ""]
    elif len(table) >= 2:
        cells = [[c for c in _GAP.split(line.strip()) if c] for line in table]
        width = max(len(r) for r in cells)
        rows = [r + [""] * (width - len(r)) for r in cells]
        out += ["", "| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows[1:]]
        out.append("")
    elif table:
        out.append(collapse(table[0]))
    table.clear()
