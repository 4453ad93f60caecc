"""Labels against a collection: each one must name what the collection holds, exactly.

A label that almost matches would otherwise be a silent miss: `Uber_2021.pdf#page=10` where the
collection holds `uber_2021.pdf` is never retrieved, and the question is scored 0 while the right
page sits at rank 1. So, given a collection, every label of a row is one of:

- a document it holds, spelt exactly (case included);
- `doc_id#page=N` with N from 1 to that document's last page;
- a chunk id `doc_id::n` it holds.

Anything else is a problem, with the nearest thing the collection does hold (same name in another
case, the same file name under a path, a close spelling; a misspelt page anchor read as the page
it seems to mean). check_golden reports each as an error on its line; retrieval_report refuses
to score a set that has any (BadInput listing every one).
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.labels import chunks_of
from vectrixdb.evaluation.golden.questions import CHUNK_LABEL, Question, anchor_problem, label_document, loose_page, split_label
from vectrixdb.roles import Collection


@dataclass(frozen=True)
class Finding:
    line: int | None
    field: str | None
    severity: str  # "error" or "note"
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{self.severity}: {where}{f', {self.field}' if self.field else ''}: {self.message}"


class LabelProblem(NamedTuple):
    question: Question
    label: str
    message: str



class Held:
    """What a collection holds, read once: its document ids, page counts and chunk ids (lazily)."""

    def __init__(self, db: Collection):
        self.db = db
        self.name = getattr(db, "name", "the collection")
        self.docs = [d["doc_id"] for d in db.documents()]
        self.ids = set(self.docs)
        self._pages: dict[str, int] = {}
        self._chunks: dict[str, set[str]] = {}

    def pages(self, doc: str) -> int:
        if doc not in self._pages:
            document = self.db.document(doc)
            self._pages[doc] = len(document.pages) if document is not None else 0
        return self._pages[doc]

    def chunks(self, doc: str) -> set[str]:
        if doc not in self._chunks:
            self._chunks[doc] = {c["chunk_id"] for c in chunks_of(self.db, [doc])}
        return self._chunks[doc]

    def nearest(self, doc: str) -> str | None:
        """The held id a misspelt one most likely means: another case, a path's file name, a close spelling."""
        if doc in self.ids:
            return doc
        for key in (str.casefold, lambda d: os.path.basename(d.rstrip("/\\")).casefold()):
            same = [d for d in self.docs if key(d) == key(doc)]
            if same:
                return same[0]
        close = difflib.get_close_matches(doc.casefold(), [d.casefold() for d in self.docs], n=1, cutoff=0.8)
        return next(d for d in self.docs if d.casefold() == close[0]) if close else None


def label_problems(questions: Iterable[Question], db: Collection, held: Held | None = None) -> list[LabelProblem]:
    """Every label of the questions that names something the collection does not hold, with a
    did-you-mean where the collection holds something close."""
    held = held or Held(db)
    out = []
    for q in questions:
        said: set[str] = set()
        for label in q.expected:
            message = _problem(label, held)
            if message and message not in said:  # three pages of one unknown document: one finding
                said.add(message)
                out.append(LabelProblem(q, label, message))
    return out


def _parts(label: str, held: Held) -> tuple[str, int | None, str | None]:
    """(document, page, chunk id) a label names, a misspelt page anchor read as the page it means."""
    doc, page = split_label(label)
    chunk = doc if CHUNK_LABEL.match(doc) and doc not in held.ids else None
    if chunk:
        return chunk.rsplit("::", 1)[0], None, chunk
    loose = loose_page(doc) if page is None and doc not in held.ids else None
    return (loose[0], loose[1], None) if loose else (doc, page, None)


def meant(label: str, held: Held) -> str | None:
    """The label the collection holds that `label` most likely means, or None when none is close."""
    doc, page, chunk = _parts(label, held)
    near = held.nearest(doc)
    if near is None or (page is not None and page < 1):
        return None
    return near + (f"::{chunk.rsplit('::', 1)[1]}" if chunk else f"#page={page}" if page is not None else "")


