"""suggest_expected: propose labels for unlabelled questions by searching with the reference answer.

The reference answer finds the document that says it far more reliably than the question does,
which makes it a fair way to propose a label and an unfair way to score one: nothing is applied,
a person keeps the right proposals.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden import Question


def suggest_expected(db: Any, questions: Any, *, k: int = 3, by: str = "doc",
                     relative: float = 0.8, **search) -> dict[str, list[str]]:
    """{question id: proposed expected entries}, best first; by="page" proposes `doc#page=N`.

    Searches (dense by default) with the reference answer, or the question when there is none,
    and keeps up to `k` hits scoring at least `relative` times the best one: a second document is
    proposed only when it matches the answer nearly as well as the first. Changes nothing."""
    from vectrixdb.evaluation.golden import load_questions

    if by not in ("doc", "page"):
        raise BadInput(f"by must be 'doc' or 'page', not {by!r}")
    search.setdefault("mode", "dense")
    # unlabelled rows are what this is for, so a file is loaded, not held to check_golden
    questions = load_questions(str(questions)) if isinstance(questions, (str, Path)) else list(questions)
    out: dict[str, list[str]] = {}
    for q in questions:
        text = (q.reference or q.question or "").strip()
        if not text:
            out[q.key()] = []
            continue
        labels: list[str] = []
        hits = db.search(text, k, **search)
        for hit in hits:
            if hit.score < relative * hits[0].score:
                continue
            entries = [f"{hit.doc_id}#page={p}" for p in hit.pages] if by == "page" else [hit.doc_id]
            labels += [e for e in entries if e not in labels]
        out[q.key()] = labels
    return out


def suggest_with_passages(db: Any, questions: list[Question], *, k: int = 3, **search) -> list[dict]:
    """For the review widget: each question with its proposals and the passage that matched."""
    search.setdefault("mode", "dense")
    rows = []
    for q in questions:
        text = (q.reference or q.question or "").strip()
        hits = db.search(text, k, **search) if text else []
        rows.append({"key": q.key(), "question": q,
                     "suggestions": [{"label": h.doc_id, "pages": h.pages, "text": h.text, "score": h.score}
                                     for h in hits]})
    return rows
