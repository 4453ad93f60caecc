"""compare_chunking's settings beyond its ten keywords, as one frozen value.

    compare_chunking(docs, "golden.jsonl", chat=writer,
                     config=CompareConfig(late=False, alpha=0.01, executor="ray", name="chunking, May"))

Checked when made (vectrixdb.settings); the defaults are compare_chunking's own before the keywords
moved here, so a comparison without a config decides exactly as before.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vectrixdb import settings as check
from vectrixdb.errors import BadInput, BadType

ALPHA = 0.05


def _role(name: str, value: Any, what: str) -> None:
    """answer= and judge= are a function or anything with ask(messages, schema), like a ChatWriter."""
    if value is not None and not (callable(value) or callable(getattr(value, "ask", None))):
        raise BadType(f"CompareConfig.{name} is {what}, not {type(value).__name__}")


@dataclass(frozen=True)
class CompareConfig:
    """The rest of compare_chunking's settings (budget, techniques, sizes, headings, chat, save_to and
    progress are its own keywords).

    model: the embedding model every build is searched with (default None: the bundled one).
    alpha: the exact McNemar tests' level; a gap to the best with p >= alpha is a tie (default 0.05).
    answer: writes an answer from the handed characters, (question, context) -> text or a ChatWriter
        (default None: chat's, when chat= is given).
    judge: scores the answer for correctness against the golden reference, a function or a ChatWriter
        (default None: chat's).
    threshold: a judged score at or over this is answered right, 0 to 1 (default 0.5).
    cut_with: the LLM cutter for the "llm" build (llm_cutter(chat)); False refuses it (default None: from chat=).
    context_with: the note writer for the "+notes" builds (context_writer(chat)); False refuses them
        (default None: from chat=).
    late: True builds late chunking, False refuses it (default None: built with chat=, when the model can).
    executor: "local", "ray" or a Ray address for chunking and embedding; model calls stay here (default "local").
    name: what list_runs and the dashboard show for a run saved with save_to= (default None: a name is made).
    """

    model: Any = None
    alpha: float = ALPHA
    answer: Any = None
    judge: Any = None
    threshold: float = 0.5
    cut_with: Any = None
    context_with: Any = None
    late: bool | None = None
    executor: str = "local"
    name: str | None = None

    def __post_init__(self) -> None:
        check.number("CompareConfig", "alpha", self.alpha, 0, 1, above=True)
        if self.alpha >= 1:
            raise BadInput(f"CompareConfig.alpha is a level above 0 and under 1, not {self.alpha!r}")
        _role("answer", self.answer, "a function (question, context) -> text or a ChatWriter")
        _role("judge", self.judge, "a function or a ChatWriter")
        check.unit("CompareConfig", "threshold", self.threshold)
        check.kind("CompareConfig", "late", self.late, bool, "True, False or None", optional=True)
        check.kind("CompareConfig", "executor", self.executor, str, '"local", "ray" or a Ray address')
        check.kind("CompareConfig", "name", self.name, str, "a run's name or None", optional=True)


DEFAULT_COMPARE = CompareConfig()  # the default compare_chunking's signature shows

#: Where compare_chunking's former keywords went.
MOVED = {name: f"config=CompareConfig({name}=...)" for name in
         ("model", "alpha", "answer", "judge", "threshold", "cut_with", "context_with", "late", "executor", "name")}