def _problem(label: str, held: Held) -> str | None:
    doc, page, chunk = _parts(label, held)
    if doc in held.ids and (chunk or split_label(label)[0] == doc or label == doc):
        if page is not None and page > held.pages(doc):
            return f"{doc!r} has {held.pages(doc)} pages, not page {page}"
        if chunk and chunk not in held.chunks(doc):
            return f"{doc!r} has no chunk {chunk!r} in collection {held.name!r}"
        return None
    shown = split_label(label)[0]
    head = f"{shown!r} is not in collection {held.name!r}"
    guess = meant(label, held)
    if guess is None:
        listed = ", ".join(repr(d) for d in held.docs[:3]) + (", ..." if len(held.docs) > 3 else "")
        return f"{head} (it holds {len(held.docs)} document(s){': ' + listed if held.docs else ''})"
    near = label_document(guess)
    beyond = f" (it has {held.pages(near)} pages)" if page is not None and page > held.pages(near) else ""
    return f"{head}; did you mean {guess!r}?{beyond}"


def grade_conflicts(q: Question) -> list[str]:
    """A row that says both "relevant" and "judged not relevant" of the same thing: a whole
    document graded 0 with a page or chunk of it graded above 0, or graded above 0 (so that any of
    its pages counts) with a page or chunk of it graded 0."""
    whole = {label: grade for label, grade in q.graded() if label == label_document(label)}
    out = []
    for label, grade in q.graded():
        doc = label_document(label)
        if label != doc and doc in whole and (grade > 0) != (whole[doc] > 0):
            out.append(f"{label!r} has grade {grade:g} but the whole document {doc!r} has grade {whole[doc]:g}: a "
                       "label is judged relevant or not relevant, not both; grade the parts or the document")
    return out


def refuse_bad_labels(questions: list[Question], db: Collection | None = None) -> None:
    """Raise BadInput listing every label that would be scored as a silent miss: a misspelt `#`
    page anchor always, and, given a collection, anything it does not hold (see above)."""
    held = Held(db) if db is not None else None
    bad, said = [], set()
    for q in questions:
        messages = [anchor_problem(label) or (_problem(label, held) if held is not None else None)
                    for label in q.expected] + grade_conflicts(q)
        for message in messages:
            if message and f"{q.key()}: {message}" not in said:
                said.add(f"{q.key()}: {message}")
                bad.append(f"{f'line {q.line} ({q.key()})' if q.line else q.key()}: {message}")
    if bad:
        raise BadInput(f"{len(bad)} label(s) would be scored as silent misses; fix them (check_golden lists them too) "
                       "and run again:\n  " + "\n  ".join(bad))


def evidence_findings(questions: list[Question], db) -> list[Finding]:
    """Each quote must be in the kept Markdown of the pages (or documents) its row expects."""
    from vectrixdb.evaluation.golden.labels import normal

    held = {d["doc_id"] for d in db.documents()}
    kept: dict[str, Any] = {}
    out = []
    for q in questions:
        if not q.evidence:
            continue
        texts = []
        for doc, pages in expected_pages(q).items():
            if doc not in held:
                continue
            if doc not in kept:
                kept[doc] = db.document(doc)
            document = kept[doc]
            if pages is None:
                texts.append(normal(document.markdown))
                continue
            spans = [(p.start, p.end) for p in document.pages if p.number in pages]
            texts += [normal(document.markdown[a:b]) for a, b in spans]
            if spans:  # a quote that runs over from one expected page to the next
                texts.append(normal(document.markdown[min(a for a, _ in spans):max(b for _, b in spans)]))
        if not texts:
            continue
        for quote in q.evidence:
            if not any(normal(quote) in t for t in texts):
                where = ", ".join(q.expected)
                out.append(Finding(q.line, "evidence", "error",
                                   f"{quote[:80]!r} is not on {where} in the collection's text (whitespace and case "
                                   "folded); copy it word for word from the page, or fix expected"))
    return out


def expected_pages(q: Question) -> dict[str, set[int] | None]:
    """doc -> the pages the row expects of it, None when it expects the whole document."""
    out: dict[str, set[int] | None] = {}
    for label in q.expected:
        doc, page = split_label(label)
        if page is None:
            out[doc] = None
        elif (pages := out.setdefault(doc, set())) is not None:
            pages.add(page)
    return out
