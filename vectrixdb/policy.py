"""Who may see what: documents carry access attributes; a principal sees a document when it holds,
for every attribute the document names, at least one of the allowed values.

A document without access attributes is public. `{"group": ["hr", "legal"]}` on a document lets a
principal with `{"group": "hr"}` or `{"group": ["legal", "it"]}` see it, and nobody else. Values
are compared as strings.
"""
from __future__ import annotations

from typing import Any


def _values(value: Any) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, (list, tuple, set, frozenset)):
        return {str(v) for v in value}
    return {str(value)}


def check_access(access: Any, where: str = "access") -> dict[str, list[str]]:
    if access is None:
        return {}
    if not isinstance(access, dict) or not all(isinstance(k, str) for k in access):
        raise ValueError(f"{where} must be a dict of attribute name to allowed values, not {access!r}")
    return {k: sorted(_values(v)) for k, v in access.items()}


def visible(access: dict, principal: dict | None) -> bool:
    if principal is None or not access:
        return True
    return all(_values(principal.get(key)) & set(allowed) for key, allowed in access.items())


def matches(doc: dict, where: dict | None) -> bool:
    """A metadata filter: every key equals (or, for a list, is one of) the given value(s).
    `doc_id` filters by document id."""
    if not where:
        return True
    for key, wanted in where.items():
        have = doc["doc_id"] if key == "doc_id" else doc["metadata"].get(key)
        options = wanted if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
        if have not in options:
            return False
    return True
