"""The roles a user hands vectrixdb, as typing.Protocols: what an object must offer to be taken.

Public signatures name these instead of `Any`, so a type checker (and a reader) sees what a
parameter accepts. They are types only: where the code decides at run time what it was given (a
judge function or a chat model, a reranker's name or a loaded cross-encoder), that check stays
where it is and is what decides (Embedder is runtime_checkable: get_embedder's isinstance is one).

- Searchable: a collection retrieval_report and evaluate can query (a Vectrix, a principal's view,
  or your own object with search() and documents()); Collection adds what label checks read.
- Embedder: turns texts into unit-length float32 rows (SentenceEmbedder, or your own).
- ChatModel: the model writer judges, answerers, write_golden and the chunkers call (ChatWriter).
- Judge, Answerer, Reranker, Retriever: a ChatModel or the plain function each role also takes.
- Questions: what every evaluation verb reads questions from (QuestionLike: one question).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence, Union, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from vectrixdb.chat.writer import Outcome


class Searchable(Protocol):
    """What retrieval_report and evaluate query: search(query, k, **options) -> hits best first, and
    documents(). A Vectrix and a principal's view are; so is any object with the two."""

    @property
    def search(self) -> Callable[..., list[Any]]: ...

    def documents(self) -> list[dict]: ...


class Collection(Searchable, Protocol):
    """A Searchable whose contents label checks, suggestions and audits read: its name, vector spaces,
    one document's pages and text, its chunks and a summary."""

    @property
    def name(self) -> str: ...

    @property
    def spaces(self) -> dict[str, dict]: ...

    def embedder(self, space: str = ...) -> Embedder: ...

    def document(self, doc_id: str) -> Any: ...

    @property
    def chunks(self) -> Callable[..., list[dict]]: ...  # a Vectrix takes doc_ids=, a principal's view none

    def info(self) -> dict: ...


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-length float32 rows can embed a collection: its name (kept
    with the collection and the cache), its dimension and encode()."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray: ...


class ChatModel(Protocol):
    """The model writer: ask(messages, schema, max_tokens=) -> an Outcome (ChatWriter is one). Judges,
    answerers, write_golden, the LLM cutter and the context writer call it; judges.is_model is the
    run-time test (an `ask` that can be called)."""

    def ask(self, messages: str | list[dict], schema: Any = None, *, max_tokens: int | None = None) -> Outcome: ...


class CrossEncoder(Protocol):
    """A loaded cross-encoder: predict(pairs) -> one score per (query, text) pair."""

    def predict(self, pairs: Any, *args: Any, **kwargs: Any) -> Any: ...


class Cutter(Protocol):
    """Says where each topic starts in a window of paragraphs (an LLMCutter, or your own)."""

    def starts(self, window: list[str]) -> list[int]: ...


class NoteWriter(Protocol):
    """Writes the note put in front of one chunk (start, end) of a document (a ContextWriter, or your own)."""

    def note(self, document: str, start: int, end: int) -> str: ...


class LangChainRetriever(Protocol):
    """A LangChain retriever: invoke(query) -> documents."""

    def invoke(self, input: str, *args: Any, **kwargs: Any) -> Any: ...


# A judge: a ChatModel, or a function (metric, question, reference, answer, sources) -> a score in
# [0, 1], (score, reason) or {"score":, "reason":} (judges.as_judge).
JudgeFunction = Callable[[str, str, Union[str, None], str, list], Any]
Judge = Union[ChatModel, JudgeFunction]
# An answerer: a ChatModel, or a function (question, context) -> answer text (reader.as_answerer).
Answerer = Union[ChatModel, Callable[[str, str], str]]
# A reranker: a cross-encoder's name or folder, a loaded CrossEncoder, or (query, texts) -> scores.
Reranker = Union[str, CrossEncoder, Callable[[str, list], Any]]
# What an embedding model is given as: an Embedder, a model name or folder, a loaded sentence-transformers
# model (with name=), or None (the bundled model).
EmbeddingModel = Union[Embedder, str, os.PathLike, "SentenceTransformer", None]
# A retrieval target: a Searchable, a function query -> hits or ids, or a LangChain-style retriever.
Retriever = Union[Searchable, Callable[[str], Iterable[Any]], "LangChainRetriever"]
class QuestionLike(Protocol):
    """One golden question as the verbs read it (evaluation/golden/questions.Question is the one the
    package makes and the one they accept at run time): its text, its labels and its key."""

    @property
    def question(self) -> str: ...

    @property
    def expected(self) -> tuple[str, ...]: ...

    def key(self) -> str: ...


# Questions: a golden file's path, one Question, or Questions.
Questions = Union[str, os.PathLike, QuestionLike, Iterable[QuestionLike]]
