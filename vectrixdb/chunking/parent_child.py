"""Parent-child: small chunks to find, the section they sit in handed back.

Parents are the document's sections (structure-aware, capped at four times chunk_size so a
fifty-page section is not handed back whole); children are recursive chunks of chunk_size inside
each parent. Only children are embedded and searched; a hit hands back its parent's text.
"""
from __future__ import annotations

from vectrixdb.chunking.base import Chunk, make_chunks, merge, register, split_recursive
from vectrixdb.chunking.structure import sections
from vectrixdb.reading import Document

PARENT_FACTOR = 4


@register("parent_child")
def parent_child(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    text, limit = doc.markdown, chunk_size * PARENT_FACTOR
    parent_spans = []
    for a, b in sections(text, limit):
        parent_spans.extend(merge(split_recursive(text, a, b, limit), limit, 0) if b - a > limit else [(a, b)])
    children: list[Chunk] = []
    for parent in make_chunks(doc, parent_spans):
        spans = merge(split_recursive(text, parent.start, parent.end, chunk_size), chunk_size, overlap)
        children.extend(make_chunks(doc, spans, parent=parent))
    return children
