"""Step 1 of write_golden: which chunks a question may be drafted from, and in what order.

Every chunk is first looked at without a model (`skip_reason`): a picture's description, a
contents page, a table of bare numbers, a scrap, garbled text, a chunk that is mostly form text
(`form_share`: its sentences, cut as write_golden numbers them, that match one of
PassageConfig.boilerplate's phrases hold boilerplate_share of its characters or more), or a chunk
whose pages the reading scored poor is passed over, and counted by reason. (The 1.5B passage
critic could not tell such form text from facts, scripts/passage_critic_bench.py; the phrases can,
in part, on the 16 passages labelled by hand, scripts/boilerplate_bench.py.)

The rest are spread (`plan_slots`): across the collections, then their documents, then their
sections (a section is a chunk's heading path), by `share`: every group gets one while the
questions last (evenly through the order when there are fewer questions than groups, so a long
report is asked about all the way through), and the rest in proportion to its size in
characters, never more than it holds. A slot is a starting chunk and the
chunks after it in its section; the passage critic scores up to `tries` of them.

`partners` finds the second places of a two-place question: other passages, on other pages, whose
embedding by the collection's own model has cosine similarity of at least `similar_at`.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vectrixdb.evaluation.writing.config import KindConfig, PassageConfig
from vectrixdb.evaluation.writing.sentences import split_spans
from vectrixdb.roles import Collection

_PICTURE = re.compile(r"^\s*(!\[[^\]]*\]\([^)]*\)\s*)+$|^\s*(figure|fig\.|image|photo|picture|chart|exhibit)\b", re.I)
_QUALITY_REASON = {"caption": "picture", "contents": "contents", "numbers": "numbers", "scrap": "scrap",
                   "empty": "scrap", "garbled": "garbled"}


def none_eligible(skipped: Counter, seen: int, config: PassageConfig) -> str:
    """Why no passage is left to draft from, reason by reason, e.g. "all 2 chunks skipped as
    scrap: shorter than 80 characters" (the rules are skip_reason's and reading.quality's)."""
    from vectrixdb.reading.quality import SCRAP_BELOW

    if not seen:
        return "the collection holds no chunks, so there is nothing to draft from: add documents first"
    why = {"scrap": f"shorter than {SCRAP_BELOW} characters, spaces not counted", "picture": "a picture or its caption",
           "contents": "a table of contents", "numbers": "mostly bare numbers", "garbled": "garbled text (a bad reading)",
           "boilerplate": f"mostly form text ({config.boilerplate_share:.0%} or more of it matches PassageConfig.boilerplate)",
           "poor page": f"on pages the reading scored under {config.poor_below}"}
    reasons = sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))
    head = "the one chunk was" if seen == 1 else f"all {seen} chunks"
    if len(reasons) == 1:
        return f"{head} skipped as {reasons[0][0]}: {why.get(reasons[0][0], reasons[0][0])}"
    return f"{head} skipped: " + ", ".join(f"{n} as {r} ({why.get(r, r)})" for r, n in reasons)


@dataclass(frozen=True)
class Passage:
    """One chunk a question may be drafted from. `text` is what the model is shown; `pieces` are
    the chunk's text page by page, (page number, text), to label a quote with the page it is on;
    `whole` is True when the document has one page, so labels name the document itself."""

    source: int  # which collection (index into the list write_golden was given)
    chunk_id: str
    doc_id: str
    text: str
    pages: tuple[int, ...]
    headings: tuple[str, ...]
    pieces: tuple[tuple[int, str], ...]
    whole: bool = False

    @property
    def section(self) -> tuple[str, str, tuple[str, ...]]:
        return (str(self.source), self.doc_id, self.headings)

    def label(self, page: int) -> str:
        return self.doc_id if self.whole else f"{self.doc_id}#page={page}"

    def where(self) -> str:
        pages = "-".join(str(p) for p in (self.pages[:1] + self.pages[-1:] if len(self.pages) > 1 else self.pages))
        return self.doc_id if self.whole else f"{self.doc_id} p.{pages}"


@dataclass
class Slot:
    """A place in the plan: candidate passages in the order they are tried; the first `section` of
    them are its own section's (the passage critic's tries stay there; a replacement may go further)."""

    source: int
    candidates: list[Passage] = field(default_factory=list)
    section: int = 0


def skip_reason(text: str, page_scores: list[float], config: PassageConfig) -> str | None:
    """Why a chunk is passed over without a model, or None when a question may be drafted from it."""
    from vectrixdb.reading.quality import assess

    if _PICTURE.match(text.lstrip("#* ")) and len("".join(text.split())) < 400:
        return "picture"
    flags, _ = assess(text)
    for flag in ("empty", "garbled", "contents", "numbers", "caption", "scrap"):
        if flag in flags:
            return _QUALITY_REASON[flag]
    if config.boilerplate and form_share(text, config.boilerplate) >= config.boilerplate_share:
        return "boilerplate"
    if page_scores and max(page_scores) < config.poor_below:
        return "poor page"
    return None


def form_share(text: str, patterns: tuple[str, ...] | list[str]) -> float:
    """The share of a text's characters in sentences (spans.split_spans) matching any of the patterns, case
    ignored: 0 for none, 1 when every sentence does."""
    marker = re.compile("|".join(f"(?:{p})" for p in patterns), re.I)
    spans = split_spans(text)
    total = sum(len(s) for s in spans)
    return sum(len(s) for s in spans if marker.search(s)) / total if total else 0.0


