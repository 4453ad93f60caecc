"""Judges: the rubrics a model scores answers by, and one way to call any judge.

A judge is either a function `judge(metric, question, reference, answer, sources) -> score` (a
number from 0 to 1, or `(score, reason)`, or `{"score": ..., "reason": ...}`), or a ChatWriter,
which is asked with the metric's rubric for JSON `{score, reason}`. Rubrics are registered once
by name, like measures; a new one is a `Rubric(...)` and a `register()` call.

What comes back is a Verdict: a score with its reason, or no score with the status that explains
why (`parse_failed`, `truncated`, `refused`, `error` from the model). A function that returns a
score outside 0..1, NaN, None or not a number raises BadInput naming the question and metric: a
judge that returns 7 has not understood the question, and averaging it in would hide that. A
model's unscorable answer is counted by its status and never averaged in.

A rubric declares the inputs it reads (`needs_reference`, `needs_sources`), and no judge is asked
without them: correctness judged with no reference answer would score the judge's own beliefs, not
the answer. `missing_inputs()` says what an item lacks; a call without them is refused before any
model is asked, as Verdict(None, reason, "missing_input"); answer_report and calibrate check every
item first and raise BadInput listing the items (as ragas refuses a metric whose required columns
are absent), so no money is spent on a run that cannot be scored.

A conversation (a question with earlier turns, Question.turns) is judged in context: a model is
shown the turns before the question, as data, each `role: text` on its own line, then the question
(the last user turn); a function judge is given, as `question`, the conversation written out the same
way with the question last (Question.conversation). A question without earlier turns is asked
exactly as before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence, TypeGuard

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.roles import ChatModel, Judge

SCORE_SCHEMA = {
    "title": "verdict",
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1},
                   "reason": {"type": "string", "maxLength": 400}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Rubric:
    name: str
    asks: str  # what the judge scores, in one paragraph
    needs_reference: bool = False
    needs_sources: bool = False
    reads_sources: bool = False  # shown the sources when given, though it can judge without them


RUBRICS: dict[str, Rubric] = registry.table("rubrics")  # the registry's table of rubrics


@registry.alias
def register(rubric: Rubric) -> Rubric:
    """Add a rubric under its name (registry.register("rubrics", rubric.name, rubric))."""
    return registry.register("rubrics", rubric.name, rubric)


@registry.contract("rubrics")
def _fits(name: str, rubric: Any) -> None:
    """A rubric is a Rubric under its own name, asking something (a blank prompt would have the
    judge score nothing it was told), its declared inputs booleans."""
    if not isinstance(rubric, Rubric):
        raise BadInput(f"rubric {name!r}: a rubric is a Rubric(name, asks, ...), not {type(rubric).__name__}")
    if rubric.name != name:
        raise BadInput(f"rubric {rubric.name!r} registered as {name!r}: register it under its own name")
    if not isinstance(rubric.asks, str) or not rubric.asks.strip():
        raise BadInput(f"rubric {name!r} asks nothing: its prompt (asks) is empty; say what the judge scores")
    flags = {f: getattr(rubric, f) for f in ("needs_reference", "needs_sources", "reads_sources")}
    if not all(isinstance(v, bool) for v in flags.values()):
        raise BadInput(f"rubric {name!r}: needs_reference, needs_sources and reads_sources are True or False, not {flags}")


# Bedrock's four RAG metrics, so the two evaluations read side by side
# correctness asks for 1 or 0: asked "1: it says what the reference says; 0: it contradicts it or says something
# else", Qwen2.5-Coder-1.5B failed right answers in other words (kappa 0.36 with people on data/judge_set's dev half);
# given a 0.5 and a 0.75 to use, it gave wrong figures 0.5 (kappa 0.29); this wording gave 0.64
# (benchmarks/judge_correctness_dev_tries.json). A person's 0.75 or 0.5 (right with an extra claim, half right) is a
# pass at the 0.5 line the calibration draws, so a judge of 1 and 0 loses only the weighted kappa's shades.
register(Rubric("correctness", "Does the answer give the same fact the reference answer gives for what the question "
                "asks? Other wording, rounding or units are the same fact, and giving less than the reference is not an "
                "error. 1: yes, what it states for the question matches the reference; 0: a figure, year, name or fact "
                "it gives for the question differs from the reference's, or it does not answer. Give 1 or 0.",
                needs_reference=True))
register(Rubric("completeness", "Does the answer cover everything the reference answer gives that the question asks "
                "for? 1: nothing the question needs is missing; 0: it misses the point.", needs_reference=True))
register(Rubric("faithfulness", "Is every claim in the answer supported by the sources? 1: all of it is in them; "
                "0: it is invented or contradicts them.", needs_sources=True))
register(Rubric("helpfulness", "Would the person who asked find the answer useful: on topic, clear, direct? "
                "1: fully; 0: not at all."))
# Vecta's two generation metrics
register(Rubric("accuracy", "How well does the answer match the expected answer in meaning (not wording)? 1: the "
                "same meaning; 0: a different or wrong answer.", needs_reference=True))
register(Rubric("groundedness", "Is the answer self-consistent and free of invented facts, staying within what the "
                "sources (when given) support? 1: nothing invented; 0: mostly invented.", reads_sources=True))

BEDROCK_METRICS = ("correctness", "completeness", "faithfulness", "helpfulness")
GENERATION_METRICS = ("accuracy", "groundedness")


class Verdict(NamedTuple):
    score: float | None
    reason: str | None
    status: str  # "ok" or the model's outcome (parse_failed, truncated, refused, error)
    cost: float | None = None


def rubric(name: str) -> Rubric:
    if name not in RUBRICS and name not in registry.names("rubrics"):
        raise BadInput(f"unknown metric {name!r}; known: {sorted(RUBRICS)} (a new one is a Rubric registered in "
                       "judges.py, or from outside vectrixdb an entry point in the group 'vectrixdb.rubrics')")
    return RUBRICS[name]


def missing_inputs(metric: str, reference: str | None, sources: list | None) -> list[str]:
    """The inputs `metric`'s rubric declares that this item does not give (empty when it can be judged):
    a reference is missing when it is None or blank; sources when none of them has any text."""
    r = rubric(metric)
    missing = []
    if r.needs_reference and not (isinstance(reference, str) and reference.strip()):
        missing.append("a reference answer")
    if r.needs_sources and not any(str(s).strip() for s in (sources or []) if s is not None):
        missing.append("sources")
    return missing


def refusal(metric: str, missing: list[str]) -> str:
    """Why a judge is not asked: the rubric, what it reads, what the item lacks."""
    return (f"{metric} is judged against {' and '.join(missing)} (its rubric declares them) and this item has none: "
            "not asked, not scored")


def check_inputs(metric: str, items: list[dict]) -> None:
    """BadInput naming the items that lack an input `metric` declares (before any judge is asked)."""
    lacking: dict[str, list[str]] = {}
    for item in items:
        for need in missing_inputs(metric, item.get("reference"), item.get("sources")):
            lacking.setdefault(need, []).append(str(item.get("key", item.get("id", "?"))))
    if lacking:
        parts = "; ".join(f"{len(keys)} item(s) without {need}: {keys[:5]}" for need, keys in lacking.items())
        raise BadInput(f"{metric} cannot be judged: {parts}. Its rubric declares these inputs; give them, or leave "
                       f"{metric} out of metrics=")


def is_model(judge: object) -> TypeGuard[ChatModel]:
    """Whether `judge` is a chat model (an `ask` that can be called) rather than a function."""
    return hasattr(judge, "ask") and callable(judge.ask)


def as_judge(judge: Judge) -> Callable[..., Verdict]:
    """A function (metric, question, reference, answer, sources, repeat=0) -> Verdict for any judge."""
    if is_model(judge):
        ask = lambda *args, repeat=0: _ask_model(judge, *args, repeat=repeat)  # noqa: E731
    elif callable(judge):
        ask = lambda *args, repeat=0: _call(judge, *args)  # noqa: E731
    else:
        raise BadInput(f"judge must be a function (metric, question, reference, answer, sources) -> 0..1 or a "
                       f"ChatWriter, not {type(judge).__name__}")

    def call(metric: str, question: str, reference: str | None, answer: str, sources: list, repeat: int = 0,
             turns: Sequence[tuple[str, str]] = ()) -> Verdict:
        missing = missing_inputs(metric, reference, sources)
        if missing:  # refused before any judge is asked
            return Verdict(None, refusal(metric, missing), "missing_input")
        if turns and is_model(judge):  # the earlier turns go into the prompt as data (messages_for)
            return _ask_model(judge, metric, question, reference, answer, sources, repeat=repeat, turns=turns)
        if turns:  # a function judge reads the conversation written out, the question last
            question = written_out(turns, question)
        return ask(metric, question, reference, answer, sources, repeat=repeat)
    return call


def written_out(turns: Sequence[tuple[str, str]], question: str | None = None) -> str:
    """Turns as text, one `role: text` line each, then `user: question` when a question is given
    (Question.conversation writes the same)."""
    lines = [f"{role}: {content}" for role, content in turns]
    return "\n".join(lines + ([f"user: {question}"] if question is not None else []))


def _call(judge: Callable, metric: str, question: str, reference: str | None, answer: str, sources: list) -> Verdict:
    got: Any = judge(metric, question, reference, answer, sources)  # a score, (score, reason) or a dict
    reason = None
    if isinstance(got, dict):
        got, reason = got.get("score"), got.get("reason")
    elif isinstance(got, tuple) and len(got) == 2:
        got, reason = got
    return Verdict(check_score(got, metric, question), None if reason is None else str(reason), "ok")


def check_score(value: Any, metric: str, question: str) -> float:
    """A judge's score as a float in [0, 1], or BadInput naming the question and the metric."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
        raise BadInput(f"the judge gave {value!r} for {metric} of question {question[:80]!r}: a score is a number "
                       "from 0 to 1")
    if not 0 <= value <= 1:
        raise BadInput(f"the judge gave {value!r} for {metric} of question {question[:80]!r}: a score is a number "
                       "from 0 to 1, and averaging this in would hide that the judge misread the task")
    return float(value)


