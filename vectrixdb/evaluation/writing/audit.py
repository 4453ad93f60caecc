"""audit_golden: how synthetic a question set is, side by side with real questions when given.

A model's question about a passage it has just read borrows the passage's words and is found at
the top by almost any search; people's questions are not. Per question (the report's frame):

- overlap: the share of the question's distinct words (stop words left out) that are in its
  evidence quotes (labels.normal folding); None for a row without evidence;
- words, and kind by the question's form: long (20 words or more), search (at most 8 words, no
  question mark, not opening with a question word), how_why (how or why among its words), two_place
  (quotes that sit on different pages), else fact;
- coverage: the documents, pages and sections (heading paths of the chunks holding its evidence,
  else covering its expected pages) it touches;
- difficulty: the rank of the first result that is right (a chunk on an expected page, or of an
  expected document) under keyword and under dense search, to depth; None when not in the top depth.

Per set (`report["sets"]["drafted"]`, `["real"]`; other names with names=): medians and shares of
the above, and `gap`, the drafted set's figure less the real one's, which is what the spec's
warning is about.
"""
from __future__ import annotations

import re
import statistics
from typing import Any

from vectrixdb.evaluation.golden.questions import Question, provenance, split_label
from vectrixdb.evaluation.golden.files import questions_of
from vectrixdb.evaluation.golden.labels import normal
from vectrixdb.roles import Collection, Questions

STOP = set("a an the of to in on for and or is are was were be been by with at from as that this it its what which "
           "who whom how why when where do does did can could would should will i my we our you your their they "
           "there than then into about under over per".split())
_QUESTION_WORDS = {"what", "which", "who", "whom", "whose", "how", "why", "when", "where", "is", "are", "was", "were",
                   "do", "does", "did", "can", "could", "should", "would", "will", "has", "have", "had"}
BINS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 30), (31, 45), (46, 10**6))
MODES = ("keyword", "dense")


def audit_golden(golden: Questions, db: Collection, real: Any = None, *, depth: int = 20,
                 names: tuple[str, str] = ("drafted", "real")):
    """A Report (kind golden_audit): one row per question in .frame, and per-set figures under
    `names` (the audited set's, then the real questions')."""
    import pandas as pd

    from vectrixdb.evaluation.runs.report import Report, now

    started = now()
    mine, theirs = names
    sets = {mine: questions_of(golden, db)}
    if real is not None:
        sets[theirs] = questions_of(real, db)
    layout = _Layout(db)
    rows = [_row(name, q, db, layout, depth) for name, questions in sets.items() for q in questions]
    figures = {name: _figures([r for r in rows if r["set"] == name], layout, depth) for name in sets}
    frame = pd.DataFrame(rows).set_index(["set", "id"]) if rows else pd.DataFrame()
    values: dict[str, Any] = {"sets": figures, "questions": len(rows), "depth": depth, "warnings": []}
    if theirs in figures:
        values["gap"] = {key: _minus(figures[mine].get(key), figures[theirs].get(key))
                         for key in ("overlap_median", "words_median", "keyword_at_1", "dense_at_1",
                                     "keyword_median_rank", "dense_median_rank")}
    for name, questions in sets.items():
        if not any(q.evidence for q in questions):
            values["warnings"].append(f"{name}: no row has evidence, so overlap is None for all of it")
    return Report("golden_audit", values, frame, started=started, meta=provenance(golden, sets[mine], db))


class _Layout:
    """What the collection holds: pages per document and each chunk's section, for coverage."""

    def __init__(self, db: Any):
        self.docs = {d["doc_id"]: db.document(d["doc_id"]) for d in db.documents()}
        self.chunks = db.chunks()
        self.sections = {(c["doc_id"], c["headings"]) for c in self.chunks}
        self.pages = sum(len(d.pages) for d in self.docs.values() if d is not None)
        self._normal: dict[str, str] = {}
        self.chunk_text = [normal(c["text"]) for c in self.chunks]

    def page_text(self, doc: str, page: int) -> str:
        key = f"{doc}#{page}"
        if key not in self._normal:
            document = self.docs[doc]
            span = next((p for p in document.pages if p.number == page), None)
            self._normal[key] = normal(document.markdown[span.start:span.end]) if span else ""
        return self._normal[key]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", normal(text))


def overlap(question: str, evidence: tuple[str, ...]) -> float | None:
    """Share of the question's distinct non-stop words found among the evidence's words."""
    if not evidence:
        return None
    asked = {w for w in _words(question) if w not in STOP}
    held = {w for e in evidence for w in _words(e)}
    return round(len(asked & held) / len(asked), 4) if asked else None


