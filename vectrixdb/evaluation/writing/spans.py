"""Numbered sentences: how write_golden lets a model cite its passage without copying it.

A small model asked to copy "the exact words" of a passage paraphrases, trims, or copies the prompt's
own `<passage source=...>` fence with them, and every such quote fails the word-for-word check. So
the passage goes to the model as numbered spans and the model names the numbers that answer; the
evidence is the spans' own text, cut from the page by code. A quote can then be wrong only by being
the wrong choice (a number that was not shown, a span too short to check, an answer its spans do
not hold), never by a misquote, and the fence is never part of it.

The rule for a span (`split_spans`): a page's text is cut into paragraphs at blank lines; within
a paragraph a line that starts a heading ("#"), a table row ("|") or a list item ("- ", "1. ")
starts a unit of its own (a heading or a table row is one whole unit), and any other line
continues the one before it: a PDF wraps its lines inside a sentence, so a single line break is
not an end. Each unit is cut after ". ", "? " or "! " followed by a capital, a digit or an
opening quote or bracket, except after a known abbreviation ("Inc.", "U.S.", "No.") or a single
letter (an initial). A span without a letter or a digit (a table rule, "---") is dropped. A span is
its page's words with the whitespace between them made single spaces, so the word-for-word check
(which folds whitespace, as check_golden does) finds it on its page, and it carries that page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # passages uses split_spans to find form text; a Passage is only named here
    from vectrixdb.evaluation.writing.passages import Passage

_END = re.compile(r"([.?!][\"'\u201d\u2019)\]]*)\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9$])")
_ABBREVIATIONS = {"inc", "corp", "co", "ltd", "llc", "no", "nos", "mr", "mrs", "ms", "dr", "st", "vs", "etc", "e.g",
                  "i.e", "u.s", "u.k", "approx", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
                  "oct", "nov", "dec", "fig", "sec", "art", "ref", "p", "pp"}
SPAN_CHARS = 600  # a line longer than this (a flattened table) is cut at "; " or ", " to stay quotable


@dataclass(frozen=True)
class Span:
    """One numbered span: its number in the prompt, the passage it is from, its page and its text."""

    number: int
    passage: Passage
    page: int
    text: str


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


def number_spans(passages: list[Passage]) -> list[list[Span]]:
    """The spans of each passage, numbered from 1 across all of them, page by page, up to as many
    characters as the passage shows (Passage.text, cut for the prompt at PassageConfig.max_chars)."""
    out, number = [], 0
    for p in passages:
        mine: list[Span] = []
        used = 0
        for page, text in p.pieces:
            for piece in split_spans(text):
                if mine and used + len(piece) > len(p.text):
                    break
                number += 1
                used += len(piece) + 1
                mine.append(Span(number, p, page, piece))
            else:
                continue
            break
        out.append(mine)
    return out


def shown(spans: list[Span]) -> str:
    """The spans as the model reads them, one a line: "[3] text"."""
    return "\n".join(f"[{s.number}] {s.text}" for s in spans)
