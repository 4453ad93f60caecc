"""`vectrixdb golden write` and `vectrixdb golden audit`: draft questions with a model, and measure
how synthetic a question set is.

cli/commands.py wires them in with `register(golden_app, _open)`; errors are VectrixErrors, which the
command group prints as one line with exit status 1.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import typer

AS_HELP = "see only what this principal may: attribute=value, repeatable (e.g. --as group=staff)"


def _lines(path: str) -> list[str]:
    from vectrixdb import io
    from vectrixdb.cli.paths import one_file
    from vectrixdb.reading import decode

    path = one_file(path)
    return [line.strip() for line in decode(io.read_bytes(path), path).splitlines() if line.strip()]


def register(golden_app: typer.Typer, open_collection: Callable) -> None:
    """Add `golden write` and `golden audit` to the golden command group. open_collection(name,
    path, as_) opens an existing collection or a principal's view of it (cli._open)."""

    @golden_app.command("write")
    def golden_write(name: str,
                     out: str = typer.Option(..., help="golden file to write; must not exist"),
                     n: int = typer.Option(50, "-n", help="how many questions to draft"),
                     examples: Optional[str] = typer.Option(None, help="text file, one question people really ask a line"),
                     scenario: Optional[str] = typer.Option(None, help="who asks"),
                     task: Optional[str] = typer.Option(None, help="why they ask"),
                     cache: Optional[str] = typer.Option(None, help="answer cache file: a stopped run resumes, a repeat costs nothing"),
                     evolve: int = typer.Option(1, help="rewrites per question"),
                     as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                     path: Optional[Path] = typer.Option(None, help="root folder of collections")):
        """Draft questions from the collection's chunks with the chat model the settings name
        (VECTRIXDB_WRITER_URL + VECTRIXDB_WRITER_MODEL, or Azure OpenAI), every row a draft. The
        model is asked for one word first: when it does not answer, nothing is read."""
        from vectrixdb import io
        from vectrixdb.chat.writer import ChatWriter
        from vectrixdb.errors import AlreadyExists
        from vectrixdb.evaluation.writing.write import write_golden
        from vectrixdb.evaluation.writing.config import WritingConfig

        if io.exists(out):  # before opening anything or building a writer
            raise AlreadyExists(f"{out} already exists; it is never written over")
        db = open_collection(name, path, as_)
        asked = _lines(examples) if examples else []
        written = write_golden(db, out, n=n, writer=ChatWriter.from_environment(), examples=asked,
                               cache=cache, evolve=evolve,
                               config=WritingConfig(scenario=scenario, task=task, check_model=True))
        typer.echo(written.summary())

    @golden_app.command("audit")
    def golden_audit(name: str,
                     golden: str = typer.Option(..., help="the question set to audit (e.g. drafts.jsonl)"),
                     real: Optional[str] = typer.Option(None, help="real questions to set it beside"),
                     as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                     path: Optional[Path] = typer.Option(None, help="root folder of collections")):
        """Print how synthetic a question set is: overlap with its evidence, lengths, kinds,
        coverage and how easily each search finds it, beside real questions when given."""
        import json

        from vectrixdb.cli.paths import one_file
        from vectrixdb.evaluation.writing.audit import audit_golden

        report = audit_golden(one_file(golden), open_collection(name, path, as_), real=one_file(real) if real else None)
        typer.echo(json.dumps({"sets": report["sets"], "gap": report.get("gap"), "warnings": report["warnings"]},
                              indent=2))
