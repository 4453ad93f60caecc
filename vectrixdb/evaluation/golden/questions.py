"""Golden questions: the Question record and the JSONL files that hold them.

One JSON object a line: `question` and `expected` always; `id`, `reference`, `evidence`, `hint`
and `draft` when there are. `expected` names documents by id (`deferment`) or one page of one
(`report.pdf#page=41`), as a list, or as an object giving each a relevance grade
(`{"deferment": 2, "faq": 1}`; a grade of 0 means judged and not relevant). A plain list means
grade 1 for each. load_questions() also reads a Bedrock RAG evaluation prompt dataset
(`conversationTurns` with `prompt` and `referenceResponses`), whose rows have no labels yet.

Conversations: a row may hold the earlier turns of a conversation, `turns`, a list of
`{"role": "user" | "assistant" | "tool", "content": text}` in order; `question` is then the last
user turn (what is searched by default) and `reference` the answer to it. A row without earlier
turns has no `turns` field and is written exactly as before. A Bedrock row's every turn is read:
the earlier turns' prompts (user) and first reference responses (assistant) become `turns`, the
last turn's prompt the question and its first reference response the reference.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from vectrixdb.errors import BadInput, BadType
from vectrixdb.roles import Questions, Retriever

PAGE_LABEL = re.compile(r"^(?P<doc>.+)#page=(?P<page>[1-9][0-9]*)$")
ROLES = ("user", "assistant", "tool")  # a turn's role, as golden.schema.json allows it


class Turn(NamedTuple):
    """One earlier turn of a conversation: who spoke (user, assistant, tool) and what was said."""

    role: str
    content: str


def as_turns(value: Any) -> tuple[Turn, ...]:
    """Turns from Turn records, (role, content) pairs or {"role", "content"} objects; BadInput naming the
    turn (counted from 1) that is none of these or whose role is not one of ROLES."""
    out = []
    for n, turn in enumerate(value or (), start=1):
        if isinstance(turn, dict):
            role, content = turn.get("role"), turn.get("content")
        elif isinstance(turn, (tuple, list)) and len(turn) == 2:
            role, content = turn
        else:
            raise BadInput(f"turn {n} must be a (role, content) pair or an object with role and content, not {turn!r}")
        if role not in ROLES or not isinstance(content, str):
            raise BadInput(f"turn {n}: role must be one of {', '.join(ROLES)} and content a string, "
                           f"not {role!r} and {type(content).__name__}")
        out.append(Turn(role, content))
    return tuple(out)


@dataclass(frozen=True)
class Question:
    question: str
    reference: str | None = None
    expected: tuple[str, ...] = ()
    id: str | None = None
    evidence: tuple[str, ...] = ()
    hint: str | None = None
    draft: bool = False
    line: int | None = field(default=None, compare=False, repr=False)  # where it was read from
    grades: tuple[float, ...] = ()  # one per expected entry; empty means 1 for each
    turns: tuple[Turn, ...] = ()  # the conversation before `question`, in order; empty for a single question

    if TYPE_CHECKING:  # what __init__ takes: __post_init__ makes tuples of a list, a {label: grade} dict, one string
        def __init__(self, question: str, reference: str | None = None,
                     expected: str | Iterable[str] | Mapping[str, float] = (), id: str | None = None,
                     evidence: str | Iterable[str] = (), hint: str | None = None, draft: bool = False,
                     line: int | None = None, grades: Iterable[float] = (),
                     turns: Iterable[Turn | tuple[str, str] | Mapping[str, str]] = ()) -> None: ...

    def __post_init__(self):
        object.__setattr__(self, "turns", as_turns(self.turns))
        expected = self.expected
        if isinstance(expected, dict):  # {label: grade}
            object.__setattr__(self, "grades", tuple(float(g) for g in expected.values()))
            expected = tuple(expected)
        for name, value in (("expected", expected), ("evidence", self.evidence)):
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value or ()))
        if self.grades and len(self.grades) != len(self.expected):
            raise BadInput(f"{len(self.grades)} grades for {len(self.expected)} expected entries")
        if self.grades and all(g == 1 for g in self.grades):
            object.__setattr__(self, "grades", ())

    @property
    def labelled(self) -> bool:
        """True when at least one expected entry is relevant (grade above 0)."""
        return any(g > 0 for _, g in self.graded())

    def graded(self) -> list[tuple[str, float]]:
        """(label, grade) for each expected entry."""
        return list(zip(self.expected, self.grades or [1.0] * len(self.expected)))

    def key(self) -> str:
        """The name every report gives this question: its id, else `q-` and a hash of its text
        (whitespace and case folded), so the same file gives the same names in every report and a
        row keeps its name when rows are added or moved."""
        if self.id is not None and str(self.id) != "":
            return str(self.id)
        return "q-" + hashlib.sha256(self.folded().encode("utf-8")).hexdigest()[:10]

    def folded(self) -> str:
        """The question's text, whitespace and case folded, after its earlier turns when it has them
        (`role: text` each, a line apart), so two conversations ending in the same words are told apart."""
        fold = lambda text: " ".join(text.casefold().split())  # noqa: E731
        return "\n".join([f"{t.role}: {fold(t.content)}" for t in self.turns] + [fold(self.question)])

    def conversation(self) -> str:
        """The conversation written out, one `role: text` line a turn, the question last as `user:`;
        the question alone when there are no earlier turns."""
        if not self.turns:
            return self.question
        return "\n".join(f"{t.role}: {t.content}" for t in (*self.turns, Turn("user", self.question)))

    @property
    def documents(self) -> tuple[str, ...]:
        """The expected document ids, pages stripped (`report.pdf#page=41` -> `report.pdf`)."""
        return tuple(dict.fromkeys(split_label(e)[0] for e in self.expected))

    @property
    def pages(self) -> tuple[tuple[str, int], ...]:
        """(doc_id, page) for each expected entry that names a page."""
        return tuple((d, p) for d, p in map(split_label, self.expected) if p is not None)

    def to_json(self) -> dict[str, Any]:
        row = {k: v for k, v in asdict(self).items() if k not in ("line", "grades", "turns")}
        row["evidence"] = list(self.evidence)
        expected: Any = {e: _number(g) for e, g in self.graded()} if self.grades else list(self.expected)
        turns = {"turns": [t._asdict() for t in self.turns]} if self.turns else {}  # first: the conversation reads in order
        return turns | {k: v for k, v in row.items() if v not in (None, [], False, ())} | {"expected": expected}


def _number(grade: float) -> int | float:
    return int(grade) if float(grade).is_integer() else grade


def provenance(golden: Questions, questions: Iterable[Question], target: Retriever | None = None) -> dict[str, Any]:
    """What a report was measured on, kept in its report.json and shown in the dashboard and PDF:
    the golden file with the SHA-256 of its bytes (when a path was given), a SHA-256 of the questions
    themselves (the same for a file and the Questions read from it, so two runs can be told to have
    asked the same thing), and, for a vectrixdb collection, its name, embedding model per vector space
    and generation (which moves with every write)."""
    import os
    from pathlib import Path

    from vectrixdb import io

    rows = json.dumps([q.to_json() for q in questions], sort_keys=True, ensure_ascii=False, default=str)
    out: dict[str, Any] = {"questions_sha256": hashlib.sha256(rows.encode("utf-8")).hexdigest()}
    if isinstance(golden, (str, bytes, os.PathLike)):
        path = os.fsdecode(golden)
        path = path if io.is_remote(path) else str(Path(path).resolve())
        out.update({"golden": path, "golden_sha256": hashlib.sha256(io.read_bytes(path)).hexdigest()})
    spaces, name, info = getattr(target, "spaces", None), getattr(target, "name", None), getattr(target, "info", None)
    if isinstance(name, str) and isinstance(spaces, dict):
        out["collection"] = name
        out["embedding_model"] = {space: (s or {}).get("model") for space, s in spaces.items()}
        generation = info().get("generation") if callable(info) else None
        if generation is not None:
            out["collection_generation"] = generation
    return out


def cutoffs(k: Any) -> list[int]:
    """k as every report takes it: one whole number or several; sorted, each at least 1."""
    values = [k] if isinstance(k, (int, np.integer)) else list(k) if isinstance(k, (list, tuple, range)) else None
    if not values or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1 for x in values):
        shown = k[0] if isinstance(k, (list, tuple)) and len(k) == 1 else k
        raise BadInput(f"k must be a positive whole number or several of them, not {shown!r}")
    return sorted({int(x) for x in values})


def split_label(label: str) -> tuple[str, int | None]:
    """`report.pdf#page=41` -> ("report.pdf", 41); `deferment` -> ("deferment", None)."""
    match = PAGE_LABEL.match(label)
    return (match["doc"], int(match["page"])) if match else (label, None)


def label_document(label: str) -> str:
    """The document a label names: `r.pdf#page=4` -> `r.pdf`, the chunk id `r.pdf::12` -> `r.pdf`."""
    doc = split_label(label)[0]
    return doc.rsplit("::", 1)[0] if CHUNK_LABEL.match(doc) else doc


# The label rule. A label is a document id, `doc_id#page=N` (lower case, N from 1, nothing after)
# or a vectrixdb chunk id `doc_id::n`. A `#` followed by anything else that reads as a page
# (`#p=10`, `#Page=10`, `#page10`, `#pg 10`, `#10`) is a misspelt page anchor, an error with or
# without a collection (golden.schema.json says the same). `page=10` without the `#` may be part of
# a document id (a URL's query), so it is an error only against a collection that does not hold it.
CHUNK_LABEL = re.compile(r"^.+::[0-9]+$")
HASH_ANCHOR = re.compile(r"^(?P<doc>.*?)\s*#\s*(?:p|pg|pp|page|pages)?\.?\s*[=:_-]?\s*(?P<page>[0-9]+)\s*$", re.I)
BARE_ANCHOR = re.compile(r"^(?P<doc>.+?)[\s?&/_.,-]*page\s*[=:]\s*(?P<page>[0-9]+)\s*$", re.I)


def loose_page(label: str) -> tuple[str, int] | None:
    """(document, page) a label seems to mean when its page anchor is misspelt, else None."""
    if PAGE_LABEL.match(label):
        return None
    match = HASH_ANCHOR.match(label) or BARE_ANCHOR.match(label)
    return (match["doc"], int(match["page"])) if match and match["doc"] else None


def anchor_problem(label: str) -> str | None:
    """Why a label's page anchor is not `#page=N`, with what it seems to mean; None when it is fine.
    Only `#` forms are judged here: see the label rule above."""
    bad = "#page=" in label and not PAGE_LABEL.match(label)
    loose = HASH_ANCHOR.match(label)
    if not bad and not (loose and not PAGE_LABEL.match(label)):
        return None
    meant = loose_page(label)
    fix = ("; pages count from 1" if meant[1] < 1 else f"; did you mean {meant[0] + '#page=' + str(meant[1])!r}?") \
        if meant else ""
    return f"{label!r} is not a page label: a page is written doc_id#page=N (lower case, N from 1){fix}"


def save_questions(questions: Iterable[Question], path: str) -> str:
    """Write questions as a golden JSONL file; never over an existing file. A row holding text UTF-8
    cannot hold is refused, naming it, before anything is written (refuse_unencodable)."""
    from vectrixdb.io import write_new

    questions = list(questions)
    rows = [q.to_json() for q in questions]
    refuse_unencodable(path, rows, questions)
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    return write_new(path, "\n".join(lines) + "\n" if lines else "")


SURROGATE = re.compile("[\ud800-\udfff]")
UNENCODABLE = ("holds a lone surrogate (a \\ud800-\\udfff escape that is not half of a pair), which is not a "
               "character and cannot be written as UTF-8; mend the text where it came from")


def unencodable(value: Any, field: str = "") -> str | None:
    """Where in a parsed row (a dotted field, list items by index) the first text lies that UTF-8
    cannot hold: a lone surrogate, which JSON's \\u escapes can spell and Python keeps; else None."""
    if isinstance(value, str):
        return (field or "value") if SURROGATE.search(value) else None
    items: Iterable[tuple[Any, Any]] = (value.items() if isinstance(value, dict) else
                                        enumerate(value) if isinstance(value, (list, tuple)) else ())
    for key, item in items:
        shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")  # a key may hold one itself
        name = f"{field}[{key}]" if isinstance(key, int) else f"{field}.{shown}" if field else shown
        found = unencodable(key, name) or unencodable(item, name)
        if found:
            return found
    return None


