"""Structure-aware: one chunk per Markdown section; a long section is cut recursively inside itself.

A section that is only a heading (or nearly) joins the section after it, so headings are never
chunks of their own.
"""
from __future__ import annotations

import re

from vectrixdb.chunking.base import Chunk, make_chunks, merge, register, split_recursive
from vectrixdb.reading import Document

HEADING_START = re.compile(r"^#{1,6}[ \t]", re.M)


def sections(text: str, size: int) -> list[tuple[int, int]]:
    """Spans from one heading to the next; tiny ones joined to the following section."""
    bounds = sorted({0, *(m.start() for m in HEADING_START.finditer(text)), len(text)})
    raw = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    out: list[tuple[int, int]] = []
    carry = None
    for a, b in raw:
        a = carry if carry is not None else a
        carry = a if b - a < size // 5 and len(text[a:b].strip().splitlines()) <= 1 else None
        if carry is None:
            out.append((a, b))
    if carry is not None:
        out.append((carry, len(text)))
    return out


@register("structure")
def structure(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    text, spans = doc.markdown, []
    for a, b in sections(text, chunk_size):
        spans.extend(merge(split_recursive(text, a, b, chunk_size), chunk_size, overlap) if b - a > chunk_size else [(a, b)])
    return make_chunks(doc, spans)
