"""`vectrixdb golden import` and `vectrixdb golden export`: a way in from ragas, DeepEval and Vecta
test sets, and a way back out to ragas and DeepEval files.

cli/commands.py wires them in with `register(golden_app, _open)`; errors are VectrixErrors, which the
command group prints as one line with exit status 1. How each field is read and written is in
evaluation/golden/foreign.py (Vecta), evaluation/golden/anchors.py and evaluation/golden/anchors_write.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import typer

AS_HELP = "see only what this principal may: attribute=value, repeatable (e.g. --as group=staff)"
FORMATS = ("ragas", "deepeval")


def format_of(path: str) -> str:
    """What wrote a file, by its first row: ragas, DeepEval, Vecta, Bedrock or vectrixdb."""
    from vectrixdb.evaluation.golden.anchors import is_deepeval, is_ragas
    from vectrixdb.evaluation.golden.foreign import is_vecta, rows_of
    from vectrixdb.evaluation.golden.questions import is_bedrock

    for _, _, row in rows_of(path):
        for name, test in (("a ragas test set", is_ragas), ("DeepEval goldens", is_deepeval),
                           ("a Vecta benchmark", is_vecta), ("a Bedrock prompt dataset", is_bedrock)):
            if test(row):
                return name
        break
    return "a vectrixdb golden file"


def register(golden_app: typer.Typer, open_collection: Callable) -> None:
    """Add `golden import` and `golden export` to the golden command group. open_collection(name,
    path, as_) opens an existing collection or a principal's view of it (cli._open)."""

    @golden_app.command("import")
    def golden_import(file: str = typer.Argument(..., help="a ragas test set, DeepEval goldens or a Vecta benchmark"),
                      out: str = typer.Option(..., help="golden file to write; must not exist"),
                      collection: Optional[str] = typer.Option(None, help="place contexts that name no document in "
                                                                          "this collection"),
                      by: str = typer.Option("page", help="what a placed context is labelled with: page or doc"),
                      as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                      path: Optional[Path] = typer.Option(None, help="root folder of collections")):
        """Read another tool's test set as golden rows and write them as a golden file. Rows whose
        labels were found by a search are drafts ("draft": true); rows nothing labels are left out
        (the summary says how to label them). Never writes over --out."""
        from vectrixdb import io
        from vectrixdb.cli.paths import one_file
        from vectrixdb.errors import AlreadyExists, BadInput
        from vectrixdb.evaluation.golden.files import load_questions
        from vectrixdb.evaluation.golden.questions import save_questions

        if io.exists(out):
            raise AlreadyExists(f"{out} already exists; it may hold checked labels, so it is never written over")
        file = one_file(file)
        if as_ and not collection:
            raise BadInput("--as needs --collection: a principal sees a collection")
        db = open_collection(collection, path, as_) if collection else None
        kind = format_of(file)
        rows = load_questions(file, db, by=by)
        kept = [q for q in rows if q.expected]
        if not kept:
            raise BadInput(f"{file} ({kind}): none of its {len(rows)} row(s) names a document" +
                           ("" if db is not None else "; give --collection to place their contexts in it"))
        save_questions(kept, out)
        drafts = sum(q.draft for q in kept)
        lines = [f"wrote {len(kept)} row(s) of {len(rows)} from {kind} to {out}"]
        if drafts:
            lines.append(f"{drafts} {'is a draft' if drafts == 1 else 'are drafts'}: labels found by a search, to be "
                         f"checked (`vectrixdb golden check {out} --collection {collection or 'NAME'}`, or the "
                         "LabelReview widget)")
        left = len(rows) - len(kept)
        if left:
            lines.append(f"{left} row(s) name no document and were left out: " +
                         ("give --collection to place their contexts" if db is None else
                          f"label them with `vectrixdb golden label NAME --questions {file} --out FILE`"))
        typer.echo("\n".join(lines))

    @golden_app.command("export")
    def golden_export(golden: str = typer.Argument(..., help="golden file (or any file import reads)"),
                      to: str = typer.Option(..., help="ragas (JSON Lines) or deepeval (one JSON array)"),
                      out: str = typer.Option(..., help="file to write; must not exist"),
                      collection: Optional[str] = typer.Option(None, help="take contexts for rows without evidence "
                                                                          "from this collection"),
                      as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                      path: Optional[Path] = typer.Option(None, help="root folder of collections")):
        """Write golden rows as a ragas test set or DeepEval goldens, which those tools load with
        their own loaders; vectrixdb's own fields ride along, so the file reads back exactly."""
        from vectrixdb.cli.paths import one_file
        from vectrixdb.errors import BadInput
        from vectrixdb.evaluation.golden.anchors_write import save_deepeval, save_ragas
        from vectrixdb.evaluation.golden.files import load_questions

        if to not in FORMATS:
            raise BadInput(f"--to is ragas or deepeval, not {to!r}")
        golden = one_file(golden)
        if as_ and not collection:
            raise BadInput("--as needs --collection: a principal sees a collection")
        db = open_collection(collection, path, as_) if collection else None
        rows = load_questions(golden)
        (save_ragas if to == "ragas" else save_deepeval)(rows, out, db)
        graded = sum(1 for q in rows if q.grades)
        typer.echo(f"wrote {len(rows)} row(s) as {'a ragas test set' if to == 'ragas' else 'DeepEval goldens'} to {out}")
        if graded and to == "ragas":
            typer.echo(f"note: ragas' reference_context_ids hold no grades: {graded} graded row(s) list their relevant "
                       "labels there, the grades stay in the vectrixdb field")