def _shown(text: str, limit: int) -> str:
    """The text the model is shown: whole, or cut at the last paragraph (else sentence) end before limit."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n\n", 0, limit)
    if cut < limit // 2:
        cut = max(text.rfind(". ", 0, limit) + 1, limit // 2)
    return text[:cut].rstrip()


def list_passages(sources: list[Any], config: PassageConfig) -> tuple[list[list[Passage]], Counter, int]:
    """(eligible passages per collection in document order, skipped chunks by reason, chunks seen)."""
    eligible: list[list[Passage]] = []
    skipped: Counter = Counter()
    seen = 0
    for index, db in enumerate(sources):
        documents: dict[str, Any] = {}
        keep: list[Passage] = []
        for row in db.chunks():
            seen += 1
            doc = documents.get(row["doc_id"])
            if doc is None:
                doc = documents[row["doc_id"]] = db.document(row["doc_id"])
            pages = [p for p in doc.pages if p.number in row["pages"]]
            reason = skip_reason(row["text"], [p.score for p in pages], config)
            if reason:
                skipped[reason] += 1
                continue
            pieces = tuple((p.number, doc.markdown[max(p.start, row["start"]):min(p.end, row["end"])]) for p in pages)
            keep.append(Passage(index, row["chunk_id"], row["doc_id"], _shown(row["text"], config.max_chars),
                                tuple(row["pages"]), tuple(row["headings"]), pieces, whole=len(doc.pages) == 1))
        eligible.append(keep)
    return eligible, skipped, seen


def share(n: int, sizes: list[float], capacity: list[int] | None = None) -> list[int]:
    """n split over groups: one each while n lasts (evenly spaced through the order when n is
    smaller than the number of groups), the rest in proportion to size (largest remainders), never
    more than a group's capacity (the surplus goes to the others)."""
    count = len(sizes)
    capacity = list(capacity) if capacity is not None else [n] * count
    out = [0] * count
    open_ = [i for i in range(count) if capacity[i] > 0]
    if n <= 0 or not open_:
        return out
    if n < len(open_):
        for j in range(n):
            out[open_[j * len(open_) // n]] = 1
        return out
    for i in open_:
        out[i] = 1
    left = n - len(open_)
    while left > 0:
        room = [i for i in range(count) if out[i] < capacity[i]]
        if not room:
            break
        total = sum(max(sizes[i], 1e-9) for i in room)
        exact = {i: left * max(sizes[i], 1e-9) / total for i in room}
        give = {i: min(int(exact[i]), capacity[i] - out[i]) for i in room}
        rest = left - sum(give.values())
        for i in sorted(room, key=lambda i: (-(exact[i] - int(exact[i])), i)):
            if rest <= 0:
                break
            if out[i] + give[i] < capacity[i]:
                give[i] += 1
                rest -= 1
        if not any(give.values()):
            break
        for i, g in give.items():
            out[i] += g
        left -= sum(give.values())
    return out


def plan_slots(eligible: list[list[Passage]], n: int, tries: int) -> list[Slot]:
    """The slots, spread over collections, documents and sections; each slot's candidates are its
    stretch of the section first (`tries` of them are scored), then the rest of the section, then
    the rest of the document, so a replacement stays as close as it can."""
    slots: list[Slot] = []
    per_source = share(n, [sum(len(p.text) for p in ps) for ps in eligible], [len(ps) for ps in eligible])
    for passages, quota in zip(eligible, per_source):
        docs = _groups(passages, lambda p: p.doc_id)
        per_doc = share(quota, [sum(len(p.text) for p in g) for g in docs], [len(g) for g in docs])
        for doc, doc_quota in zip(docs, per_doc):
            sections = _groups(doc, lambda p: p.headings)
            per_section = share(doc_quota, [sum(len(p.text) for p in g) for g in sections],
                                [len(g) for g in sections])
            for section, q in zip(sections, per_section):
                for j in range(q):
                    start, stop = j * len(section) // q, (j + 1) * len(section) // q
                    own = section[start:stop]
                    mine = {p.chunk_id for p in own}
                    rest = [p for p in section if p.chunk_id not in mine]
                    others = [p for p in doc if p.headings != section[0].headings]
                    slots.append(Slot(passages[0].source, own + rest + others, len(section)))
    return slots


def _groups(items: list[Passage], key) -> list[list[Passage]]:
    out: dict[Any, list[Passage]] = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return list(out.values())


class Alike:
    """Cosine similarity between the eligible passages of one collection, embedded for this step
    by the collection's own model (its embedder caches by text, so nothing is embedded twice)."""

    def __init__(self, db: Collection, passages: list[Passage], executor: str = "local"):
        from vectrixdb.executors import embed_corpus

        self.passages = passages
        self.index = {p.chunk_id: i for i, p in enumerate(passages)}
        self.vectors = np.asarray(embed_corpus([p.text for p in passages], db.embedder(), executor=executor),
                                  dtype=np.float32) if passages else np.zeros((0, 1), np.float32)

    def partners(self, passage: Passage, config: KindConfig, taken: set[str] | frozenset[str] = frozenset()) -> list[tuple[Passage, float]]:
        """Up to more_places passages on other pages at similarity similar_at or more, most alike first."""
        if passage.chunk_id not in self.index:
            return []
        scores = self.vectors @ self.vectors[self.index[passage.chunk_id]]
        out = []
        for i in np.argsort(-scores, kind="stable"):
            other = self.passages[int(i)]
            if float(scores[i]) < config.similar_at:
                break
            same_page = other.doc_id == passage.doc_id and set(other.pages) & set(passage.pages)
            if other.chunk_id == passage.chunk_id or same_page or other.chunk_id in taken:
                continue
            out.append((other, float(scores[i])))
            if len(out) == config.more_places:
                break
        return out
