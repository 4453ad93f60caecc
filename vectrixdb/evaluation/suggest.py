"""suggest_expected: propose labels for unlabelled questions by searching with the reference answer.

The reference answer finds the document that says it far more reliably than the question does,
which makes it a fair way to propose a label and an unfair way to score one: nothing is applied,
a person keeps the right proposals.
"""
from __future__ import annotations

from typing import Any, Iterable

from vectrixdb.evaluation.golden import Question


def question_key(q: Question, position: int) -> str:
    """A question's id, or `q<line or position>` for rows without one (Bedrock rows have none)."""
    return q.id or f"q{q.line if q.line is not None else position + 1}"


def suggest_expected(db: Any, questions: Iterable[Question], *, k: int = 3, by: str = "doc",
                     relative: float = 0.8, **search) -> dict[str, list[str]]:
    """{question id: proposed expected entries}, best first; by="page" proposes `doc#page=N`.

    Searches (dense by default) with the reference answer, or the question when there is none,
    and keeps up to `k` hits scoring at least `relative` times the best one: a second document is
    proposed only when it matches the answer nearly as well as the first. Changes nothing."""
    if by not in ("doc", "page"):
        raise ValueError(f"by must be 'doc' or 'page', not {by!r}")
    search.setdefault("mode", "dense")
    out: dict[str, list[str]] = {}
    for i, q in enumerate(questions):
        text = (q.reference or q.question or "").strip()
        if not text:
            out[question_key(q, i)] = []
            continue
        labels: list[str] = []
        hits = db.search(text, k, **search)
        for hit in hits:
            if hit.score < relative * hits[0].score:
                continue
            entries = [f"{hit.doc_id}#page={p}" for p in hit.pages] if by == "page" else [hit.doc_id]
            labels += [e for e in entries if e not in labels]
        out[question_key(q, i)] = labels
    return out


def suggest_with_passages(db: Any, questions: list[Question], *, k: int = 3, **search) -> list[dict]:
    """For the review widget: each question with its proposals and the passage that matched."""
    search.setdefault("mode", "dense")
    rows = []
    for i, q in enumerate(questions):
        text = (q.reference or q.question or "").strip()
        hits = db.search(text, k, **search) if text else []
        rows.append({"key": question_key(q, i), "question": q,
                     "suggestions": [{"label": h.doc_id, "pages": h.pages, "text": h.text, "score": h.score}
                                     for h in hits]})
    return rows
