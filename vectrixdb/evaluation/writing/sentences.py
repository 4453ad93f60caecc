"""Sentences of a page's text, as write_golden numbers them (spans.py says why and how a span is
cut: the rule is in its module docstring). Plain text in, plain text out: passages.py finds form
text with it and spans.py numbers a passage's spans with it, so neither imports the other for it."""
from __future__ import annotations

import re

_END = re.compile(r"([.?!][\"'\u201d\u2019)\]]*)\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9$])")
_ABBREVIATIONS = {"inc", "corp", "co", "ltd", "llc", "no", "nos", "mr", "mrs", "ms", "dr", "st", "vs", "etc", "e.g",
                  "i.e", "u.s", "u.k", "approx", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
                  "oct", "nov", "dec", "fig", "sec", "art", "ref", "p", "pp"}
SPAN_CHARS = 600  # a line longer than this (a flattened table) is cut at "; " or ", " to stay quotable



def _sentences(line: str) -> list[str]:
    """A line cut into sentences at sentence ends that do not follow an abbreviation or an initial."""
    out, start = [], 0
    for match in _END.finditer(line):
        before = line[start:match.start(1) + 1]
        last = before.rsplit(None, 1)[-1].rstrip(".?!").lower() if before.split() else ""
        if before.endswith(".") and (last.strip("(") in _ABBREVIATIONS or re.fullmatch(r"\(?[a-z]", last)):
            continue
        out.append(line[start:match.end(1)])
        start = match.end()
    out.append(line[start:])
    return out


def _cut_long(text: str) -> list[str]:
    """A span over SPAN_CHARS cut at the last "; " (else ", ") before the limit, repeatedly."""
    out = []
    while len(text) > SPAN_CHARS:
        cut = max(text.rfind("; ", 0, SPAN_CHARS), text.rfind(", ", 0, SPAN_CHARS))
        if cut < SPAN_CHARS // 3:
            break
        out.append(text[:cut + 1])
        text = text[cut + 2:]
    return out + [text]


_STARTS = re.compile(r"^\s*(#|\||[-*+]\s|\d+[.)]\s)")
_WHOLE = re.compile(r"^\s*(#|\|)")  # a heading or a table row: one unit, never continued


def _units(paragraph: str) -> list[str]:
    """A paragraph's units: soft-wrapped lines joined, a heading, table row or list item apart."""
    units: list[str] = []
    open_ = False
    for line in paragraph.splitlines():
        if not line.strip():
            continue
        if _STARTS.match(line) or not open_ or not units:
            units.append(line.strip())
        else:
            units[-1] += " " + line.strip()
        open_ = not _WHOLE.match(line)
    return units


def split_spans(text: str) -> list[str]:
    """The spans of one page's text, in order (see the module doc for the rule)."""
    spans = []
    for paragraph in re.split(r"\n\s*\n", text):
        for unit in _units(paragraph):
            for sentence in _sentences(unit):
                for piece in _cut_long(" ".join(sentence.split())):
                    piece = piece.strip()
                    if re.search(r"\w", piece):
                        spans.append(piece)
    return spans
