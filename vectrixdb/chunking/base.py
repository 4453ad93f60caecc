"""Cutting a document's Markdown into chunks, by one of six techniques in one registry (and a
seventh, llm, that needs a chat model: cut_with=llm_cutter(chat)).

Every technique works on spans (start, end) of the document's Markdown, never on copies, so each
chunk's text is exactly `markdown[start:end]`, its pages are the pages that span overlaps, and its
heading path is the chain of Markdown headings above its start. The shared machinery lives here;
each technique module only decides where to cut.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from vectrixdb.errors import BadInput
from vectrixdb.reading import Document, Page


@dataclass(frozen=True)
class Chunk:
    text: str
    doc_id: str
    start: int
    end: int
    pages: tuple[int, ...]
    headings: tuple[str, ...] = ()
    parent: "Chunk | None" = None  # parent-child: the section handed back in place of this chunk


Chunker = Callable[..., list[Chunk]]
CHUNKERS: dict[str, Chunker] = {}
ALIASES = {"markdown": "structure", "structure-aware": "structure", "parent-child": "parent_child",
           "fixed-size": "fixed"}


def register(name: str) -> Callable[[Chunker], Chunker]:
    def add(fn: Chunker) -> Chunker:
        if name in CHUNKERS:
            raise BadInput(f"chunking technique {name!r} is registered twice")
        CHUNKERS[name] = fn
        return fn

    return add


# --- shared span machinery -------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


class Outline:
    """Markdown headings of a document, to give any offset its heading path."""

    def __init__(self, markdown: str):
        self.items = [(m.start(), len(m.group(1)), m.group(2).strip()) for m in _HEADING.finditer(markdown)]
        self.starts = [s for s, _, _ in self.items]

    def path_at(self, offset: int) -> tuple[str, ...]:
        path: list[tuple[int, str]] = []
        for _, level, title in self.items[: bisect.bisect_right(self.starts, offset)]:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
        return tuple(t for _, t in path)


def pages_of(pages: Sequence[Page], start: int, end: int) -> tuple[int, ...]:
    """Numbers of the pages whose text overlaps [start, end)."""
    return tuple(p.number for p in pages if p.start < end and start < p.end) or tuple(
        p.number for p in pages if p.start <= start <= p.end
    )[:1]


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@lru_cache(maxsize=4)
def outline_of(markdown: str) -> Outline:
    return Outline(markdown)


def make_chunks(doc: Document, spans: Sequence[tuple[int, int]], parent: Chunk | None = None) -> list[Chunk]:
    """Chunks for spans of doc.markdown, whitespace trimmed from their edges, empty ones dropped."""
    outline = outline_of(doc.markdown)
    out = []
    for s, e in spans:
        s, e = trim(doc.markdown, s, e)
        if e > s:
            out.append(Chunk(doc.markdown[s:e], doc.doc_id, s, e, pages_of(doc.pages, s, e), outline.path_at(s), parent))
    return out


def split_at(text: str, start: int, end: int, pattern: re.Pattern) -> list[tuple[int, int]]:
    """Cut [start, end) after every match of pattern; the pieces tile the span exactly."""
    cuts = [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]
    bounds = [start, *cuts, end]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def cut_fixed(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Pieces of at most `size` characters, each cut after the last space inside it if any."""
    out = []
    while end - start > size:
        window = text[start : start + size]
        cut = max(window.rfind(" "), window.rfind("\n"))
        stop = start + (cut + 1 if cut > size // 2 else size)
        out.append((start, stop))
        start = stop
    if end > start:
        out.append((start, end))
    return out


SEPARATORS = (re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?])[ \t]+"), re.compile(r"[ \t]+"))


def split_recursive(text: str, start: int, end: int, size: int, seps=SEPARATORS) -> list[tuple[int, int]]:
    """Pieces of at most `size`: cut at the coarsest separator that occurs, finer ones inside."""
    if end - start <= size:
        return [(start, end)]
    for i, sep in enumerate(seps):
        parts = split_at(text, start, end, sep)
        if len(parts) > 1:
            out: list[tuple[int, int]] = []
            for a, b in parts:
                out.extend(split_recursive(text, a, b, size, seps[i + 1 :]) if b - a > size else [(a, b)])
            return out
    return cut_fixed(text, start, end, size)


def merge(pieces: Sequence[tuple[int, int]], size: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy packing of consecutive pieces into spans of at most `size`, carrying about
    `overlap` characters of whole pieces from the end of one span into the next."""
    spans, i, n = [], 0, len(pieces)
    while i < n:
        j = i
        while j + 1 < n and pieces[j + 1][1] - pieces[i][0] <= size:
            j += 1
        spans.append((pieces[i][0], pieces[j][1]))
        if j + 1 >= n:
            break
        k = j + 1
        while k - 1 > i and pieces[j][1] - pieces[k - 1][0] <= overlap and pieces[j + 1][1] - pieces[k - 1][0] <= size:
            k -= 1
        i = k
    return spans
