"""Per-page quality flags and a score from 0 (useless) to 1, without a model.

The question writer passes over flagged pages, and a reader can see at a glance which pages of a
PDF came out badly. Each flag costs the score a fixed share; the rules are deliberately simple
and each is stated where it is decided.
"""
from __future__ import annotations

import re

PENALTY = {"empty": 1.0, "garbled": 0.8, "contents": 0.6, "numbers": 0.5, "caption": 0.6, "scrap": 0.5}
SCRAP_BELOW = 80  # a page (or chunk) with fewer characters than this, spaces not counted, is a scrap
_CONTENTS_LINE = re.compile(r"(\.{3,}|\s{2,}|\t)\s*\d{1,4}\s*$")
_NUMBER = re.compile(r"^[\(\-\$€£%]*[\d][\d,.\-%)]*$")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_CAPTION = re.compile(r"^\s*(figure|fig\.|image|photo|picture|chart|exhibit)\b", re.I)


def assess(text: str) -> tuple[tuple[str, ...], float]:
    """(flags, score) for one page of Markdown."""
    body = "".join(text.split())
    flags: list[str] = []
    if not body:
        return ("empty",), 0.0
    letters = sum(map(str.isalpha, body))
    # Garbled: mostly not letters, or replacement characters, or "words" with no vowels.
    words = re.findall(r"[A-Za-z]{3,}", text)
    vowelless = sum(1 for w in words if not _VOWEL.search(w))
    if letters / len(body) < 0.4 and not _mostly_numbers(text) or text.count("\ufffd") > 3 or (
        len(words) >= 20 and vowelless / len(words) > 0.3
    ):
        flags.append("garbled")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if re.search(r"table of contents|^\s*#*\s*contents\s*$", text, re.I | re.M) or (
        len(lines) >= 5 and sum(bool(_CONTENTS_LINE.search(ln)) for ln in lines) / len(lines) > 0.5
    ):
        flags.append("contents")
    if _mostly_numbers(text):
        flags.append("numbers")
    if len(body) < 300 and _CAPTION.match(text.lstrip("#* ")):
        flags.append("caption")
    elif len(body) < SCRAP_BELOW:
        flags.append("scrap")
    score = 1.0
    for flag in flags:
        score *= 1.0 - PENALTY[flag]
    return tuple(flags), round(score, 3)


def _mostly_numbers(text: str) -> bool:
    tokens = [t.strip("|") for t in text.split() if t.strip("|")]
    return len(tokens) >= 20 and sum(1 for t in tokens if _NUMBER.match(t)) / len(tokens) > 0.5
