"""Reading a golden file: load_questions (every format we read), read_golden (a checked file) and
questions_of (what every evaluation verb accepts: a path or Questions).

Above the formats it dispatches to (foreign.py, anchors.py, schema.py), each of which builds on
questions.py's rows; so the row code never imports the readers back.
"""
from __future__ import annotations

from typing import Any, Iterable, cast

from vectrixdb.errors import BadInput, BadType
from vectrixdb.evaluation.golden.questions import (UNENCODABLE, Question, bedrock_problems, from_bedrock, is_bedrock,
                                                   unencodable)
from vectrixdb.roles import Collection, Questions


def questions_of(golden: Questions, db: Collection | None = None) -> list[Question]:
    """What every evaluation verb accepts: a golden file's path (checked with check_golden and
    refused with every error), or Questions as they are."""
    if isinstance(golden, (str, bytes)) or hasattr(golden, "__fspath__"):
        return read_golden(str(golden), db)
    if isinstance(golden, Question):
        return [golden]
    out: list[Question] = []
    for item in cast(Iterable[Any], golden):  # QuestionLike is the type; a Question is what is taken
        if not isinstance(item, Question):
            raise BadType(f"questions must be Question records or a golden file's path, not {type(item).__name__}")
        out.append(item)
    return out


def load_questions(path: str, collection: Collection | None = None, *, by: str = "page") -> list[Question]:
    """Questions from a golden file, a Bedrock prompt dataset (its rows come back unlabelled), a Vecta
    benchmark (JSON Lines or Vecta's CSV; foreign.py), a ragas test set or DeepEval goldens (their
    JSON Lines / JSON files; anchors.py says how each field is read).

    With `collection`, ragas and DeepEval contexts that name no document are placed in it (by="page"
    labels pages, "doc" documents): word for word, or by a search, whose rows come back as drafts.
    Without it such rows come back unlabelled, their contexts as evidence.

    This reads what is there; check_golden() says what is wrong with it."""
    from vectrixdb.evaluation.golden.anchors import Locator, is_deepeval, is_ragas
    from vectrixdb.evaluation.golden.foreign import foreign_problems, from_foreign, is_foreign, rows_of
    from vectrixdb.evaluation.golden.schema import is_template, schema_findings

    locator = Locator(collection, by) if collection is not None else None
    out = []
    for n, _text, row in rows_of(path):
        if isinstance(row, ValueError):
            raise BadInput(f"{path}, line {n}: {row}") from None
        field = unencodable(row)
        if field:  # refused as it is read, not when a file holding it is written
            raise BadInput(f"{path}, line {n}, {field}: {UNENCODABLE}")
        anchor = is_ragas(row) or is_deepeval(row)
        if is_foreign(row):
            problems = foreign_problems(row)
            if problems:
                raise BadInput(f"{path}, line {n}, {problems[0][0]}: {problems[0][1]}")
            row = from_foreign(row, locator)
        if is_bedrock(row):
            problems = bedrock_problems(row)
            if problems:
                raise BadInput(f"{path}, line {n}, {problems[0][0]}: {problems[0][1]}")
            out.append(from_bedrock(row, n))
        elif isinstance(row, dict):
            unlabelled = anchor and not row["expected"]  # until a collection places its contexts
            findings = [] if is_template(row) or unlabelled else schema_findings(row, n)
            if findings:
                raise BadInput(f"{path}, line {n}{', ' + findings[0].field if findings[0].field else ''}: "
                               f"{findings[0].message}")
            known = {k: row[k] for k in ("question", "reference", "expected", "id", "evidence", "hint", "draft", "turns")
                     if k in row}
            if known.get("id") is not None:
                known["id"] = str(known["id"])
            out.append(Question(**{"question": "", **known}, line=n))
        else:
            raise BadInput(f"{path}, line {n}: a line must be a JSON object, not {type(row).__name__}")
    return out


def read_golden(path: str, db=None) -> list[Question]:
    """The questions of a golden file that passes check_golden(); raises with every error if not."""
    from vectrixdb.evaluation.golden.schema import check_golden

    check = check_golden(path, db)
    if not check.ok or check.golden is None:
        raise BadInput(check.summary())
    return check.golden
