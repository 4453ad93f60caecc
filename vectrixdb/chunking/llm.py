"""LLM-based: a chat model reads each section's paragraphs and says where each topic starts.

Sections are the spans between Markdown headings (the whole document when it has none); a section
with more than MAX_PARAGRAPHS paragraphs or MAX_CHARS characters is asked about in consecutive
windows, so a prompt stays small. One call per window, through the cutter's ChatWriter (cached).
Paragraphs from one topic start to the next form a topic; a topic longer than chunk_size is cut
further at paragraph, line, sentence and word boundaries (split_recursive), so every chunk keeps
exact offsets into the Markdown and no chunk exceeds chunk_size. Topics do not overlap; `overlap`
applies only inside a topic cut further.
"""
from __future__ import annotations

import re

from vectrixdb.chunking.base import Chunk, _HEADING, make_chunks, merge, register, split_at, split_recursive, trim
from vectrixdb.errors import BadInput
from vectrixdb.reading import Document

MAX_PARAGRAPHS = 40
MAX_CHARS = 6000
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


@register("llm")
def llm(doc: Document, *, chunk_size: int, overlap: int, cut_with=None, embedder=None) -> list[Chunk]:
    if cut_with is None:
        raise BadInput('chunk="llm" needs a model to read the paragraphs: cut_with=llm_cutter(chat) '
                       "(from vectrixdb.chunk_models)")
    from vectrixdb.chunk_models import starts_of

    text = doc.markdown
    every: list[list[tuple[int, int]]] = []
    for a, b in sections(text):
        paragraphs = [trim(text, s, e) for s, e in split_at(text, a, b, _PARAGRAPH)]
        paragraphs = [(s, e) for s, e in paragraphs if e > s]
        every.extend(windows(paragraphs))
    said = starts_of(cut_with, [[text[s:e] for s, e in window] for window in every])  # asked at once, in order
    spans: list[tuple[int, int]] = []
    for window, found in zip(every, said):
        starts = sorted({i for i in found if 0 <= i < len(window)} | {0})
        bounds = [*starts, len(window)]
        for first, after in zip(bounds, bounds[1:]):
            s, e = window[first][0], window[after - 1][1]
            spans.extend(merge(split_recursive(text, s, e, chunk_size), chunk_size, overlap)
                         if e - s > chunk_size else [(s, e)])
    return make_chunks(doc, spans)


def sections(text: str) -> list[tuple[int, int]]:
    """Spans between headings (each heading starts its section); the whole text when there are none."""
    starts = sorted({0, *(m.start() for m in _HEADING.finditer(text))})
    return [(a, b) for a, b in zip(starts, [*starts[1:], len(text)]) if b > a]


def windows(paragraphs: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Consecutive runs of paragraphs, each at most MAX_PARAGRAPHS long and about MAX_CHARS of text."""
    out: list[list[tuple[int, int]]] = []
    for p in paragraphs:
        if not out or len(out[-1]) >= MAX_PARAGRAPHS or p[1] - out[-1][0][0] > MAX_CHARS:
            out.append([])
        out[-1].append(p)
    return out
