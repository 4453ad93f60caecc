"""The grain a retrieval result is judged at: doc, page, chunk or evidence, one value each.

A grain is asked, never compared with a word: `Grain.of("page")` reads the word a caller, the CLI or
a saved report gives (a Grain passes through; any other word is refused naming the choices), and
`grain.name` (its `str`) is the word again, which is what reports record. Each grain knows how a
question's labels read at it (`qrel`: {label: grade}) and what a ranked result is at it (`units`:
the labels each result satisfies), which metrics.judge scores against each other:

- doc: the documents of the results, each at the rank of its best chunk (later repeats dropped); a
  search is DEPTH_FACTOR times deeper to fill as many distinct documents.
- page: a chunk is one result, and it satisfies every expected page it covers, at its own rank (a
  chunk over pages 3-4 is a hit at its rank when page 4 is expected). An expected entry that names
  a whole document is satisfied by any page of it; a page label of a document the same row also
  expects whole adds nothing and is dropped (check_golden notes such rows). A chunk id label
  (`doc::n`, as a Vecta row without pages gives) is satisfied by that chunk; in a row that also
  names pages (a Vecta entry with both), the pages are its page labels and the chunk ids wait for
  chunk grain.
- chunk: chunk ids (a row that names some judges by them alone).
- evidence: each result satisfies the quotes it holds, whole, or at least half of one where the
  chunk starts or ends inside it (labels.holds, after labels.normal). A question without evidence
  is judged by its pages (`at`).

It also knows the labels that name a hit (`labels_of`: what suggest_expected proposes and pool
lists), whether a top hit answers (`answers`: answer_cutoff), what a result must carry to be judged
(`names_pages`, `names_chunks`, `names_quotes`; `names_documents` where a result counts by its
document alone) and the warnings labels that do not fit it earn (`label_warnings`). `grain_of`
reads the grain a set of labels asks for.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.labels import Result, holds, normal
from vectrixdb.evaluation.golden.questions import Question, label_document, split_label

DEPTH_FACTOR = 3  # at doc grain a search reads this many times `depth` chunks, to fill `depth` documents


@dataclass(frozen=True, repr=False)
class Grain(ABC):
    """One grain; DOC, PAGE, CHUNK and EVIDENCE are the four there are (GRAINS)."""
    name: str
    names_documents: ClassVar[bool] = False  # a result counts by its document, whatever its page or chunk
    names_pages: ClassVar[bool] = False  # labels name pages: a result without pages earns nothing
    names_chunks: ClassVar[bool] = False  # labels are chunk ids: a retriever returning document ids cannot be judged
    names_quotes: ClassVar[bool] = False  # labels are quotes: a result is matched by its text

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name.upper()

    @staticmethod
    def of(word: str | Grain, among: Sequence[Grain] | None = None, *, who: str = "") -> Grain:
        """The grain a word names (a Grain passes through), one of `among` (every grain by default);
        BadInput naming the choices otherwise: "unknown grain by='x'; choose one of doc, page, ...",
        or, with `who`, "<who> doc, page; not by='x'"."""
        among = GRAINS if among is None else tuple(among)
        for grain in among:
            if word == grain or word == grain.name:
                return grain
        names = ", ".join(g.name for g in among)
        shown = word.name if isinstance(word, Grain) else word
        raise BadInput(f"{who} {names}; not by={shown!r}" if who else
                       f"unknown grain by={shown!r}; choose one of {names}")

    def at(self, q: Question) -> Grain:
        """The grain this question is judged at (evidence rows without quotes fall back to pages)."""
        return self

    @abstractmethod
    def qrel(self, q: Question) -> dict[str, float]:
        """{label: grade} the question is judged against (graded where the row grades; grade 0:
        judged not relevant)."""

    @abstractmethod
    def units(self, q: Question, results: list[Result]) -> list:
        """What each ranked result is at this grain: the label, or the tuple of labels, it satisfies."""

    def labels_of(self, hit: Any) -> list[str]:
        """The labels that name a hit (anything with doc_id, chunk_id and pages) at this grain."""
        raise BadInput(f"a hit is not named by {self.name} labels; choose doc, page or chunk")

    def ids(self, results: list[Result]) -> list[str]:
        """The labels a ranking names at this grain, each once, in rank order."""
        return list(dict.fromkeys(label for r in results for label in self.labels_of(r)))

    def id_of(self, hit: Any) -> str:
        """The id of a hit that this grain's labels are matched with (shown when none matched)."""
        return hit.chunk_id

    def judges(self, q: Question) -> Callable[[str], bool]:
        """label -> True when a label of the row (any grade) judges it at this grain."""
        labels = set(self.qrel(q))
        return lambda label: label in labels

    def answers(self, relevant: Sequence[str], hit: Any) -> bool:
        """True when a top hit is an answer to a question with these relevant labels."""
        raise BadInput(f"a top result is judged by doc or page, not by={self.name!r}")

    def pools(self, judged: str) -> bool:
        """True when a saved report judged by=`judged` can be pooled at this grain: its own."""
        return judged == self.name

    def search_depth(self, depth: int) -> int:
        """How many chunks a search reads to fill `depth` units at this grain."""
        return depth

    def chunks_read(self, results: list[Result], k: int) -> list[Result]:
        """The results the ranked metrics read to fill the top k (the first k)."""
        return results[:k]

    def label_warnings(self, scored: Sequence[Question]) -> list[str]:
        """What the labels of the scored rows leave unsaid at this grain (empty: they fit it)."""
        return []


