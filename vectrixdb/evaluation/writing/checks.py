"""Step 3 of write_golden: the checks no model makes, each with the reason a draft is sent back.

- Evidence is chosen, not copied (evaluation.writing.spans): the model names numbered sentences and each
  quote is that sentence's own text, on its own page, so the page `expected` names is the page that
  answers. `pick` sends a draft back for a number that was not shown ("no such sentence"), a
  sentence under quote_words words ("quote too short"), or an answer whose figures (numbers of two
  digits or more) none of its chosen sentences hold ("answer not in its sentences"); each quote is
  then still looked for in its passage word for word (whitespace, case and Markdown marks folded,
  as check_golden folds them: labels.normal), which by construction it is.
- Copying: the longest run of consecutive words the question shares with its passages (words are
  runs of letters and digits after folding). Sent back when that run is copy_run words or more, or
  is at least copy_share of the question's words and at least copy_min words long.
- Pointing: "the passage", "this table", "the text above"... a reader of the search box has none.
- Style examples: a question equal to an example once folded as for repeats, or sharing with one a
  run of at least copy_min consecutive words that is copy_share of the question's words or more
  (the copying rule, with the example in the passage's place), is sent back ("copies an example").
- Repeats: questions are compared after folding case, punctuation, whitespace and the articles a,
  an, the; digits are kept, so two that differ only in a year or a figure are two questions.
- Kinds: a search has at most search_words words; a long question has long_words words; a
  two-place question quotes at least two of its passages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from vectrixdb.evaluation.golden.labels import normal
from vectrixdb.evaluation.writing.audit import STOP
from vectrixdb.evaluation.writing.config import CheckConfig, KindConfig
from vectrixdb.evaluation.writing.passages import Passage
from vectrixdb.evaluation.writing.prompts import ANSWER_CHARS
from vectrixdb.evaluation.writing.spans import Span

_POINTING = re.compile(
    r"\b(?:(?:this|that|these|the|above|following|given|provided|attached|said)\s+"
    r"(?:passage|passages|excerpt|extract|snippet|paragraph|context|table|chart|figure|text|document|sentence|"
    r"section|column|row)s?\b"
    r"|\b(?:first|second|third|fourth|last|next|previous|same)\s+(?:sentence|paragraph|column|row|table)s?\b"
    r"|\bsentences?\s+\d+|\b(?:mentioned|stated|shown|described)\s+above\b|\bas\s+stated\b"
    r"|\baccording\s+to\s+the\s+(?:passage|text|table)\b)",
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


def points_at(question: str, what: str = "a question") -> str | None:
    """Why the question (or answer) points at a text its asker would not have, or None."""
    match = _POINTING.search(question)
    return f"points at {match.group(0)!r}: {what} must stand without the passage" if match else None


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


def figures(text: str) -> set[str]:
    """The numbers of two digits or more in a text, as the checks split words ("29,300" is 29 and 300)."""
    return {w for w in words(text) if w.isdigit() and len(w) >= 2}


MOST_HOLDING = 5  # a sent-back draft names at most this many shown sentences that hold its answer's figures


def pick(numbers: list, spans: list[Span], answer: str, checks: CheckConfig) -> tuple[str | None, str | None, list[Found]]:
    """(reason key, message, located quotes) for the sentence numbers a draft chose: each number
    must be one shown, each sentence quote_words long, and the answer's figures in them.

    A small model often names the sentence beside the one it read its answer from (the label line
    "(Address of principal executive offices)" under the address, the heading over a figure) and,
    told so, names it again. So when the chosen sentences miss some of the answer's figures (or one
    is too short to check, a table cell) and exactly one shown sentence of prose, long enough, holds
    every figure of the answer, that sentence is the evidence: reason None and a message saying the
    evidence moved (write_golden counts these). A table row is never moved to: it holds its figures
    under columns (years) it does not name, and both drafts moved to one in a 12-question run of the
    1.5B had read the wrong year's column. Otherwise the draft is sent back, told which shown
    sentences hold the missing figures, if any. Either way the evidence is a shown sentence, word
    for word on its page, holding the answer's figures; an answer without figures is never moved,
    and its sentences must share a word of four letters or more with it (not a stop word), as the
    evidence of every hand-written question in data/golden/uber_2021.jsonl does (the 1.5B once cited
    "immaterial tax liabilities." for an answer about the U.S. cash balance)."""
    by_number = {s.number: s for s in spans}
    chosen: list[Span] = []
    for number in numbers:
        if isinstance(number, bool) or not isinstance(number, int) or number not in by_number:
            return ("no such sentence", f"sentence {number!r} was not shown: choose from 1 to {len(spans)}", [])
        if by_number[number] not in chosen:
            chosen.append(by_number[number])
    if not chosen:
        return "no sentence", "name the numbers of the sentences that give the answer", []
    for span in chosen:
        if not on_its_page(span):  # by construction never
            return "quote not in passage", f"sentence {span.number} is not on page {span.page} word for word", []
    wanted, named = figures(answer), ", ".join(str(s.number) for s in chosen)
    short = next((s for s in chosen if len(words(s.text)) < checks.quote_words), None)
    missing = wanted - set().union(*(figures(s.text) for s in chosen))
    if short or missing:
        holders = [s for s in spans if wanted and wanted <= figures(s.text) and not s.text.startswith("|")
                   and len(words(s.text)) >= checks.quote_words and on_its_page(s)]
        if len(holders) == 1:
            return None, (f"evidence moved: sentence {holders[0].number} holds the answer's "
                          f"{', '.join(sorted(wanted))}; the draft named {named}"), [_found(holders[0])]
    if short:
        return ("quote too short", f"sentence {short.number} is under {checks.quote_words} words; choose the "
                "sentence that states the answer", [])
    if missing:
        holding = [s.number for s in spans if s not in chosen and missing & figures(s.text)]
        where = (f"; sentence{'s' if len(holding) > 1 else ''} {', '.join(map(str, holding[:MOST_HOLDING]))} "
                 f"{'hold' if len(holding) > 1 else 'holds'} it") if holding else "; no sentence shown holds it"
        return ("answer not in its sentences", f"the answer's {', '.join(sorted(missing))} is in none of sentences "
                f"{named}{where}: choose the sentences that give the answer", [])
    content = {w for w in words(answer) if len(w) >= 4 and w not in STOP}
    if not wanted and content and not content & set(words(" ".join(s.text for s in chosen))):
        return ("answer not in its sentences", f"the answer shares no word with sentence(s) {named}: choose the "
                "sentences that give the answer", [])
    return None, None, [_found(span) for span in chosen]


def on_its_page(span: Span) -> bool:
    page_text = dict(span.passage.pieces).get(span.page, "")
    return bool(normal(span.text)) and normal(span.text) in normal(page_text)


def _found(span: Span) -> Found:
    return Found(span.text, span.passage, (span.page,))


def copies_example(question: str, examples: list[str], config: CheckConfig) -> str | None:
    """Why the question is a style example returned (equal once folded, or a near copy), or None."""
    asked, key = words(question), repeat_key(question)
    for example in examples:
        if key and key == repeat_key(example):
            return f"is the style example {example[:80]!r}: examples set the style, write a new question"
        run = longest_run(asked, words(example))
        if asked and run >= config.copy_min and run / len(asked) >= config.copy_share:
            return (f"copies the style example {example[:80]!r}: {run} of its {len(asked)} words in a row "
                    "(examples set the style, write a new question)")
    return None


def check_draft(question: str, answer: str, found: list[Found], kind: str, passages: list[Passage],
                written: set[str], checks: CheckConfig, kinds: KindConfig,
                examples: list[str] | tuple[str, ...] = ()) -> tuple[str | None, str | None, list[Found]]:
    """(reason key, message, located quotes) for a draft whose evidence `pick` found: reason None
    when it passes every check. An answer that reached the schema's ANSWER_CHARS was cut off there
    (4 of the 16 the 1.5B kept in a 40-question run ended there, mid-sentence), and one that points at the
    passage ("The passage states that ...") is no answer; no hand-written reference does either."""
    question, answer = question.strip(), answer.strip()
    if not question or not answer:
        return "empty", "the question and the answer must both be given", []
    if not found:
        return "no quote", "name the sentences that give the answer", []
    if len(answer) >= ANSWER_CHARS:  # the schema's maxLength: the reply was cut there, mid-sentence
        return "answer cut", (f"the answer reached the {ANSWER_CHARS}-character limit and was cut off: give a short "
                              "answer in your own words"), found
    pointing = points_at(answer, "an answer")
    if pointing:
        return "answer points at the passage", pointing, found
    count = len(words(question))
    if kind == "search" and count > kinds.search_words:
        return "search too long", f"a search has at most {kinds.search_words} words; this has {count}", found
    low, high = kinds.long_words
    if kind == "long" and not low <= count <= high:
        return "long out of range", f"a long question has {low} to {high} words; this has {count}", found
    if kind == "two_place" and len({f.passage.chunk_id for f in found}) < 2:
        return "one place only", "the question must need both passages: choose sentences from each", found
    for key, why in (("copies an example", copies_example(question, list(examples), checks)),
                     ("points at the passage", points_at(question)),
                     ("copies the passage", copies(question, passages, checks))):
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