def refuse_unencodable(path: str, rows: list[dict], questions: list[Question]) -> None:
    """BadInput naming `path`, the row (and the line it was read from) and the field of the first
    row holding text UTF-8 cannot hold; called before a file is written, so nothing of it is."""
    for n, (row, q) in enumerate(zip(rows, questions), start=1):
        field = unencodable(row)
        if field:
            read = f" (line {q.line} where it was read)" if q.line else ""
            raise BadInput(f"{path}: row {n}{read}, {field}: {UNENCODABLE}")


def is_bedrock(row: dict) -> bool:
    return isinstance(row, dict) and "conversationTurns" in row


def from_bedrock(row: dict, line: int) -> Question:
    """A Bedrock prompt-dataset row, no labels: every turn read (the module docstring says how), the
    last turn's prompt the question and its first reference response the reference."""
    text = lambda parts: " ".join(p.get("text", "") for p in parts if isinstance(p, dict)).strip() or None  # noqa: E731
    said = []  # (prompt, first reference response) per turn
    for turn in row.get("conversationTurns") or [{}]:
        refs = turn.get("referenceResponses") or [{}]
        said.append((text(turn.get("prompt", {}).get("content", [{}])) or "",
                     text(refs[0].get("content", [])) if refs else None))
    turns: list[tuple[str, str]] = []
    for prompt, ref in said[:-1]:  # an earlier turn without a reference response adds its prompt alone
        turns += [("user", prompt)] + ([("assistant", ref)] if ref is not None else [])
    return Question(said[-1][0], said[-1][1], (), None, line=line, turns=turns)