class _Doc(Grain):
    names_documents = True

    def qrel(self, q: Question) -> dict[str, float]:
        out: dict[str, float] = {}
        for label, grade in q.graded():  # a page or chunk judged not relevant says nothing of the document's other parts
            doc = label_document(label)
            if grade > 0 or label == doc:
                out[doc] = max(out.get(doc, 0.0), grade)
        return out

    def units(self, q: Question, results: list[Result]) -> list:
        return list(dict.fromkeys(r.doc_id for r in results))

    def labels_of(self, hit: Any) -> list[str]:
        return [hit.doc_id]

    def id_of(self, hit: Any) -> str:
        return hit.doc_id

    def answers(self, relevant: Sequence[str], hit: Any) -> bool:
        """Any page of a document the labels name is an answer."""
        return hit.doc_id in {split_label(label)[0] for label in relevant}

    def search_depth(self, depth: int) -> int:
        return depth * DEPTH_FACTOR

    def chunks_read(self, results: list[Result], k: int) -> list[Result]:
        """A unit is a distinct document: the chunks up to the k-th new document."""
        seen: set[str] = set()
        for i, r in enumerate(results):
            seen.add(r.doc_id)
            if len(seen) > k:
                return results[:i]
        return results


class _Page(Grain):
    names_pages = True

    def qrel(self, q: Question) -> dict[str, float]:
        chunk_ids = {label for label in q.expected if "::" in label}
        whole = {label for label in q.expected if split_label(label)[1] is None and label not in chunk_ids}
        named_pages = any(split_label(label)[1] is not None for label in q.expected)
        out: dict[str, float] = {}
        for label, grade in q.graded():
            doc, page = split_label(label)
            if page is not None and doc in whole:
                continue  # the whole document is expected: this page adds nothing
            if label in chunk_ids and named_pages:
                continue  # the row's pages say where the answer is; its chunk ids are judged at chunk grain
            out[label] = grade
        return out

    def units(self, q: Question, results: list[Result]) -> list:
        whole = {e for e in q.expected if split_label(e)[1] is None}
        return [((r.doc_id,) if r.doc_id in whole else ()) + tuple(f"{r.doc_id}#page={p}" for p in r.pages)
                + ((r.chunk_id,) if r.chunk_id in whole and r.chunk_id != r.doc_id else ()) for r in results]

    def labels_of(self, hit: Any) -> list[str]:
        return [f"{hit.doc_id}#page={p}" for p in hit.pages]

    def id_of(self, hit: Any) -> str:
        return hit.doc_id

    def judges(self, q: Question) -> Callable[[str], bool]:
        """A page of a document the row labels whole is judged too."""
        labels = set(self.qrel(q))
        whole = {label for label in q.expected if label == label_document(label)}
        return lambda label: label in labels or split_label(label)[0] in whole

    def answers(self, relevant: Sequence[str], hit: Any) -> bool:
        """The labels as given: a page label wants that page, a whole-document label any page of it."""
        whole = {label for label in relevant if split_label(label)[1] is None}
        pages = {split_label(label) for label in relevant} - {(d, None) for d in whole}
        return hit.doc_id in whole or any((hit.doc_id, p) in pages for p in hit.pages)

    def pools(self, judged: str) -> bool:
        """A chunk report's chunk ids pool at page grain too (they take their pages)."""
        return judged in (self.name, CHUNK.name)

    def label_warnings(self, scored: Sequence[Question]) -> list[str]:
        if scored and not any(q.pages for q in scored):
            return ["by='page' but no row names a page: every row expects whole documents, so any page of one counts "
                    "and the figures are document figures at chunk depth"]
        return []


