"""check_golden: every way a golden file falls short of golden.schema.json, in one pass.

The rules are the published schema, applied with the jsonschema library, so an editor or a
pipeline that validates against golden.schema.json agrees with this check. On top of the schema,
what one line cannot say: an id or a question used twice, no question ready at all, Bedrock rows
still unlabelled, and, given a collection, labels naming what it does not hold.

Errors stop a run; notes do not (template rows waiting for a question, unchecked drafts, a page
label that a whole-document label of the same row makes redundant). A label is a document id,
`doc_id#page=N` or a chunk id `doc_id::n` (questions.py states the rule): a misspelt page anchor
(`#p=10`, `#Page=10`, `#page10`) is an error with or without a collection. Given a collection,
a label that names anything it does not hold exactly (a document in another case or unknown to
it, a page past the document's last, `page=10` without `#`) is an error with a did-you-mean
(label_check.py), since it would otherwise be scored as a silent miss; and each evidence quote
must be on the page(s) its row expects in the collection's kept Markdown (whitespace, case and
Markdown marks folded), since the evidence grain would otherwise score the row against words
that are not there.
Nothing in a file can crash the check: deep nesting, huge numbers, keys given twice, malformed
Bedrock rows are each a finding on their line.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from vectrixdb.evaluation.golden.foreign import foreign_row, is_foreign, rows_of
from vectrixdb.evaluation.golden.label_check import Finding  # defined below schema.py, handed out here too
from vectrixdb.evaluation.golden.questions import (UNENCODABLE, Question, anchor_problem, bedrock_problems, from_bedrock,
                                                   is_bedrock, loose_page, split_label, unencodable)
from vectrixdb.roles import Collection


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(resources.files("vectrixdb").joinpath("golden.schema.json").read_text(encoding="utf-8"))


@dataclass
class GoldenCheck:
    path: str
    findings: list[Finding] = field(default_factory=list)
    ready: int = 0  # rows with a question and a label above grade 0, errors on their line or not
    outside: int = 0  # ready rows with a label the collection given to the check does not hold
    rows: int = 0
    golden: list[Question] | None = None
    ready_lines: list[int] = field(default_factory=list)  # the lines of those `ready` rows

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def notes(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "note"]

    def counts(self) -> dict[str, int]:
        """Each row in one place: ready (a question and a label, no error on its line; `drafts` of
        them not yet checked by a person), with errors, or not scored (a template row, no grade
        above 0, no label yet), so the three add up to `rows`."""
        wrong = {f.line for f in self.errors if f.line}
        ready = set(self.ready_lines) - wrong
        drafts = {f.line for f in self.notes if f.field == "draft"} & ready
        return {"rows": self.rows, "ready": len(ready), "drafts": len(drafts), "with_errors": len(wrong),
                "not_scored": max(self.rows - len(ready) - len(wrong), 0)}

    def summary(self) -> str:
        """The row counts, every finding on a line of its own, then what to do about the errors."""
        n = self.counts()
        drafts = f" ({n['drafts']} still {'a draft' if n['drafts'] == 1 else 'drafts'})" if n["drafts"] else ""
        outside = (f" ({self.outside} of them scorable rows naming a document or page the collection does not hold)"
                   if self.outside else "")
        head = (f"{self.path}: {n['rows']} row{'' if n['rows'] == 1 else 's'}: {n['ready']} ready{drafts}, {n['with_errors']} with errors{outside}, "
                f"{n['not_scored']} not scored; {len(self.errors)} error(s), {len(self.notes)} note(s)")
        tail = [] if self.ok else ["fix the errors before a run"]
        return "\n".join([head, *(f"  {f}" for f in self.findings), *tail])

    def __repr__(self) -> str:
        return f"GoldenCheck(ok={self.ok}, ready={self.ready}, errors={len(self.errors)}, notes={len(self.notes)})"


def is_template(row: dict) -> bool:
    """A row whose fields are all empty: a skeleton waiting for somebody to fill it in."""
    return all(v in ("", None, [], {}) for k, v in row.items() if k not in ("id", "draft"))


def schema_findings(row: dict, line: int, held: Any = None) -> list[Finding]:
    """The schema's findings on one row; `held` (label_check.Held) lets a misspelt label's
    did-you-mean name what the collection holds."""
    from jsonschema import Draft202012Validator

    known = list(schema()["properties"])
    out = []
    for err in Draft202012Validator(schema()).iter_errors(row):
        where = err.path[0] if err.path else None
        if where == "turns" and len(err.path) > 1:  # one turn: named by its place, from 1
            out.append(Finding(line, "turns", "error", _turn_message(err)))
        elif err.validator == "additionalProperties":
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
            out.append(Finding(line, "expected", "error", _label_message(err.instance, held)))
        elif where == "expected" and err.validator == "oneOf":
            out.append(Finding(line, "expected", "error", _expected_message(row["expected"], held)))
        else:
            out.append(Finding(line, str(where) if where is not None else None, "error", err.message))
    return out


def _turn_message(err: Any) -> str:
    """What is wrong with one turn of a row's `turns` (err.path is turns, its index, maybe a field)."""
    n, part = err.path[1] + 1, (err.path[2] if len(err.path) > 2 else None)
    if part == "role":
        why = f"role must be user, assistant or tool, not {err.instance!r}"
    elif part == "content":
        why = "content is empty" if isinstance(err.instance, str) else \
            f"content must be the text said, a string, not {type(err.instance).__name__}"
    elif err.validator == "required":
        why = f"{err.message.split(chr(39))[1]!r} is missing (a turn is an object with role and content)"
    elif err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - {"role", "content"})
        why = f"unknown field(s) {', '.join(map(repr, extra))}: a turn holds role and content only"
    else:
        why = f"must be an object with role and content, not {type(err.instance).__name__}"
    return f"turn {n}: {why}"


