"""Reading retrieval results, and Vecta's set-based levels.

A retrieval result is normalised to a Result (chunk id, doc id, pages, text, score) whatever the
retriever returned: a vectrixdb Hit, a dict, a plain id, or a LangChain/LlamaIndex document. What
counts as a right result at each grain (doc, page, chunk, evidence) is grain.py's: a Grain reads a
question's labels (`qrel`) and turns ranked results into the ranked labels that metrics.judge scores
against them (`units`), with `normal` and `holds` here for evidence quotes.

- A chunk returned more than once is read once, at its first rank (`distinct`), at every grain
  and level; a bare chunk id takes its pages and text from the collection when one is given
  (`with_pages`).
- `levels`: Vecta's set-based precision, recall and F1 at the doc, page and chunk levels.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from vectrixdb import registry
from vectrixdb.errors import BadType
from vectrixdb.evaluation.golden.questions import Question, split_label
from vectrixdb.roles import Collection


class Result(NamedTuple):
    """One retrieved result; `unread` says why `pages` is empty when the retriever's adapter looked
    for a page and could not read one (a store adapter's page field missing), "" otherwise."""
    chunk_id: str
    doc_id: str
    pages: tuple[int, ...]
    text: str
    score: float | None
    unread: str = ""


DICT_KEYS = {"document": ("doc_id", "id", "document", "chunk_id"), "chunk": ("chunk_id",),
             "pages": ("pages", "page"), "text": ("text",), "score": ("score",)}  # a result dict's keys, first found wins


def as_result(item: Any, rank: int) -> Result:
    if isinstance(item, Result):
        return item
    if isinstance(item, str):  # an id: `doc::n` is a chunk of doc, `doc#page=N` a page of it
        doc, page = split_label(item)
        if "::" in doc:
            doc = doc.rsplit("::", 1)[0]
        return Result(item, doc, () if page is None else (page,), "", None)
    if isinstance(item, dict):
        named = item.get("doc_id") or item.get("id") or item.get("document") or item.get("chunk_id")
        if not named:
            raise BadType(f"a result dict names no document: it holds the keys {sorted(item)}; a result dict needs one "
                          f"of {', '.join(DICT_KEYS['document'])} (the README's table of result keys)")
        pages = item.get("pages") or ((item["page"],) if item.get("page") is not None else ())
        return Result(str(item.get("chunk_id") or named), str(named), tuple(int(p) for p in pages), item.get("text") or "",
                      item.get("score"))
    if hasattr(item, "chunk_id") and hasattr(item, "doc_id"):  # a vectrixdb Hit
        return Result(item.chunk_id, item.doc_id, tuple(item.pages), item.text, item.score)
    for adapter in registry.members("adapters").values():  # LangChain, LlamaIndex, ... (retrieval/adapters.py)
        got = adapter.reads(item, rank) if adapter.reads is not None else None
        if got is not None:
            return got
    raise BadType(f"cannot read a retrieval result from {type(item).__name__} ({item!r:.80}): expected an id "
                  "string, a dict with the README's result keys, a vectrixdb Hit, or a LangChain, LlamaIndex or "
                  f"Haystack document (the adapters registered: {registry.names('adapters')}; register one that reads "
                  "it: evaluation/retrieval/adapters.py)")


def unread_pages(results: list[list[Result]]) -> str:
    """Why some results' pages could not be read, with how many ("" when every adapter read them):
    the reason retrieval_report gives for leaving page figures undefined."""
    flat = [r for res in results for r in res]
    why = [r.unread for r in flat if r.unread and not r.pages]
    if not why:
        return ""
    counts = {w: why.count(w) for w in dict.fromkeys(why)}
    told = "; ".join(f"{w} ({n} of {len(flat)} results)" for w, n in counts.items())
    return (f"page figures are undefined, not 0: the page of some results could not be read: {told}; name the "
            "field holding the page (page_field=) or score by='doc'")


def distinct(results: list[Result]) -> tuple[list[Result], int]:
    """Each chunk once, at its first (best) rank, and how many repeats were dropped: a chunk returned
    twice counts once at every grain and level, as a TREC run holds a document once per query. A
    result with no chunk id of its own (an id, or a dict naming only its document) is told apart by
    its pages and text."""
    seen: set = set()
    out = []
    for r in results:
        key = r.chunk_id if r.chunk_id != r.doc_id else (r.doc_id, r.pages, r.text)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out, len(results) - len(out)


def chunks_of(db: Collection, doc_ids: list[str]) -> list[dict]:
    """db.chunks narrowed to some documents (a principal's view lists its visible ones only)."""
    try:
        return db.chunks(doc_ids)
    except TypeError:
        return [c for c in db.chunks() if c["doc_id"] in doc_ids]


def with_pages(results: list[list[Result]], db: Collection) -> list[list[Result]]:
    """Results that came as bare vectrixdb chunk ids (`doc::n`) take their pages and text from the
    collection, so they earn page and evidence credit as the hits would."""
    from vectrixdb.evaluation.golden.questions import CHUNK_LABEL

    bare = {r.chunk_id for res in results for r in res if not r.pages and CHUNK_LABEL.match(r.chunk_id)}
    if not bare:
        return results
    docs = sorted({c.rsplit("::", 1)[0] for c in bare})
    known = {c["chunk_id"]: c for c in chunks_of(db, docs) if c["chunk_id"] in bare}
    fill = lambda r, c: r._replace(doc_id=c["doc_id"], pages=tuple(c["pages"]), text=r.text or c["text"])  # noqa: E731
    return [[fill(r, known[r.chunk_id]) if not r.pages and r.chunk_id in known else r for r in res] for res in results]


_MARKS = re.compile(r"[*_#|`>]+")


def normal(text: str) -> str:
    return " ".join(_MARKS.sub(" ", text).casefold().split())


def folded(text: str) -> tuple[str, list[int]]:
    """normal(text), and for each of its characters the offset in `text` it came from: a quote
    matched on the normal form can be marked in the text itself. Built a character at a time with
    normal's rules (Markdown marks and whitespace become one space, case folded, ends trimmed);
    casefold works a character at a time, so the two agree (tests/test_handed.py checks)."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in (" " if _MARKS.match(ch) or ch.isspace() else ch.casefold()):
            if c == " " and (not chars or chars[-1] == " "):
                continue
            chars.append(c)
            origin.append(i)
    if chars and chars[-1] == " ":
        chars.pop()
        origin.pop()
    return "".join(chars), origin


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


def levels(q: Question, results: list[Result]) -> dict[str, dict[str, float] | None]:
    """Vecta's set-based precision, recall and F1 over the retrieved chunks `results`:

    - doc: the set of documents the chunks come from against the documents the row expects;
    - page (only when the row names pages): a chunk earns credit when any of its pages is an
      expected page of the same document, precision = chunks with credit / chunks; recall =
      expected pages covered by some chunk / expected pages;
    - chunk (only when the row's labels are chunk ids, `doc::n`): chunk ids by set intersection.
    Only relevant labels (grade above 0) count, and a chunk returned twice counts once."""
    results = distinct(results)[0]
    relevant = [label for label, grade in q.graded() if grade > 0]
    chunk_ids = {label for label in relevant if "::" in label}
    docs = {label.rsplit("::", 1)[0] if label in chunk_ids else split_label(label)[0] for label in relevant}
    pages = {split_label(label) for label in relevant if split_label(label)[1] is not None}
    out: dict[str, dict[str, float] | None] = {"doc": _prf({r.doc_id for r in results}, docs)}
    if pages:
        credited = sum(1 for r in results if any((r.doc_id, p) in pages for p in r.pages))
        covered = {(r.doc_id, p) for r in results for p in r.pages} & pages
        out["page"] = _ratios(credited, len(results), len(covered), len(pages))
    else:
        out["page"] = None
    out["chunk"] = _prf({r.chunk_id for r in results}, chunk_ids) if chunk_ids else None
    return out


def _prf(got: set, want: set) -> dict[str, float]:
    both = len(got & want)
    return _ratios(both, len(got), both, len(want))


def _ratios(right: int, retrieved: int, found: int, expected: int) -> dict[str, float]:
    p = right / retrieved if retrieved else 0.0
    r = found / expected if expected else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}
