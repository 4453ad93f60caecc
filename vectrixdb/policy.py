"""Who may see what, and which documents a metadata filter keeps.

Access: documents carry access attributes; a principal sees a document when it holds, for every
attribute the document names, at least one of the allowed values.

- A document without access attributes (`access=None` or `{}`) is public: every principal sees it.
- `{"group": ["hr", "legal"]}` lets a principal with `{"group": "hr"}` or `{"group": ["legal", "it"]}`
  see it, and nobody else. With several attributes, the principal must match each of them.
- An empty value list, `{"group": []}`, allows no value: no principal sees that document (only the
  collection itself, which is the owner's view). A principal's empty list holds nothing, so it sees
  the public documents only.
- Values are compared as strings (`1` and `"1"` are the same value); `None` as a value is refused,
  since it could mean "anyone" or "nobody".

Metadata filters (`where=`) are exact:

- `{"year": 2021}` keeps documents whose metadata `year` equals 2021; a list, tuple or set,
  `{"year": [2020, 2021]}`, means "any of these"; several keys must all hold.
- Equality is type-aware: `True` does not match `1` nor `"true"`, `"2021"` does not match `2021`;
  numbers compare by value (`2021` matches `2021.0`).
- `None` matches documents that lack the key or hold null for it: `{"year": None}` keeps the
  documents without a year.
- `doc_id` filters by document id.
- There are no operators: a key starting with `$`, or a value that is a dict with such keys
  (`{"year": {"$gt": 2020}}`), is an error rather than a filter that silently matches nothing.
"""
from __future__ import annotations

import numbers
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.extras import needs

_MANY = (list, tuple, set, frozenset)


def _values(value: Any, where: str) -> list[str]:
    if value is None:
        raise BadInput(f"{where}: None is not a value; give a value, a list of values, or [] for nobody")
    if isinstance(value, _MANY):
        if any(v is None for v in value):
            raise BadInput(f"{where}: None is not a value; give a value, a list of values, or [] for nobody")
        return sorted({str(v) for v in value})
    return [str(value)]


def check_access(access: Any, where: str = "access") -> dict[str, list[str]]:
    """Access attributes (or a principal) in their stored form: attribute -> sorted allowed values."""
    if access is None:
        return {}
    if not isinstance(access, dict) or not all(isinstance(k, str) and k.strip() for k in access):
        raise BadInput(f"{where} must be a dict of attribute name to allowed values, not {access!r}")
    return {k: _values(v, f"{where} {k!r}") for k, v in access.items()}


def visible(access: dict, principal: dict | None) -> bool:
    """Whether a document with `access` is visible to `principal` (None: the owner, who sees all)."""
    if principal is None or not access:
        return True
    return all(set(principal.get(key, ())) & set(allowed) for key, allowed in access.items())


def check_where(where: Any) -> dict:
    """The filter itself when it is one we can apply exactly; a BadInput naming the problem if not."""
    if where is None:
        return {}
    if not isinstance(where, dict):
        raise BadInput(f"where must be a dict of metadata values, not {where!r}")
    for key, wanted in where.items():
        if not isinstance(key, str):
            raise BadInput(f"where: keys are metadata names (text), not {key!r}")
        if key.startswith("$"):
            raise BadInput(f"where: unknown operator {key!r}; where= takes exact values, {{key: value}} "
                           "or {key: [any, of, these]}")
        if isinstance(wanted, dict) and any(isinstance(k, str) and k.startswith("$") for k in wanted):
            raise BadInput(f"where: {key!r}: operators such as {sorted(wanted)} are not supported; "
                           "give a value or a list of values")
    return where


def _same(a: Any, b: Any) -> bool:
    """Equality that keeps types apart (Python says True == 1); numbers compare by value."""
    if _number(a) and _number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def _number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)  # numpy's bool_ is not Real either


def matches(doc: dict, where: dict | None) -> bool:
    """Whether a document (a catalog row: doc_id, metadata) passes a checked filter (see module doc)."""
    for key, wanted in (where or {}).items():
        have = doc["doc_id"] if key == "doc_id" else doc["metadata"].get(key)
        options = wanted if isinstance(wanted, _MANY) else [wanted]
        if not any(_same(have, option) for option in options):
            return False
    return True



class VisibleKeywords:
    """A BM25 index over just the chunks a principal may see (keys ascending), in memory and never
    saved, so IDF and average length count only those chunks: scores over the whole collection
    would tell how often hidden documents use a word. Built with the store's tokenizer and BM25
    and searched by KeywordIndex.search itself, so a view scores exactly as a collection holding
    only those chunks would."""

    def __init__(self, keys: list[int], texts: list[str]):
        with needs("store"):
            import bm25s
        import numpy as np

        from vectrixdb.store.keywords import tokenize

        self.keys = np.array(keys, dtype=np.uint64)
        self.model: Any = None  # a bm25s.BM25 (untyped)
        if texts:
            self.model = bm25s.BM25()
            self.model.index(tokenize(texts), show_progress=False)

    def search(self, query: str, k: int, allowed=None):
        """(keys, BM25 scores) best first, exactly as KeywordIndex.search."""
        from vectrixdb.store.keywords import KeywordIndex

        return KeywordIndex.search(self, query, k, allowed)  # type: ignore[arg-type]  # the same fields, duck-typed
