"""Step 3 of write_golden: the checks no model makes, each with the reason a draft is sent back.

- Each quote must be in one of the question's passages word for word (whitespace, case and Markdown
  marks folded, as check_golden folds them: labels.normal) and have at least quote_words words; the
  page it is on is the page `expected` names, so a chunk over two pages is labelled with the page
  that answers (a quote over a page break names both).
- Copying: the longest run of consecutive words the question shares with its passages (words are
  runs of letters and digits after folding). Sent back when that run is copy_run words or more, or
  is at least copy_share of the question's words and at least copy_min words long.
- Pointing: "the passage", "this table", "the text above"... a reader of the search box has none.
- Repeats: questions are compared after folding case, punctuation, whitespace and the articles a,
  an, the; digits are kept, so two that differ only in a year or a figure are two questions.
- Kinds: a search has at most search_words words; a long question has long_words words; a
  two-place question quotes at least two of its passages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from vectrixdb.evaluation.labels import normal
from vectrixdb.evaluation.writing_config import CheckConfig, KindConfig
from vectrixdb.evaluation.writing_passages import Passage

_POINTING = re.compile(
    r"\b(?:(?:this|that|these|the|above|following|given|provided|attached|said)\s+"
    r"(?:passage|passages|excerpt|extract|snippet|paragraph|context|table|chart|figure|text|document)s?\b"
    r"|\b(?:mentioned|stated|shown|described)\s+above\b|\bas\s+stated\b|\baccording\s+to\s+the\s+(?:passage|text|table)\b)",
    re.I)
_ARTICLES = {"a", "an", "the"}


def words(text: str) -> list[str]:
    """The words of a text as the checks count them: letters and digits, case and marks folded."""
    return re.findall(r"\w+", normal(text))


def longest_run(question: list[str], passage: list[str]) -> int:
    """Length of the longest run of consecutive words found in both (dynamic programming)."""
    best, previous = 0, [0] * (len(passage) + 1)
    for word in question:
        current = [0] * (len(passage) + 1)
        for j, other in enumerate(passage, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def copies(question: str, passages: list[Passage], config: CheckConfig) -> str | None:
    """Why the question copies its passages' wording, or None."""
    asked = words(question)
    run = max((longest_run(asked, words(p.text)) for p in passages), default=0)
    if run >= config.copy_run:
        return f"copies the passage: {run} words in a row are the passage's (at most {config.copy_run - 1})"
    if asked and run >= config.copy_min and run / len(asked) >= config.copy_share:
        return (f"copies the passage: {run} of its {len(asked)} words are one run of the passage's "
                f"(under {config.copy_share:.0%} allowed)")
    return None


def points_at(question: str) -> str | None:
    """Why the question points at a text its asker would not have, or None."""
    match = _POINTING.search(question)
    return f"points at {match.group(0)!r}: a question must stand without the passage" if match else None


def repeat_key(question: str) -> str:
    """A question folded for spotting repeats: case, punctuation, whitespace and articles; digits kept."""
    return " ".join(w for w in words(question) if w not in _ARTICLES)


def locate(quote: str, passage: Passage) -> tuple[int, ...]:
    """The page(s) of the passage the quote is on (folded as check_golden folds), or () when absent."""
    want = normal(quote)
    if not want or want not in normal(passage.text):
        return ()
    pieces = passage.pieces
    for size in range(1, len(pieces) + 1):
        for i in range(len(pieces) - size + 1):
            if want in normal("\n\n".join(text for _, text in pieces[i:i + size])):
                return tuple(number for number, _ in pieces[i:i + size])
    return ()


@dataclass(frozen=True)
class Found:
    """A quote, the passage that holds it and the page(s) it is on."""

    quote: str
    passage: Passage
    pages: tuple[int, ...]


def check_draft(question: str, answer: str, quotes: list[str], kind: str, passages: list[Passage],
                written: set[str], checks: CheckConfig, kinds: KindConfig) -> tuple[str | None, str | None, list[Found]]:
    """(reason key, message, located quotes): reason None when the draft passes every check."""
    question, answer = question.strip(), answer.strip()
    if not question or not answer:
        return "empty", "the question and the answer must both be given", []
    quotes = [q.strip() for q in quotes if q and q.strip()]
    if not quotes:
        return "no quote", "quote the passage's words that give the answer", []
    found: list[Found] = []
    for quote in quotes:
        if len(words(quote)) < checks.quote_words:
            return "quote too short", f"the quote {quote!r} is under {checks.quote_words} words; quote the whole answer", []
        place = next(((p, pages) for p in passages for pages in [locate(quote, p)] if pages), None)
        if place is None:
            return "quote not in passage", f"the quote {quote[:80]!r} is not in the passage word for word", []
        found.append(Found(quote, place[0], place[1]))
    count = len(words(question))
    if kind == "search" and count > kinds.search_words:
        return "search too long", f"a search has at most {kinds.search_words} words; this has {count}", found
    low, high = kinds.long_words
    if kind == "long" and not low <= count <= high:
        return "long out of range", f"a long question has {low} to {high} words; this has {count}", found
    if kind == "two_place" and len({f.passage.chunk_id for f in found}) < 2:
        return "one place only", "the question must need both passages: quote words from each", found
    for key, why in (("points at the passage", points_at(question)), ("copies the passage", copies(question, passages, checks))):
        if why:
            return key, why, found
    if repeat_key(question) in written:
        return "repeat", "this question was already written", found
    return None, None, found


def row_parts(found: list[Found]) -> tuple[list[str], list[str], str]:
    """(expected labels, evidence quotes, hint) for a kept question: each label names the page a
    quote is on; the hint names the page and quotes the answering words."""
    expected: list[str] = []
    hints: list[str] = []
    evidence: list[str] = []
    for f in found:
        labels = [f.passage.label(p) for p in f.pages]
        expected += [label for label in labels if label not in expected]
        if f.quote not in evidence:
            evidence.append(f.quote)
            where = f"{f.passage.doc_id}, page{'s' if len(f.pages) > 1 else ''} {'-'.join(map(str, f.pages))}"
            hints.append(f"{where}: \u201c{f.quote}\u201d")
    return expected, evidence, "; ".join(hints)