def bedrock_problems(row: dict) -> list[tuple[str, str]]:
    """(field, message) for each way a Bedrock prompt-dataset row is malformed, every turn checked
    (a message names the turn, from 1, when the row has several); empty when it reads."""
    turns = row.get("conversationTurns")
    if not isinstance(turns, list) or not turns:
        return [("conversationTurns", "must be a non-empty list of turns")]
    out = []
    for n, turn in enumerate(turns, start=1):
        which = f"turn {n}: " if len(turns) > 1 else ""
        if not isinstance(turn, dict):
            out.append(("conversationTurns", f"{which}a turn must be an object with prompt and referenceResponses"))
            continue
        prompt = turn.get("prompt")
        content = prompt.get("content") if isinstance(prompt, dict) else None
        if not isinstance(content, list) or not content:
            out.append(("conversationTurns.prompt", f"{which}must be an object whose content is a non-empty list"))
        elif not all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in content):
            out.append(("conversationTurns.prompt", f"{which}each content part must be an object with text as a string"))
        elif not " ".join(p["text"] for p in content).strip() and n < len(turns):
            out.append(("conversationTurns.prompt", f"{which}an earlier turn's prompt has no text"))
        refs = turn.get("referenceResponses", [])
        if not isinstance(refs, list) or not all(
                isinstance(r, dict) and isinstance(r.get("content", []), list)
                and all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in r.get("content", []))
                for r in refs):
            out.append(("conversationTurns.referenceResponses",
                        f"{which}must be a list of objects whose content parts hold text as a string"))
    return out