def kind_of(q: Question, layout: _Layout | None = None) -> str:
    """The question's kind by its form (see the module doc)."""
    words = _words(q.question)
    if len(words) >= 20:
        return "long"
    if layout is not None and len(q.evidence) >= 2:
        places = [frozenset(_quote_pages(e, q, layout)) for e in q.evidence]
        if any(a and b and not a & b for i, a in enumerate(places) for b in places[i + 1:]):
            return "two_place"
    if words and len(words) <= 8 and "?" not in q.question and words[0] not in _QUESTION_WORDS:
        return "search"
    if {"how", "why"} & set(words):
        return "how_why"
    return "fact"


def _quote_pages(quote: str, q: Question, layout: _Layout) -> set[tuple[str, int]]:
    want = normal(quote)
    out = set()
    for doc, page in (split_label(e) for e in q.expected):
        if doc in layout.docs and layout.docs[doc] is not None:
            pages = [page] if page is not None else [p.number for p in layout.docs[doc].pages]
            out |= {(doc, p) for p in pages if want in layout.page_text(doc, p)}
    return out


def _right(hit, q: Question) -> bool:
    labels = set(q.expected)
    return hit.doc_id in labels or any(f"{hit.doc_id}#page={p}" in labels for p in hit.pages)


def _row(name: str, q: Question, db: Any, layout: _Layout, depth: int) -> dict[str, Any]:
    ranks = {}
    for mode in MODES:
        hits = db.search(q.question, depth, mode=mode)
        ranks[mode] = next((h.rank for h in hits if _right(h, q)), None)
    pages = {(d, p) for d, p in map(split_label, q.expected) if p is not None}
    sections = set()
    quotes = [normal(e) for e in q.evidence]
    for chunk, text in zip(layout.chunks, layout.chunk_text):
        on = any((chunk["doc_id"], p) in pages for p in chunk["pages"]) or chunk["doc_id"] in q.expected
        holds = any(e in text for e in quotes)
        if (holds if q.evidence else on) and chunk["doc_id"] in q.documents:
            sections.add((chunk["doc_id"], chunk["headings"]))
    return {"set": name, "id": q.key(), "question": q.question, "words": len(_words(q.question)),
            "kind": kind_of(q, layout), "overlap": overlap(q.question, q.evidence), "documents": list(q.documents),
            "pages": sorted(f"{d}#page={p}" for d, p in pages), "sections": sorted(" > ".join(h) for _, h in sections),
            "keyword_rank": ranks["keyword"], "dense_rank": ranks["dense"], "_sections": sections}


def _figures(rows: list[dict], layout: _Layout, depth: int) -> dict[str, Any]:
    if not rows:
        return {"questions": 0, "reason": "no questions"}
    words = [r["words"] for r in rows]
    overlaps = [r["overlap"] for r in rows if r["overlap"] is not None]
    out: dict[str, Any] = {
        "questions": len(rows),
        "words_median": statistics.median(words), "words_mean": round(statistics.fmean(words), 2),
        "words_range": [min(words), max(words)],
        "lengths": {f"{a}-{b}" if b < 10**6 else f"{a}+": sum(a <= w <= b for w in words) for a, b in BINS},
        "overlap_median": statistics.median(overlaps) if overlaps else None,
        "overlap_mean": round(statistics.fmean(overlaps), 4) if overlaps else None,
        "kinds": {k: round(sum(r["kind"] == k for r in rows) / len(rows), 4)
                  for k in ("search", "fact", "how_why", "two_place", "long")},
        "coverage": {
            "documents": [len({d for r in rows for d in r["documents"]}), len(layout.docs)],
            "pages": [len({p for r in rows for p in r["pages"]}), layout.pages],
            "sections": [len({s for r in rows for s in r["_sections"]}), len(layout.sections)]},
    }
    for r in rows:
        r.pop("_sections", None)
    for mode in MODES:
        ranks = [r[f"{mode}_rank"] for r in rows]
        found = [x for x in ranks if x is not None]
        out[f"{mode}_at_1"] = round(sum(x == 1 for x in found) / len(rows), 4)
        out[f"{mode}_in_10"] = round(sum(x <= 10 for x in found) / len(rows), 4)
        out[f"{mode}_median_rank"] = statistics.median(found) if found else None
        out[f"{mode}_not_found"] = len(rows) - len(found)
    return out


def _minus(a: Any, b: Any) -> float | None:
    return None if a is None or b is None else round(a - b, 4)