def _expected_message(value: Any, held: Any = None) -> str:
    """Why `expected` fails its two shapes (a list of labels, or an object of label: grade)."""
    import re

    label = re.compile(schema()["properties"]["expected"]["oneOf"][0]["items"]["pattern"])
    if isinstance(value, list):
        if not value:
            return "'expected' is empty"
        bad = [v for v in value if not isinstance(v, str) or not label.match(v)]
        return _label_message(bad[0], held)
    if isinstance(value, dict):
        if not value:
            return "'expected' is empty"
        for name, grade in value.items():
            if not label.match(name):
                return _label_message(name, held)
            if isinstance(grade, bool) or not isinstance(grade, (int, float)) or grade < 0:
                return f"the grade of {name!r} must be a number from 0, not {grade!r}"
    return f"must be a list of document ids or an object of id: grade, not {type(value).__name__}"


def _label_message(label: Any, held: Any = None) -> str:
    problem = anchor_problem(label) if isinstance(label, str) else None
    if problem and held is not None:
        from vectrixdb.evaluation.golden.label_check import meant

        guess = meant(label, held)
        if guess:  # the did-you-mean names what the collection holds (`Uber_2021.pdf#p=10` -> `uber_2021.pdf#page=10`)
            problem = problem.split("; did you mean")[0] + f"; did you mean {guess!r}?"
    if problem:
        return problem
    return f"{label!r} is not a document id, doc_id#page=N with N from 1, or a chunk id doc_id::n"


