"""What write_golden asks a model, and the JSON each answer must come back in.

Four asks: the passage critic (clarity, depth, structure, relevance), the draft (a question, its
answer and the numbers of the passage's sentences that give it), the question critic (standing
alone, clarity, answered) and the rewrite. The draft and the rewrite show the passages as numbered
sentences (evaluation.writing.spans) and the model names numbers: it chooses the evidence, code cuts it, so
it cannot misquote. Style examples go in a block of their own, said to be for style only and never
to be returned. Passages always go through chat.prompt.passage, fenced as data with any
chat-template control tokens made inert, and so does every word a model wrote that comes back in a
later prompt (a draft sent back and why, which may be the critic's feedback; the question to
rewrite; the question and answer the critic scores); every system prompt carries DATA_NOTE. Every string
in a schema has a maxLength and every array a maxItems, so a small model cannot run on until
max_tokens; the draft's sentence numbers are bounded by the numbers shown. The prompts depend only
on their inputs, so the same run asks the same things and the cache answers them.
"""
from __future__ import annotations

from vectrixdb.chat.prompt import DATA_NOTE, passage
from vectrixdb.evaluation.writing.config import EVOLUTIONS, KINDS
from vectrixdb.evaluation.writing.passages import Passage
from vectrixdb.evaluation.writing.spans import Span, number_spans, shown

UNIT = {"type": "number", "minimum": 0, "maximum": 1}
# A grammar-constrained server (llama.cpp) holds a reply to an enum but not to a number's minimum and
# maximum: asked for numbers, Qwen2.5-Coder-1.5B on llama.cpp's server scored a passage's relevance
# 2 or 3, twice, for 7 of 16 passages (8 in a first trial), each then unreadable and passed over; as
# tenths, none (scripts/passage_critic_bench.py, benchmarks/passage_critic_qwen1.5b.json).
TENTHS = {"type": "number", "enum": [0, *(i / 10 for i in range(1, 10)), 1]}

PASSAGE_SCORES = {
    "title": "passage_scores", "type": "object", "additionalProperties": False,
    "properties": {name: TENTHS for name in ("clarity", "depth", "structure", "relevance")},
    "required": ["clarity", "depth", "structure", "relevance"],
}
QUESTION_CHARS, ANSWER_CHARS, MOST_SENTENCES = 320, 200, 3


def draft_schema(shown: int) -> dict:
    """The draft's JSON: a question, its short answer, and 1 to MOST_SENTENCES sentence numbers
    from 1 to `shown` (the numbers the prompt showed)."""
    return {
        "title": "draft", "type": "object", "additionalProperties": False,
        "properties": {"question": {"type": "string", "minLength": 1, "maxLength": QUESTION_CHARS},
                       "answer": {"type": "string", "minLength": 1, "maxLength": ANSWER_CHARS},
                       "sentences": {"type": "array", "minItems": 1, "maxItems": MOST_SENTENCES,
                                     "items": {"type": "integer", "minimum": 1, "maximum": max(shown, 1)}}},
        "required": ["question", "answer", "sentences"],
    }


QUESTION_SCORES = {
    "title": "question_scores", "type": "object", "additionalProperties": False,
    "properties": {"standing_alone": UNIT, "clarity": UNIT, "answered": UNIT,
                   "feedback": {"type": "string", "maxLength": 300}},
    "required": ["standing_alone", "clarity", "answered", "feedback"],
}


def _material(passages: list[Passage]) -> str:
    return "\n\n".join(passage(p.text, f"{i}: {p.where()}") for i, p in enumerate(passages, start=1))


def numbered(passages: list[Passage]) -> tuple[str, list[Span]]:
    """The passages as numbered sentences, each passage fenced as data, and the spans shown."""
    groups = number_spans(passages)
    text = "\n\n".join(passage(shown(spans), f"{i}: {p.where()}")
                        for i, (p, spans) in enumerate(zip(passages, groups), start=1))
    return text, [s for spans in groups for s in spans]


def _style(examples: list[str], scenario: str | None, task: str | None) -> str:
    parts = []
    if scenario:
        parts.append(f"Who asks: {scenario}")
    if task:
        parts.append(f"Why they ask: {task}")
    if examples:
        parts.append("Style examples: questions people ask about other things. Copy their tone and length only. "
                     "Never return one of them or a near copy; your question must be about the sentences above.\n"
                     + passage("\n".join(f"- {e}" for e in examples), "style examples"))
    return "\n".join(parts)


_REPLY = ('Reply with JSON only: {"question": "...", "answer": "a short answer", "sentences": [the numbers of '
          'the one to three sentences that give the answer]}.')


