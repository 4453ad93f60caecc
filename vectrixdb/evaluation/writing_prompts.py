"""What write_golden asks a model, and the JSON each answer must come back in.

Four asks: the passage critic (clarity, depth, structure, relevance), the draft (a question, its
answer and the passage's words that give it), the question critic (standing alone, clarity,
answered) and the rewrite. Passages always go through chat_prompt.passage, fenced as data with any
chat-template control tokens made inert, and so does every word a model wrote that comes back in a
later prompt (a draft sent back and why, which may be the critic's feedback; the question to
rewrite; the question and answer the critic scores); every system prompt carries DATA_NOTE. Every string
in a schema has a maxLength, so a small model cannot run on until max_tokens. The prompts depend
only on their inputs, so the same run asks the same things and the cache answers them.
"""
from __future__ import annotations

from vectrixdb.chat_prompt import DATA_NOTE, passage
from vectrixdb.evaluation.writing_config import EVOLUTIONS, KINDS
from vectrixdb.evaluation.writing_passages import Passage

_UNIT = {"type": "number", "minimum": 0, "maximum": 1}

PASSAGE_SCORES = {
    "title": "passage_scores", "type": "object", "additionalProperties": False,
    "properties": {name: _UNIT for name in ("clarity", "depth", "structure", "relevance")},
    "required": ["clarity", "depth", "structure", "relevance"],
}
DRAFT = {
    "title": "draft", "type": "object", "additionalProperties": False,
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 400},
                   "answer": {"type": "string", "minLength": 1, "maxLength": 300},
                   "quotes": {"type": "array", "minItems": 1, "maxItems": 3,
                              "items": {"type": "string", "minLength": 1, "maxLength": 300}}},
    "required": ["question", "answer", "quotes"],
}
QUESTION_SCORES = {
    "title": "question_scores", "type": "object", "additionalProperties": False,
    "properties": {"standing_alone": _UNIT, "clarity": _UNIT, "answered": _UNIT,
                   "feedback": {"type": "string", "maxLength": 300}},
    "required": ["standing_alone", "clarity", "answered", "feedback"],
}


def _material(passages: list[Passage]) -> str:
    return "\n\n".join(passage(p.text, f"{i}: {p.where()}") for i, p in enumerate(passages, start=1))


def _style(examples: list[str], scenario: str | None, task: str | None) -> str:
    parts = []
    if scenario:
        parts.append(f"Who asks: {scenario}")
    if task:
        parts.append(f"Why they ask: {task}")
    if examples:
        parts.append("Questions people really ask, for their style only (not their topics):\n"
                     + "\n".join(f"- {e}" for e in examples))
    return "\n".join(parts)


def passage_critic(p: Passage, scenario: str | None, task: str | None) -> list[dict]:
    """Score one passage as material for a question (DeepEval's context critic's four measures)."""
    purpose = f" Relevance is to this purpose: {task or scenario}." if task or scenario else ""
    system = ("You judge whether a passage is good material for a question a person would ask. Score each from 0 "
              "to 1: clarity (it reads clearly), depth (it says something substantive), structure (it is "
              f"well organised), relevance (it is about the documents' subject, not boilerplate).{purpose} "
              f"Reply with JSON only. {DATA_NOTE}")
    return [{"role": "system", "content": system}, {"role": "user", "content": _material([p])}]


def draft(passages: list[Passage], kind: str, examples: list[str], scenario: str | None, task: str | None,
          long_words: tuple[int, int], search_words: int, sent_back: list[tuple[str, str]]) -> list[dict]:
    """Ask for one question of `kind` from the passages, with what earlier drafts were sent back for."""
    size = {"search": f" At most {search_words} words.", "long": f" {long_words[0]} to {long_words[1]} words."}.get(kind, "")
    system = ("You write one question a real person would ask, whose answer is in the passages. Write "
              f"{KINDS[kind]}.{size} Use your own words, not the passage's sentences. Never mention the passage, "
              "the text or a table: the asker has not seen them. Give the answer, and in quotes the exact words of "
              f"the passages that give it, copied character for character. Reply with JSON only. {DATA_NOTE}")
    style = _style(examples, scenario, task)
    user = _material(passages) + (f"\n\n{style}" if style else "")
    for i, (question, why) in enumerate(sent_back, start=1):  # the model's words and the critic's, as data
        user += ("\n\nAn earlier draft was sent back; write a better one.\n"
                 + passage(f"Draft: {question}\nWhy: {why}", f"sent back {i}"))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def question_critic(question: str, answer: str, kind: str, passages: list[Passage]) -> list[dict]:
    """Score a drafted question for standing alone, clarity and being answered by the passages."""
    search = " It is a search typed in a search box: it stands alone when it names what it looks for." \
        if kind == "search" else ""
    system = ("You judge one drafted question. Score each from 0 to 1: standing_alone (it makes sense to someone "
              f"who has not read the passages),{search} clarity (it is clear what is asked), answered (the passages "
              "really give the stated answer). Add one sentence of feedback. Reply with JSON only. " + DATA_NOTE)
    user = _material(passages) + "\n\n" + passage(question, "question") + "\n\n" + passage(answer, "answer")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def rewrite(question: str, kind: str, way: str, passages: list[Passage], examples: list[str],
            scenario: str | None, task: str | None, long_words: tuple[int, int], search_words: int) -> list[dict]:
    """Ask for a harder version of a kept question, one way (EVOLUTIONS); a search stays a search."""
    keep = {"search": f" It must stay a search typed in a search box: keywords only, at most {search_words} words.",
            "long": f" It must stay {long_words[0]} to {long_words[1]} words, the asker's situation first.",
            "two_place": " It must still need both passages."}.get(kind, "")
    system = (f"You make a question harder to answer by search, rewriting it {EVOLUTIONS[way]}.{keep} Its answer "
              "must still be in the passages. Use your own words; never mention the passage or a table. Give the "
              "new question, its answer and the exact words of the passages that give it. Reply with JSON only. "
              + DATA_NOTE)
    style = _style(examples, scenario, task)
    user = _material(passages) + "\n\n" + passage(question, "question to rewrite") + (f"\n\n{style}" if style else "")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
