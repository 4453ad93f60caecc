"""Model-backed chunking: where topics start (llm_cutter) and a note placing a chunk (context_writer).

Both wrap a ChatWriter (any OpenAI-style route or Azure OpenAI), so every call goes through its
cache (a rerun costs nothing), its limiter and its usage ledger; a refusal (a key not taken, a
missing deployment, nothing listening) raises Refused and stops the build before anything is
stored. Document text goes to the model as data (chat.prompt.passage), with chat-template control
tokens made inert.

- llm_cutter(chat): one call per document section. The section's paragraphs are numbered and the
  model answers which of them start a new topic; the topics are then cut further where they are
  longer than chunk_size (chunking/llm.py), so every chunk keeps exact offsets and the size limit.
  A reply that does not parse or is cut off is not guessed at: that section is cut by paragraphs
  alone and counted in `cutter.failed`.
- context_writer(chat): one call per chunk, the document first (its first `document_chars`, the
  same for every chunk of it, so a server that caches prompt prefixes reuses it) and the chunk
  after; the reply is one or two
  sentences placing the chunk in its document. The note is stored in its own column, embedded in
  front of the chunk and indexed for keyword search, and never shown as the chunk's text. A failed
  reply gives no note (counted in `writer.failed`), and so does a note that places nothing
  (places_nothing): the prompt's `<passage>` fence echoed (Qwen2.5-Coder-1.5B returned the fenced
  document as its note for a cover page), or under three words holding a letter ("<chunk>",
  "[1] (2) [3]").
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from vectrixdb.roles import ChatModel, Cutter, NoteWriter

CUT_SCHEMA = {"title": "cuts", "type": "object",
              "properties": {"starts": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 200}},
              "required": ["starts"], "additionalProperties": False}
NOTE_SCHEMA = {"title": "note", "type": "object",
               "properties": {"note": {"type": "string", "maxLength": 400}}, "required": ["note"],
               "additionalProperties": False}
DOCUMENT_CHARS = 24_000  # the most of a document put in front of each chunk: the same prefix for all its chunks
_COUNTING = threading.Lock()  # calls and failed, counted from the threads of starts_of and notes_of


def model_name(chat: ChatModel) -> str:
    """The model a chat model names (ChatWriter.model), or its type's name for a stand-in without one."""
    return str(getattr(chat, "model", type(chat).__name__))


@dataclass
class LLMCutter:
    chat: ChatModel
    max_tokens: int = 300
    calls: int = 0
    failed: int = 0
    settings: dict = field(default_factory=lambda: {"kind": "llm_cutter"})

    @property
    def name(self) -> str:
        return f"llm_cutter({model_name(self.chat)})"

    def starts(self, paragraphs: list[str]) -> list[int]:
        """Indexes of the paragraphs that start a new topic (0 always does), in order."""
        from vectrixdb.chat.prompt import DATA_NOTE, passage

        if len(paragraphs) < 2:
            return [0]
        numbered = "\n\n".join(passage(p, f"paragraph {i}") for i, p in enumerate(paragraphs))
        messages = [{"role": "system", "content": "You split a document section into topics. Each paragraph is "
                     "numbered. Reply with JSON: starts, the numbers of the paragraphs that begin a new topic, in "
                     f"order. {DATA_NOTE}"}, {"role": "user", "content": numbered}]
        outcome = self.chat.ask(messages, CUT_SCHEMA, max_tokens=self.max_tokens)
        with _COUNTING:
            self.calls += 1
            self.failed += 0 if outcome.ok else 1
        if not outcome.ok:
            return list(range(len(paragraphs)))  # no guess: every paragraph is its own topic
        found = sorted({i for i in outcome.value["starts"] if 0 <= i < len(paragraphs)} | {0})
        return found


@dataclass
class ContextWriter:
    chat: ChatModel
    max_tokens: int = 120
    document_chars: int = DOCUMENT_CHARS
    calls: int = 0
    failed: int = 0
    settings: dict = field(default_factory=lambda: {"kind": "context_writer"})

    @property
    def name(self) -> str:
        return f"context_writer({model_name(self.chat)})"

    def note(self, document: str, start: int, end: int) -> str:
        """One or two sentences placing document[start:end] in its document ("" when the reply failed)."""
        from vectrixdb.chat.prompt import DATA_NOTE, passage

        shown = document if len(document) <= self.document_chars else document[: self.document_chars] + "\n[...]"
        messages = [{"role": "system", "content": "You are given a document and one chunk of it. Write one or two "
                     "sentences in plain words that say what the chunk is about and where it sits in the document "
                     "(its section and topic), to improve search retrieval of the chunk. Reply with JSON: note, "
                     "those sentences. " + DATA_NOTE},
                    {"role": "user", "content": passage(shown, "document") + "\n\n"
                     + passage(document[start:end], "chunk")}]
        outcome = self.chat.ask(messages, NOTE_SCHEMA, max_tokens=self.max_tokens)
        note = " ".join(outcome.value["note"].split()) if outcome.ok else ""
        empty = places_nothing(note)
        with _COUNTING:
            self.calls += 1
            self.failed += 0 if outcome.ok and not empty else 1
        return "" if empty else note


_IDEOGRAPH = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")  # kana, CJK, Hangul


def places_nothing(note: str) -> bool:
    """A note that says nothing: the prompt's own fence sent back, or under three words holding a
    letter once tags are taken out (Qwen2.5-Coder-1.5B on llama.cpp's server answered "<chunk>" to 70
    of 71 chunks; SmolLM2-135M answered "[1] (2) [3]"). In scripts written without spaces each
    character counts as a word."""
    from vectrixdb.chat.prompt import FENCE

    text = re.sub(r"<[^<>]*>", " ", note)
    words = sum(any(ch.isalpha() for ch in w) for w in text.split()) + len(_IDEOGRAPH.findall(text))
    return bool(FENCE.search(note)) or words < 3


def starts_of(cutter: Cutter, windows: list[list[str]]) -> list[list[int]]:
    """cutter.starts for each window of paragraphs, in order: up to the chat model's max_concurrency
    at once for an LLMCutter over a ChatWriter, one at a time for any other cutter (chat.parallel)."""
    from vectrixdb.chat.parallel import concurrently, width

    workers = width(cutter.chat) if isinstance(cutter, LLMCutter) else 1
    return concurrently(cutter.starts, windows, workers=workers)


def notes_of(writer: NoteWriter, document: str, spans: list[tuple[int, int]]) -> list[str]:
    """writer.note for each (start, end) of document, in order: up to the chat model's max_concurrency
    at once for a ContextWriter over a ChatWriter, one at a time for any other note writer."""
    from vectrixdb.chat.parallel import concurrently, width

    workers = width(writer.chat) if isinstance(writer, ContextWriter) else 1
    return concurrently(lambda span: writer.note(document, *span), spans, workers=workers)


def llm_cutter(chat: ChatModel, *, max_tokens: int = 300) -> LLMCutter:
    """For add_document(chunk="llm", cut_with=llm_cutter(chat)) and CompareConfig(cut_with=...)."""
    return LLMCutter(chat, max_tokens)


def context_writer(chat: ChatModel, *, max_tokens: int = 120, document_chars: int = DOCUMENT_CHARS) -> ContextWriter:
    """For add_document(context_with=context_writer(chat)) and CompareConfig(context_with=...).
    document_chars: how much of the document (from its start) goes in front of every chunk."""
    return ContextWriter(chat, max_tokens, document_chars)