def passage_critic(p: Passage, scenario: str | None, task: str | None) -> list[dict]:
    """Score one passage as material for a question (DeepEval's context critic's four measures)."""
    purpose = f" Relevance is to this purpose: {task or scenario}." if task or scenario else ""
    # Giving each score its two ends (as the question critic's prompt does) was tried and made it worse
    # with Qwen2.5-Coder-1.5B on llama-cpp-python's server: on 16 hand-labelled passages of uber_2021.pdf
    # the mean score's AUC fell from 0.70 to 0.48. On llama.cpp's server no prompt tried ranks clearly
    # above chance (scripts/passage_critic_bench.py, benchmarks/passage_critic_qwen1.5b.json).
    system = ("You judge whether a passage is good material for a question a person would ask. Score each from 0 "
              "to 1 in steps of 0.1: clarity (it reads clearly), depth (it says something substantive), structure (it is "
              f"well organised), relevance (it is about the documents' subject, not boilerplate).{purpose} "
              f"Reply with JSON only. {DATA_NOTE}")
    return [{"role": "system", "content": system}, {"role": "user", "content": _material([p])}]


def draft(passages: list[Passage], kind: str, examples: list[str], scenario: str | None, task: str | None,
          long_words: tuple[int, int], search_words: int, sent_back: list[tuple[str, str]]) -> tuple[list[dict], list[Span]]:
    """Ask for one question of `kind` from the passages' numbered sentences, with what earlier drafts
    were sent back for; returns the messages and the spans shown (to turn numbers into quotes)."""
    size = {"search": f" At most {search_words} words.", "long": f" {long_words[0]} to {long_words[1]} words."}.get(kind, "")
    system = ("You write one question a real person would ask, whose answer is in the numbered sentences. Write "
              f"{KINDS[kind]}.{size} Use your own words, not the sentences' wording. Never mention the passage, "
              "the text, a sentence or a table: the asker has not seen them. Give a short answer and the numbers "
              f"of the sentences that give it. Reply with JSON only. {DATA_NOTE}")
    material, spans = numbered(passages)
    style = _style(examples, scenario, task)
    user = material + (f"\n\n{style}" if style else "")
    for i, (question, why) in enumerate(sent_back, start=1):  # the model's words and the critic's, as data
        user += ("\n\nAn earlier draft was sent back; write a better one.\n"
                 + passage(f"Draft: {question}\nWhy: {why}", f"sent back {i}"))
    user += f"\n\nWrite {KINDS[kind]}.{size} {_REPLY}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}], spans


def question_critic(question: str, answer: str, kind: str, passages: list[Passage], evidence: list[str] | tuple[str, ...] = ()) -> list[dict]:
    """Score a drafted question for standing alone, clarity and being answered by the passages (the
    sentences the draft chose are shown as its evidence)."""
    search = " A search typed in a search box stands alone when it names what it looks for." if kind == "search" else ""
    # Each score is given its two ends: without them Qwen2.5-Coder-1.5B gave standing_alone 0.5 to all 16
    # questions of a hand-labelled set (8 that stand alone, 8 that do not), so every draft was sent back;
    # with them, 1 to the 8 that stand alone and 0 to 2 of the 8 that do not (points_at sends back 6 of those 8
    # before a critic is asked).
    system = ("You judge one drafted question. Score each from 0 to 1. standing_alone: 1 when someone who has "
              "never seen the passages could ask it as written and know what it is about (it names the company, "
              "the thing and the time it asks about); 0 when it points at something they cannot see (the passage, "
              f"the text, a table, a sentence, 'above', or 'it' or 'they' with nothing named).{search} clarity: 1 "
              "when it asks one clear thing, 0 when it is vague. answered: 1 when the evidence states the given "
              "answer, 0 when it does not. Give a value between only when unsure. Add one sentence of feedback. "
              "Reply with JSON only. " + DATA_NOTE)
    user = _material(passages) + "\n\n" + passage(question, "question") + "\n\n" + passage(answer, "answer")
    if evidence:
        user += "\n\n" + passage("\n".join(evidence), "evidence")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def rewrite(question: str, kind: str, way: str, passages: list[Passage], examples: list[str],
            scenario: str | None, task: str | None, long_words: tuple[int, int], search_words: int) -> tuple[list[dict], list[Span]]:
    """Ask for a harder version of a kept question, one way (EVOLUTIONS); a search stays a search.
    Returns the messages and the spans shown."""
    keep = {"search": f" It must stay a search typed in a search box: keywords only, at most {search_words} words.",
            "long": f" It must stay {long_words[0]} to {long_words[1]} words, the asker's situation first.",
            "two_place": " It must still need both passages."}.get(kind, "")
    system = (f"You make a question harder to answer by search, rewriting it {EVOLUTIONS[way]}.{keep} Its answer "
              "must still be in the numbered sentences. Use your own words; never mention the passage, a sentence "
              "or a table. Give the new question, a short answer and the numbers of the sentences that give it. "
              "Reply with JSON only. " + DATA_NOTE)
    material, spans = numbered(passages)
    style = _style(examples, scenario, task)
    user = material + "\n\n" + passage(question, "question to rewrite") + (f"\n\n{style}" if style else "")
    user += f"\n\nRewrite the question {EVOLUTIONS[way]}.{keep} {_REPLY}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}], spans