class DuplicateKeys(dict):
    """A parsed JSON object that remembers the keys it was given more than once."""

    duplicates: tuple[str, ...] = ()


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    row = DuplicateKeys(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        again = []
        for k, _ in pairs:
            if k in seen:
                again.append(k)
            seen.add(k)
        row.duplicates = tuple(dict.fromkeys(again))
    return row


def parse_row(text: str) -> Any:
    """One line's JSON, refusing what would lose or hide data: raises ValueError for text that is not
    JSON, nests too deeply or holds a number with too many digits to read. Objects come back as
    DuplicateKeys, whose `duplicates` names any key given twice (the last value would win)."""
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise BadInput(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise BadInput("nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise BadInput(f"cannot read a value: {exc}") from None


def iter_rows(path: str, problems: list | None = None) -> Generator[tuple[int, str], None, None]:
    """(line number, text) of each non-blank line, streamed: a BOM and CRLF ends are accepted;
    bytes that are not UTF-8 are an error naming the line (appended to `problems` when given,
    and the line skipped, so a check can go on to find the rest)."""
    from vectrixdb.io import open_binary

    with open_binary(path) as fh:
        for n, raw in enumerate(fh, start=1):
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                message = f"not UTF-8 (byte {exc.start} of the line)"
                if problems is None:
                    raise BadInput(f"{path}, line {n}: {message}") from None
                problems.append((n, message))
                continue
            text = text.rstrip("\r\n")
            if text.strip():
                yield n, text


# -- what a retriever is asked for a question: its last user turn, or what a query= function writes --

def last_turn_only(scored: Sequence[Question], query: Callable[[Question], str] | None) -> list[str]:
    """The warning for conversations searched by their last user turn alone (no `query=`), or none."""
    talks = sum(bool(q.turns) for q in scored)
    if not talks or query is not None:
        return []
    return [f"{talks} of {len(scored)} questions are conversations searched by their last user turn alone; query= "
            "writes the text searched from the whole conversation"]


def query_rule(query: Callable[[Question], str] | None) -> str:
    """How the text searched was written, as report["query"] records it."""
    if query is None:
        return "question: each question's text (a conversation's last user turn)"
    if not callable(query):
        raise BadType(f"query must be a function Question -> str, not {type(query).__name__}")
    name = getattr(query, "__qualname__", None) or getattr(query, "__name__", None) or type(query).__name__
    return f"query={name}: the text the function wrote from each question (the frame's query column)"


def asked_text(q: Question, query: Callable[[Question], str] | None) -> str:
    """The text searched for `q`: its question, or what `query` writes from it."""
    if query is None:
        return q.question
    text = query(q)
    if not isinstance(text, str) or not text.strip():
        raise BadInput(f"query= returned {text!r} for question {q.key()!r} ({q.question[:60]!r}); it must return "
                       "the text to search, a non-empty string")
    return text
