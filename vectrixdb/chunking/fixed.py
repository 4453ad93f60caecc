"""Fixed-size: a window every chunk_size - overlap characters, each end moved back to a space."""
from __future__ import annotations

from vectrixdb.chunking.base import Chunk, make_chunks, register
from vectrixdb.reading import Document


def _space_before(text: str, lo: int, hi: int) -> int:
    """The position just after the last whitespace in (lo, hi], or hi when there is none."""
    for i in range(hi, lo, -1):
        if text[i - 1].isspace():
            return i
    return hi


@register("fixed")
def fixed(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    text, n = doc.markdown, len(doc.markdown)
    spans, start = [], 0
    while start < n:
        end = n if start + chunk_size >= n else _space_before(text, start + chunk_size // 2, start + chunk_size)
        spans.append((start, end))
        if end >= n:
            break
        nxt = _space_before(text, start, end - overlap) if overlap else end
        start = nxt if nxt > start else end
    return make_chunks(doc, spans)
