"""Answers written from handed text alone, and whether they are right: compare_chunking's model half.

`answer` is a function `(question, context) -> str` or a ChatWriter, which is told to answer from the
context only (the context goes as data, see chat.prompt.passage) and to say so when it does not
hold the answer. `judge` scores the answer's correctness against the golden reference, the
same judges as answer_report (a function or a ChatWriter); an answer is *right* at a correctness
of `threshold` or more. An answer or verdict the model could not give (a reply that did not parse,
was cut off, ...) counts as not right and is counted under its outcome, never dropped silently.
"""
from __future__ import annotations

from typing import NamedTuple

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.generation.judges import as_judge, is_model
from vectrixdb.roles import Answerer, Judge

ANSWER_SCHEMA = {"title": "answer", "type": "object",
                 "properties": {"answer": {"type": "string", "maxLength": 600}}, "required": ["answer"],
                 "additionalProperties": False}


def as_answerer(answer: Answerer):
    """A function (question, context) -> (answer text or None, outcome, why it failed) for any answerer."""
    if is_model(answer):
        from vectrixdb.chat.prompt import DATA_NOTE, passage

        model = answer

        def ask(question: str, context: str):
            messages = [{"role": "system", "content": "Answer the question from the context alone, in one or two "
                                                       "sentences; if the context does not say, answer that it does "
                                                       f"not say. Reply with JSON: answer. {DATA_NOTE}"},
                        {"role": "user", "content": passage(context, "context") + "\n\n" + passage(question, "question")}]
            outcome = model.ask(messages, ANSWER_SCHEMA, max_tokens=300)
            return (outcome.value["answer"], "ok", None) if outcome.ok else (None, outcome.status, outcome.reason)
        return ask
    if callable(answer):
        def call(question: str, context: str):
            text = answer(question, context)
            if not isinstance(text, str):
                raise BadInput(f"answer= returned {type(text).__name__} for {question[:60]!r}; it must return text")
            return text, "ok", None
        return call
    raise BadInput(f"answer must be a function (question, context) -> text or a ChatWriter, not {type(answer).__name__}")


class Answered(NamedTuple):
    """One answer written and judged: right, the outcome (ok, or the answer's or the verdict's failed
    status), what the model or service said when it was not ok, and the answer, score and the
    judge's reason as they came back (None where that step did not)."""

    right: bool
    status: str
    why: str | None
    answer: str | None = None
    score: float | None = None
    reason: str | None = None


def answer_and_judge(answer: Answerer, judge: Judge, question: str, reference: str | None, context: str,
                     threshold: float = 0.5) -> Answered:
    """The answer written from `context` and its correctness verdict against `reference` (Answered)."""
    if not reference:
        raise BadInput(f"{question[:60]!r} has no reference answer to judge against; answered right needs one")
    text, status, why = as_answerer(answer)(question, context)
    if text is None:
        return Answered(False, f"answer {status}", why)
    verdict = as_judge(judge)("correctness", question, reference, text, [context])
    if verdict.status != "ok":
        return Answered(False, f"verdict {verdict.status}", verdict.reason, text)
    right = verdict.score is not None and verdict.score >= threshold  # an ok verdict has a score
    return Answered(right, "ok", None, text, verdict.score, verdict.reason)
