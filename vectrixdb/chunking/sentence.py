"""Sentence: whole sentences packed up to chunk_size; a sentence longer than that is cut recursively."""
from __future__ import annotations

import re

from vectrixdb.chunking.base import Chunk, make_chunks, merge, register, split_at, split_recursive
from vectrixdb.reading import Document

# A sentence ends at . ! or ? followed by space, or at a line break (headings, list items, cells).
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*[ \t]+|\n+")


def sentences(text: str, size: int) -> list[tuple[int, int]]:
    out = []
    for a, b in split_at(text, 0, len(text), SENTENCE_END):
        out.extend(split_recursive(text, a, b, size) if b - a > size else [(a, b)])
    return out


@register("sentence")
def sentence(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    return make_chunks(doc, merge(sentences(doc.markdown, chunk_size), chunk_size, overlap))
