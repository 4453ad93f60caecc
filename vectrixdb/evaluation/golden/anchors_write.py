"""Golden rows written back as ragas and DeepEval files, which those tools load with their own loaders.

save_ragas -> JSON Lines, one ragas SingleTurnSample a line (`EvaluationDataset.from_jsonl` reads it):
- `user_input` <- question, `reference` <- reference;
- `reference_context_ids` <- the expected labels judged relevant (grade above 0): ragas' ids are
  relevant or not, so a grade-0 label is left out of them;
- `reference_contexts` <- the evidence quotes; without them, given the collection, the text of each
  expected page or chunk (a whole document of several pages is not copied: too long to be a context);
- `vectrixdb` <- the row's own fields (id, expected with its grades, evidence, draft, hint), beside
  ragas' fields: ragas ignores a field it does not know, load_questions reads them back, so our
  file round-trips exactly; a row ragas itself rewrites keeps only ragas' fields.

save_deepeval -> one JSON array of Goldens, as DeepEval's `EvaluationDataset.save_as("json")`
writes it (`add_goldens_from_json_file` reads it):
- `input` <- question, `expected_output` <- reference;
- `context` <- the evidence quotes, else (given the collection) the texts as for ragas;
- `source_file` <- the expected document, when the row expects pages of one document only;
- `name` <- id; `additional_metadata["vectrixdb"]` <- id, expected (grades included), evidence,
  draft and hint, so load_questions reads the row back exactly.

Neither file is written over an existing one (io.write_new); both are written whole, at once.
A conversation row (earlier turns, Question.turns) is refused, naming it: both files are written
single-turn here, and writing its last question alone would drop its turns.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from vectrixdb.evaluation.golden.questions import Question, label_document, refuse_unencodable, split_label
from vectrixdb.roles import Collection


def _contexts(q: Question, db: Any, kept: dict) -> list[str]:
    """What a row's expected entries hold, from the collection: evidence first, else page or chunk texts."""
    if q.evidence or db is None:
        return list(q.evidence)
    out = []
    for label, grade in q.graded():
        if grade <= 0:
            continue
        doc, page = split_label(label)
        document = label_document(label)
        if document not in kept:
            kept[document] = db.document(document)
        found = kept[document]
        if found is None:
            continue
        if doc != document:  # a chunk id
            out += [c["text"] for c in _chunks(db, kept) if c["doc_id"] == document and c["chunk_id"] == label]
        elif page is not None and 1 <= page <= len(found.pages):
            out.append(found.page_text(page))
        elif page is None and len(found.pages) <= 1:
            out.append(found.markdown)
    return out


def _chunks(db: Any, kept: dict) -> list[dict]:
    """Every chunk the collection shows, listed once per file written: a principal's view takes no
    doc_ids (it lists what its principal may see), so the caller picks a document's chunks itself."""
    if _CHUNKS not in kept:
        kept[_CHUNKS] = db.chunks()
    return kept[_CHUNKS]


_CHUNKS = object()  # the key of the chunk list among `kept`'s documents (no document id is this object)


def ours(q: Question) -> dict:
    """vectrixdb's own fields of a row, kept beside a peer's: id, expected (grades included),
    evidence, draft and hint, as the golden file holds them."""
    return {k: v for k, v in q.to_json().items() if k in ("id", "expected", "evidence", "draft", "hint")}


def _single(questions: Iterable[Question], tool: str) -> list[Question]:
    """The questions, or BadInput naming the first that holds earlier turns (module docstring)."""
    from vectrixdb.errors import BadInput

    questions = list(questions)
    for n, q in enumerate(questions, start=1):
        if q.turns:
            read = f", line {q.line} where it was read" if q.line else ""
            raise BadInput(f"row {n} ({q.key()!r}{read}) is a conversation with {len(q.turns)} earlier turn(s): a "
                           f"{tool} file is written single-turn here, and its last question alone would lose them; "
                           "leave conversations out of this file")
    return questions


def ragas_rows(questions: Iterable[Question], db: Collection | None = None) -> list[dict]:
    """The ragas SingleTurnSample dicts (module docstring), vectrixdb's own fields beside them."""
    questions = _single(questions, "ragas")
    kept: dict = {}
    rows = []
    for q in questions:
        row = {"user_input": q.question, "reference": q.reference,
               "reference_contexts": _contexts(q, db, kept) or None,
               "reference_context_ids": [label for label, g in q.graded() if g > 0] or None, "vectrixdb": ours(q)}
        rows.append({k: v for k, v in row.items() if v is not None})
    return rows


def deepeval_rows(questions: Iterable[Question], db: Collection | None = None) -> list[dict]:
    """The DeepEval Golden dicts (module docstring)."""
    questions = _single(questions, "DeepEval")
    kept: dict = {}
    rows = []
    for q in questions:
        documents = {label_document(label) for label in q.expected}
        row = {"input": q.question, "expected_output": q.reference, "context": _contexts(q, db, kept) or None,
               "source_file": documents.pop() if len(documents) == 1 else None, "name": q.key(),
               "additional_metadata": {"vectrixdb": ours(q)}}
        rows.append({k: v for k, v in row.items() if v is not None})
    return rows


def save_ragas(questions: Iterable[Question], path: str, db: Collection | None = None) -> str:
    """Write questions as a ragas JSONL test set (module docstring); never over an existing file."""
    questions = list(questions)
    rows = ragas_rows(questions, db)
    refuse_unencodable(path, rows, questions)
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    return _write(path, "\n".join(lines) + "\n" if lines else "")


def save_deepeval(questions: Iterable[Question], path: str, db: Collection | None = None) -> str:
    """Write questions as DeepEval goldens, one JSON array (module docstring); never over an existing file."""
    questions = list(questions)
    rows = deepeval_rows(questions, db)
    refuse_unencodable(path, rows, questions)
    return _write(path, json.dumps(rows, ensure_ascii=False, indent=4) + "\n")


def _write(path: str, text: str) -> str:
    from vectrixdb.errors import AlreadyExists
    from vectrixdb.io import write_new

    try:
        return write_new(path, text)
    except FileExistsError:
        raise AlreadyExists(f"{path} already exists; it may hold checked rows, so it is never written over") from None
