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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from vectrixdb.evaluation.writing.sentences import split_spans

if TYPE_CHECKING:  # a Passage is only named here
    from vectrixdb.evaluation.writing.passages import Passage


@dataclass(frozen=True)
class Span:
    """One numbered span: its number in the prompt, the passage it is from, its page and its text."""

    number: int
    passage: Passage
    page: int
    text: str


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
