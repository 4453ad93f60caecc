"""suggest_expected: propose labels for unlabelled questions by searching with what a row says.

A row's question and its reference answer find the right document in different cases: the
question shares the document's wording, the reference its facts. Searched as one text, in hybrid
mode, the two propose a right label more often than either alone (benchmarks/suggest_expected.json,
scripts/suggest_expected_bench.py: on uber_2021's 40 page-labelled questions, k=3, a right page for
34 of 40, first for 27; the question alone 34 / 19, the reference alone 25 / 15, and in dense mode
29, 28 and 21). Searching with the reference is a fair way to propose a label and an unfair way to
score one: nothing is applied, a person keeps the right proposals.
"""
from __future__ import annotations

from dataclasses import replace
import os
from typing import Callable, Iterable, cast

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.grain import DOC, PAGE, Grain
from vectrixdb.evaluation.golden.questions import Question, asked_text
from vectrixdb.roles import Collection, Questions, Searchable

SOURCES = ("joined", "both", "reference", "question")
FUSE_DEPTH = 10  # each search of a fusion is this deep (or k, when larger) before the two are fused
PROPOSED = (DOC, PAGE)  # the grains a label is proposed at


def suggest_expected(db: Collection, questions: Questions, *, k: int = 3, by: str | Grain = "doc", relative: float = 0.8,
                     using: str = "joined", query: Callable[[Question], str] | None = None,
                     **search) -> dict[str, list[str]]:
    """{question id: proposed expected entries}, best first; by="page" proposes `doc#page=N`.

    using: "joined" (default) searches with the question and the reference answer as one text;
    "both" fuses the search with the question and the one with the reference by reciprocal rank
    fusion; "reference" searches with the reference answer, "question" with the question (a row
    with only one of them searches with that one, whatever `using` says). Searches are hybrid by
    default, the best measured (module docstring); mode=... changes it. Up to `k` hits scoring at least `relative`
    times the best one are kept: a second document is proposed only when it matches nearly as well
    as the first (for a fusion the score is the fused one). `query`: the text that stands for a question
    in the search, as retrieval_report takes it (a conversation's last user turn by default). Changes nothing."""
    from vectrixdb.evaluation.golden.files import load_questions

    grain = Grain.of(by, PROPOSED, who="suggest_expected proposes")
    # unlabelled rows are what this is for, so a file is loaded, not held to check_golden
    questions = (load_questions(os.fsdecode(questions)) if isinstance(questions, (str, os.PathLike))
                 else [questions] if isinstance(questions, Question) else list(cast(Iterable[Question], questions)))
    return {q.key(): proposal(ranked(db, q, k, using, query, **search), grain, relative) for q in questions}


def proposal(hits: list, by: str | Grain = "doc", relative: float = 0.8) -> list[str]:
    """The labels proposed from ranked hits, best first, each once: the documents (by="doc") or
    pages (by="page") of the hits scoring at least `relative` times the best one."""
    grain = Grain.of(by, PROPOSED, who="suggest_expected proposes")
    labels: list[str] = []
    for hit in hits:
        if hit.score < relative * hits[0].score:
            continue
        entries = grain.labels_of(hit)
        labels += [e for e in entries if e not in labels]
    return labels


def ranked(db: Searchable, q: Question, k: int, using: str = "joined", query: Callable[[Question], str] | None = None,
           **search) -> list:
    """The hits a suggestion is drawn from: the first k of the search (or fusion) `using` names; the
    question's text is what `query` writes from it when given (golden.questions.asked_text)."""
    from vectrixdb.search import fuse

    if using not in SOURCES:
        raise BadInput(f"using must be one of {', '.join(SOURCES)}, not {using!r}")
    search.setdefault("mode", "hybrid")
    question = (asked_text(q, query) if query is not None else q.question or "").strip()
    reference = (q.reference or "").strip()
    if using == "joined":
        texts = [f"{question} {reference}".strip()]
    elif using == "question":
        texts = [question or reference]
    elif using == "reference":
        texts = [reference or question]
    else:
        texts = [t for t in (question, reference) if t]
    texts = [t for t in texts if t]
    if not texts:
        return []
    if len(texts) == 1:
        return db.search(texts[0], k, **search)
    lists = [db.search(t, max(k, FUSE_DEPTH), **search) for t in texts]
    by_id = {h.chunk_id: h for hits in reversed(lists) for h in hits}  # the first search's copy wins
    keys = {cid: n for n, cid in enumerate(by_id)}
    names = {n: cid for cid, n in keys.items()}
    fused = fuse([[keys[h.chunk_id] for h in hits] for hits in lists])[:k]
    return [replace(by_id[names[key]], score=score, rank=rank, score_kind="rrf")
            for rank, (key, score) in enumerate(fused, start=1)]


def suggest_with_passages(db: Collection, questions: list[Question], *, k: int = 3, using: str = "joined",
                          by: str | Grain = "doc", relative: float = 0.8, query: Callable[[Question], str] | None = None,
                          **search) -> list[dict]:
    """For the review widget: each question with the hits a suggestion is drawn from (each with its
    passage, and `proposed`: whether it passes suggest_expected's cut) and the labels proposed from
    them by suggest_expected's rule (`proposed`)."""
    grain = Grain.of(by, PROPOSED, who="suggest_expected proposes")
    rows = []
    for q in questions:
        hits = ranked(db, q, k, using, query, **search)
        rows.append({"key": q.key(), "question": q, "proposed": proposal(hits, grain, relative),
                     "suggestions": [{"label": h.doc_id, "pages": h.pages, "text": h.text, "score": h.score,
                                      "proposed": h.score >= relative * hits[0].score} for h in hits]})
    return rows
