"""Semantic: breakpoints where neighbouring sentences' embeddings diverge.

Each sentence is embedded (through the collection's embedder and its cache); a cut falls after a
sentence whose cosine distance to the next is in the top tenth of the document's distances
(the percentile rule of Kamradt's semantic chunker). A group over chunk_size is cut recursively.
Topics do not overlap, so `overlap` applies only inside such over-long groups.
"""
from __future__ import annotations

import numpy as np

from vectrixdb.chunking.base import Chunk, make_chunks, merge, register, split_recursive
from vectrixdb.chunking.sentence import sentences
from vectrixdb.reading import Document

BREAK_PERCENTILE = 90


@register("semantic")
def semantic(doc: Document, *, chunk_size: int, overlap: int, embedder=None) -> list[Chunk]:
    from vectrixdb.embedding import get_embedder

    text = doc.markdown
    sents = [s for s in sentences(text, chunk_size) if text[s[0] : s[1]].strip()]
    if len(sents) < 3:
        return make_chunks(doc, merge(sents, chunk_size, overlap))
    vecs = (embedder or get_embedder()).encode([text[a:b].strip() for a, b in sents])
    distance = 1.0 - np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
    threshold = np.percentile(distance, BREAK_PERCENTILE)
    groups, first = [], 0
    for i, d in enumerate(distance):
        if d > threshold:
            groups.append((sents[first][0], sents[i][1]))
            first = i + 1
    groups.append((sents[first][0], len(text)))
    groups[0] = (0, groups[0][1])
    spans = []
    for a, b in groups:
        spans.extend(merge(split_recursive(text, a, b, chunk_size), chunk_size, overlap) if b - a > chunk_size else [(a, b)])
    return make_chunks(doc, spans)