def check_golden(path: str, db: Collection | None = None) -> GoldenCheck:
    """Check a golden file (a path, s3:// or Blob address) and, given a collection, its labels."""
    check = GoldenCheck(str(path))
    if db is not None:
        from vectrixdb.evaluation.golden.label_check import Held

        held = Held(db)
    else:
        held = None
    questions: list[Question] = []
    ids: dict[str, int] = {}
    texts: dict[str, int] = {}
    bedrock = 0
    undecodable: list[tuple[int, str]] = []
    objects, first = 0, None
    for line, text, row in rows_of(str(path), undecodable):
        check.rows += 1
        first = first if first is not None else text
        if isinstance(row, ValueError):
            check.findings.append(Finding(line, None, "error", str(row)))
            continue
        objects += isinstance(row, dict)
        field = unencodable(row)
        if field:
            check.findings.append(Finding(line, field, "error", UNENCODABLE))
            continue
        duplicates = getattr(row, "duplicates", ())
        check.findings += [Finding(line, key, "error", f"{key!r} is given twice in this row; only the last would count")
                           for key in duplicates]
        if is_foreign(row):  # Vecta, ragas, DeepEval (foreign.py, anchors.py); contexts placed through db
            row, problems = foreign_row(row, held)
            check.findings += [Finding(line, where, "error", message) for where, message in problems]
            if problems:
                continue
        if is_bedrock(row):
            bedrock += 1
            problems = bedrock_problems(row)
            check.findings += [Finding(line, where, "error", message) for where, message in problems]
            if not problems:
                questions.append(from_bedrock(row, line))
            continue
        if not isinstance(row, dict):
            check.findings.append(Finding(line, None, "error", f"a line must be a JSON object, not {type(row).__name__}"))
            continue
        if is_template(row):
            check.findings.append(Finding(line, "question", "note", "template row still waiting for a question"))
            continue
        found = schema_findings(row, line, held)
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
            turns = (row.get("turns") or ()) if not any(f.field == "turns" for f in found) else ()
            key = Question(question, turns=turns).folded()  # a conversation: its turns and question together
            if key in texts:
                check.findings.append(Finding(line, "question", "error", f"the same question is on line {texts[key]}"))
            else:
                texts[key] = line
        if not found:
            q = Question(row["question"], row.get("reference"), row["expected"], None if qid is None else str(qid),
                         row.get("evidence", ()), row.get("hint"), bool(row.get("draft", False)), line=line,
                         turns=row.get("turns") or ())
            check.findings += _row_notes(q)
            questions.append(q)
    if bedrock:
        check.findings.append(Finding(None, None, "error",
                                      f"{bedrock} row(s) are a Bedrock prompt dataset with no document labels; label "
                                      "them first (suggest_expected, or `vectrixdb golden label`)"))
    check.findings += [Finding(line, None, "error", message) for line, message in undecodable]
    check.rows += len(undecodable)
    if check.rows > 3 and not objects:  # a PDF, a CSV: one finding, not one a line
        begins = f"; its first line begins {first[:40]!r}" if first else ""
        check.findings = [Finding(None, None, "error", f"none of its {check.rows} lines is a JSON object: a golden file "
                                                       f"is JSON Lines, one object a line{begins}")]
        return check
    ready = [q for q in questions if q.labelled]
    check.ready, check.ready_lines = len(ready), [q.line for q in ready if q.line]
    if check.rows and not ready and not bedrock:
        why = ("every row's expected entries have grade 0" if questions else "none has a question and expected")
        check.findings.append(Finding(None, None, "error", f"no question is ready: {why}"))
    elif not check.rows:
        check.findings.append(Finding(None, None, "error", "the file has no rows"))
    if db is not None:
        from vectrixdb.evaluation.golden.label_check import evidence_findings, label_problems

        # every row's labels, grade 0 included: a label judged not relevant names what the collection holds too
        unheld = label_problems(questions, db, held)
        outside = [Finding(p.question.line, "expected", "error", p.message) for p in unheld]
        check.outside = len({f.line for f in outside} & {q.line for q in ready})
        check.findings += outside
        check.findings += evidence_findings(ready, db)
    else:  # `page=10` without `#` may be part of an id; without a collection it is a note, not an error
        check.findings += [Finding(q.line, "expected", "note", f"{label!r} is read as a document id; if it means page "
                                   f"{meant[1]} of {meant[0]!r}, write {meant[0] + '#page=' + str(meant[1])!r}")
                           for q in ready for label in q.expected if (meant := loose_page(label))]
        check.findings += _case_notes(ready)
    check.findings.sort(key=lambda f: (f.line or 0, f.severity != "error"))
    if check.ok:  # every valid row: one with no grade above 0 is reported as unlabelled, never dropped unsaid
        check.golden = questions
    return check


def _case_notes(questions: list[Question]) -> list[Finding]:
    """Without a collection: a document id that differs from another row's only in case is most
    likely a typo (ids are matched exactly, so it would never be found)."""
    from collections import Counter

    from vectrixdb.evaluation.golden.questions import label_document

    uses = Counter(label_document(label) for q in questions for label in q.expected)
    usual: dict[str, str] = {}
    for doc, _ in uses.most_common():
        usual.setdefault(doc.casefold(), doc)
    return [Finding(q.line, "expected", "note", f"{doc!r} differs only in case from {usual[doc.casefold()]!r}, which "
                                                f"{uses[usual[doc.casefold()]]} label(s) use; ids are matched exactly")
            for q in questions for doc in dict.fromkeys(map(label_document, q.expected))
            if usual[doc.casefold()] != doc]


def _row_notes(q: Question) -> list[Finding]:
    """What one row says that cannot count: no relevant grade, page labels under a whole document;
    and the error of a label judged both relevant and not (label_check.grade_conflicts)."""
    from vectrixdb.evaluation.golden.label_check import grade_conflicts

    out = [Finding(q.line, "expected", "error", message) for message in grade_conflicts(q)]
    if not q.labelled:
        out.append(Finding(q.line, "expected", "note", "no entry has a grade above 0, so the row cannot be scored"))
    whole = {label for label in q.expected if split_label(label)[1] is None}
    for label in q.expected:
        doc, page = split_label(label)
        if page is not None and doc in whole and not grade_conflicts(q):
            out.append(Finding(q.line, "expected", "note",
                               f"{label!r} adds nothing: the row also expects the whole document {doc!r}, which any "
                               "of its pages satisfies; the row is scored on the whole document"))
    return out
