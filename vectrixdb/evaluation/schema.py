"""check_golden: every way a golden file falls short of golden.schema.json, in one pass.

The rules are the published schema, applied with the jsonschema library, so an editor or a
pipeline that validates against golden.schema.json agrees with this check. On top of the schema,
what one line cannot say: an id or a question used twice, no question ready at all, Bedrock rows
still unlabelled, and, given a collection, documents or pages it does not hold.

Errors stop a run; notes do not (template rows waiting for a question, unchecked drafts,
documents the collection lacks).
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from vectrixdb.evaluation.golden import Question, from_bedrock, is_bedrock, iter_rows, split_label


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(resources.files("vectrixdb").joinpath("golden.schema.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Finding:
    line: int | None
    field: str | None
    severity: str  # "error" or "note"
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{self.severity}: {where}{f', {self.field}' if self.field else ''}: {self.message}"


@dataclass
class GoldenCheck:
    path: str
    findings: list[Finding] = field(default_factory=list)
    ready: int = 0
    rows: int = 0
    golden: list[Question] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "note"]

    def summary(self) -> str:
        head = (f"{self.path}: {self.rows} rows, {self.ready} ready, {len(self.errors)} error(s), "
                f"{len(self.notes)} note(s){'' if self.ok else ' - fix the errors before a run'}")
        return "\n".join([head, *(f"  {f}" for f in self.findings)])

    def __repr__(self) -> str:
        return f"GoldenCheck(ok={self.ok}, ready={self.ready}, errors={len(self.errors)}, notes={len(self.notes)})"


def _is_template(row: dict) -> bool:
    """A row whose fields are all empty: a skeleton waiting for somebody to fill it in."""
    return all(v in ("", None, [], {}) for k, v in row.items() if k not in ("id", "draft"))


def _schema_findings(row: dict, line: int) -> list[Finding]:
    from jsonschema import Draft202012Validator

    known = list(schema()["properties"])
    out = []
    for err in Draft202012Validator(schema()).iter_errors(row):
        where = err.path[0] if err.path else None
        if err.validator == "additionalProperties":
            for extra in sorted(set(row) - set(known)):
                guess = difflib.get_close_matches(extra, known, n=1, cutoff=0.6)
                hint = f"; did you mean {guess[0]!r}?" if guess else f"; the fields are {', '.join(known)}"
                out.append(Finding(line, extra, "error", f"unknown field {extra!r}{hint}"))
        elif err.validator == "required":
            missing = err.message.split("'")[1]
            out.append(Finding(line, missing, "error", f"{missing!r} is missing"))
        elif err.validator in ("minItems", "minLength") or (err.validator == "pattern" and where in ("question", "evidence")):
            out.append(Finding(line, where, "error", f"{where!r} is empty"))
        elif err.validator == "pattern" and where == "expected":
            out.append(Finding(line, "expected", "error",
                               f"{err.instance!r} is not a document id or doc_id#page=N with N from 1"))
        else:
            out.append(Finding(line, str(where) if where is not None else None, "error", err.message))
    return out


def check_golden(path: str, db: Any = None) -> GoldenCheck:
    """Check a golden file (a path, s3:// or Blob address) and, given a collection, its labels."""
    check = GoldenCheck(str(path))
    questions: list[Question] = []
    ids: dict[str, int] = {}
    texts: dict[str, int] = {}
    bedrock = 0
    undecodable: list[tuple[int, str]] = []
    for line, text in iter_rows(str(path), undecodable):
        check.rows += 1
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            check.findings.append(Finding(line, None, "error", f"not JSON ({exc.msg} at column {exc.colno})"))
            continue
        if is_bedrock(row):
            bedrock += 1
            questions.append(from_bedrock(row, line))
            continue
        if not isinstance(row, dict):
            check.findings.append(Finding(line, None, "error", f"a line must be a JSON object, not {type(row).__name__}"))
            continue
        if _is_template(row):
            check.findings.append(Finding(line, "question", "note", "template row still waiting for a question"))
            continue
        found = _schema_findings(row, line)
        check.findings += found
        if row.get("draft") is True:
            check.findings.append(Finding(line, "draft", "note", "draft: not yet checked by a person"))
        qid = row.get("id")
        if qid is not None and str(qid) in ids:
            check.findings.append(Finding(line, "id", "error", f"id {qid!r} is already used on line {ids[str(qid)]}"))
        elif qid is not None:
            ids[str(qid)] = line
        question = row.get("question")
        if isinstance(question, str) and question.strip():
            key = " ".join(question.casefold().split())
            if key in texts:
                check.findings.append(Finding(line, "question", "error", f"the same question is on line {texts[key]}"))
            else:
                texts[key] = line
        if not found:
            questions.append(Question(row["question"], row.get("reference"), row["expected"],
                                      None if qid is None else str(qid), row.get("evidence", ()), row.get("hint"),
                                      bool(row.get("draft", False)), line=line))
    if bedrock:
        check.findings.append(Finding(None, None, "error",
                                      f"{bedrock} row(s) are a Bedrock prompt dataset with no document labels; label "
                                      "them first (suggest_expected, or `vectrixdb golden label`)"))
    check.findings += [Finding(line, None, "error", message) for line, message in undecodable]
    check.rows += len(undecodable)
    ready = [q for q in questions if q.labelled]
    check.ready = len(ready)
    if check.rows and not ready and not bedrock:
        check.findings.append(Finding(None, None, "error", "no question is ready: none has a question and expected"))
    elif not check.rows:
        check.findings.append(Finding(None, None, "error", "the file has no rows"))
    if db is not None:
        check.findings += _collection_notes(ready, db)
    check.findings.sort(key=lambda f: (f.line or 0, f.severity != "error"))
    if check.ok:
        check.golden = ready
    return check


def _collection_notes(questions: list[Question], db) -> list[Finding]:
    pages = {d["doc_id"]: None for d in db.documents()}
    out = []
    for q in questions:
        for label in q.expected:
            doc, page = split_label(label)
            if doc not in pages:
                out.append(Finding(q.line, "expected", "note", f"{doc!r} is not in collection {db.name!r}"))
                continue
            if page is not None:
                if pages[doc] is None:
                    pages[doc] = len(db.catalog.pages(doc))
                if page > pages[doc]:
                    out.append(Finding(q.line, "expected", "note", f"{doc!r} has {pages[doc]} pages, not page {page}"))
    return out