def messages_for(metric: str, question: str, reference: str | None, answer: str, sources: list,
                 repeat: int = 0, turns: Sequence[tuple[str, str]] = ()) -> list[dict]:
    """The judge's prompt: the rubric, then the material as data (see chat.prompt.passage). A rubric
    reads only what it declares: the reference when it needs one (faithfulness is judged against the
    sources, not against the expected answer), the sources when it needs or reads them (correctness
    is judged against the reference): each judgement rests on its own evidence, and the prompt is
    shorter. `turns`, a conversation's earlier turns, come first, as one passage, and the rubric is
    told the answer replies to the question in that conversation; without them the prompt is as
    it always was."""
    from vectrixdb.chat.prompt import DATA_NOTE, passage

    r = rubric(metric)
    system = (f"You grade one answer for {metric}. {r.asks} Reply with JSON: score, a number from 0 to 1, and reason, "
              f"one or two sentences. {DATA_NOTE}")
    if turns:
        system += " The question is the last turn of a conversation, whose earlier turns are given first: read it in that context."
    if repeat:  # a separate sample of the same judgement (its own cache entry)
        system += f" (Independent grading number {repeat + 1}.)"
    parts = ([passage(written_out(turns), "conversation so far")] if turns else []) + [passage(question, "question")]
    if reference and r.needs_reference:
        parts.append(passage(reference, "expected answer"))
    if r.needs_sources or r.reads_sources:
        parts += [passage(str(s), f"source {i + 1}") for i, s in enumerate(sources or [])]
    parts.append(passage(answer, "answer to grade"))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _ask_model(writer: Any, metric: str, question: str, reference: str | None, answer: str, sources: list,
               *, repeat: int = 0, turns: Sequence[tuple[str, str]] = ()) -> Verdict:
    outcome = writer.ask(messages_for(metric, question, reference, answer, sources, repeat, turns), SCORE_SCHEMA,
                         max_tokens=200)
    if not outcome.ok:
        return Verdict(None, outcome.reason, outcome.status, outcome.cost)
    value = outcome.value
    return Verdict(float(value["score"]), str(value.get("reason", "")), "ok", outcome.cost)
