"""Recursive: cut at paragraphs, then lines, then sentences, then words, packing up to chunk_size."""
from __future__ import annotations

from vectrixdb.chunking.base import Chunk, make_chunks, merge, register, split_recursive
from vectrixdb.reading import Document


@register("recursive")
def recursive(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    pieces = split_recursive(doc.markdown, 0, len(doc.markdown), chunk_size)
    return make_chunks(doc, merge(pieces, chunk_size, overlap))
