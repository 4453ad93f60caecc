"""Golden questions: the Question record and the JSONL files that hold them.

One JSON object a line: `question` and `expected` always; `id`, `reference`, `evidence`, `hint`
and `draft` when there are. `expected` names documents by id (`deferment`) or one page of one
(`report.pdf#page=41`). load_questions() also reads a Bedrock RAG evaluation prompt dataset
(`conversationTurns` with `prompt` and `referenceResponses`), whose rows have no labels yet.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Iterator

PAGE_LABEL = re.compile(r"^(?P<doc>.+)#page=(?P<page>[1-9][0-9]*)$")


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

    def __post_init__(self):
        for name in ("expected", "evidence"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value or ()))

    @property
    def labelled(self) -> bool:
        return bool(self.expected)

    @property
    def documents(self) -> tuple[str, ...]:
        """The expected document ids, pages stripped (`report.pdf#page=41` -> `report.pdf`)."""
        return tuple(dict.fromkeys(split_label(e)[0] for e in self.expected))

    @property
    def pages(self) -> tuple[tuple[str, int], ...]:
        """(doc_id, page) for each expected entry that names a page."""
        return tuple((d, p) for d, p in map(split_label, self.expected) if p is not None)

    def to_json(self) -> dict[str, Any]:
        row = {k: v for k, v in asdict(self).items() if k != "line"}
        row["expected"], row["evidence"] = list(self.expected), list(self.evidence)
        return {k: v for k, v in row.items() if v not in (None, [], False)} | {"expected": list(self.expected)}


def split_label(label: str) -> tuple[str, int | None]:
    """`report.pdf#page=41` -> ("report.pdf", 41); `deferment` -> ("deferment", None)."""
    match = PAGE_LABEL.match(label)
    return (match["doc"], int(match["page"])) if match else (label, None)


def save_questions(questions: Iterable[Question], path: str) -> str:
    """Write questions as a golden JSONL file; never over an existing file."""
    from vectrixdb.io import write_new

    lines = [json.dumps(q.to_json(), ensure_ascii=False) for q in questions]
    return write_new(path, "\n".join(lines) + "\n" if lines else "")


def is_bedrock(row: dict) -> bool:
    return isinstance(row, dict) and "conversationTurns" in row


def from_bedrock(row: dict, line: int) -> Question:
    """A Bedrock prompt-dataset row: the first turn's prompt and reference response, no labels."""
    turn = (row.get("conversationTurns") or [{}])[0]
    prompt = turn.get("prompt", {}).get("content", [{}])
    refs = turn.get("referenceResponses") or [{}]
    text = lambda parts: " ".join(p.get("text", "") for p in parts if isinstance(p, dict)).strip() or None  # noqa: E731
    ref = text(refs[0].get("content", [])) if refs else None
    return Question(text(prompt) or "", ref, (), None, line=line)


def iter_rows(path: str, problems: list | None = None) -> Iterator[tuple[int, str]]:
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
                    raise ValueError(f"{path}, line {n}: {message}") from None
                problems.append((n, message))
                continue
            text = text.rstrip("\r\n")
            if text.strip():
                yield n, text


def load_questions(path: str) -> list[Question]:
    """Questions from a golden file or a Bedrock prompt dataset (its rows come back unlabelled).

    This reads what is there; check_golden() says what is wrong with it."""
    out = []
    for n, text in iter_rows(path):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {n}: not JSON ({exc.msg})") from None
        if is_bedrock(row):
            out.append(from_bedrock(row, n))
        elif isinstance(row, dict):
            known = {k: row[k] for k in ("question", "reference", "expected", "id", "evidence", "hint", "draft") if k in row}
            if "id" in known and known["id"] is not None:
                known["id"] = str(known["id"])
            out.append(Question(**{"question": "", **known}, line=n))
        else:
            raise ValueError(f"{path}, line {n}: a line must be a JSON object, not {type(row).__name__}")
    return out


def read_golden(path: str, db=None) -> list[Question]:
    """The questions of a golden file that passes check_golden(); raises with every error if not."""
    from vectrixdb.evaluation.schema import check_golden

    check = check_golden(path, db)
    if not check.ok:
        raise ValueError(check.summary())
    return check.golden