class _Chunk(Grain):
    names_chunks = True

    def qrel(self, q: Question) -> dict[str, float]:
        chunk_ids = {label for label in q.expected if "::" in label}
        # a row that names chunks is judged by them at chunk grain (its pages at page grain)
        return {label: grade for label, grade in q.graded() if not chunk_ids or label in chunk_ids}

    def units(self, q: Question, results: list[Result]) -> list:
        return [r.chunk_id for r in results]

    def labels_of(self, hit: Any) -> list[str]:
        return [hit.chunk_id]

    def label_warnings(self, scored: Sequence[Question]) -> list[str]:
        if scored and not any("::" in label for q in scored for label in q.expected):
            return ["by='chunk' but no row names a chunk id (such as 'report.pdf::12'): a label naming a document or "
                    "a page matches only a result whose chunk id is that same string; use by='doc' or by='page'"]
        return []


class _Evidence(Grain):
    names_quotes = True

    def at(self, q: Question) -> Grain:
        return self if q.evidence else PAGE

    def qrel(self, q: Question) -> dict[str, float]:
        if not q.evidence:
            return PAGE.qrel(q)
        return {normal(e): 1.0 for e in q.evidence}

    def units(self, q: Question, results: list[Result]) -> list:
        if not q.evidence:
            return PAGE.units(q, results)
        quotes = [normal(e) for e in q.evidence]
        return [tuple(qt for qt in quotes if holds(normal(r.text), qt)) for r in results]

    def label_warnings(self, scored: Sequence[Question]) -> list[str]:
        without = sum(not q.evidence for q in scored)
        if without == len(scored) and scored:
            return ["by='evidence' but no row has evidence: every row is judged by its pages instead"]
        if without:
            return [f"{without} of {len(scored)} rows have no evidence and are judged by their pages"]
        return []


DOC, PAGE, CHUNK, EVIDENCE = _Doc("doc"), _Page("page"), _Chunk("chunk"), _Evidence("evidence")
GRAINS: tuple[Grain, ...] = (DOC, PAGE, CHUNK, EVIDENCE)


def _relevant(q: Question) -> list[str]:
    return [label for label, grade in q.graded() if grade > 0]


def grain_of(questions: Sequence[Question]) -> tuple[Grain, str]:
    """The grain the labels ask for, when by= is not given, and why: PAGE when a labelled row names a
    relevant page (a page label scored by document counts any page of the right document as right),
    CHUNK when every relevant label is a chunk id, else DOC."""
    labelled = [q for q in questions if q.labelled]
    if any(split_label(label)[1] is not None for q in labelled for label in _relevant(q)):
        return PAGE, "labels: a row names a page"
    if labelled and all(all("::" in label for label in _relevant(q)) for q in labelled):
        return CHUNK, "labels: every label is a chunk id"
    return DOC, "labels: they name documents"
