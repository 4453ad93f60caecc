"""The `vectrixdb` command: add documents, search, inspect, and check golden files.

Errors: every command runs inside one handler (`_Commands.invoke`). A VectrixError is a user's
error: its message on stderr as `error: ...` (a line per finding) and the exit status of its kind,
by EXIT_CODES (shown in --help). Anything else is a bug and keeps its traceback. A sub-command
group added with `app.add_typer` runs inside the same handler.

Reading commands (search, info, golden check --collection, golden label, golden cutoff) never
create a collection; `add` does. `--as attribute=value` (repeatable; a repeated attribute means a
list of values) runs a reading command as that principal, seeing only what it may see.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, List, Optional, TypeGuard

os.environ.setdefault("TYPER_USE_RICH", "0")  # plain help: importing rich for it took ~1 s of every cold start
import typer
from typer.core import TyperGroup

import vectrixdb
from vectrixdb.errors import (AlreadyExists, BadInput, ChecksumMismatch, Corrupt, IOFailure, MissingExtra,
                              NotFound, Refused, Unsupported, VectrixError)

# Exit status by error kind, the first that matches (more specific kinds first). 0: done; 1: a
# check or gate ran and failed (golden check findings, a figure under --fail-under); 2 is also click's
# status for a wrong option.
EXIT_CODES: tuple[tuple[type[VectrixError], int, str], ...] = (
    (ChecksumMismatch, 5, "a file's checksum is not the expected one"),
    (BadInput, 2, "an argument, file or row is wrong"),
    (Unsupported, 2, "asked of a part that cannot do it"),
    (NotFound, 3, "a collection, document, file or run is not there"),
    (AlreadyExists, 4, "a file that is never written over exists"),
    (Corrupt, 5, "a file the library owns is damaged"),
    (Refused, 6, "a chat model or object store said no"),
    (MissingExtra, 8, "an optional dependency is not installed"),
    (IOFailure, 9, "a file could not be written or read (a full disk, no permission)"),
    (VectrixError, 7, "any other error vectrixdb raised on purpose"),
)


def user_error(exc: BaseException) -> TypeGuard[VectrixError]:
    """A user's error (one line, its exit status) rather than a bug (a traceback)."""
    return isinstance(exc, VectrixError)


def exit_code(exc: VectrixError) -> int:
    """The exit status of an error's kind (EXIT_CODES)."""
    return next(code for kind, code, _ in EXIT_CODES if isinstance(exc, kind))


class _Commands(TyperGroup):
    """The root command group: the one place where errors become messages."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]  # typer hands its own Context, a click one
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if not user_error(exc):
                raise
            lines = [" ".join(line.split()) for line in str(exc).strip().splitlines()]  # a check's findings, a line each
            typer.secho("error: " + "\n".join(line for line in lines if line), fg="red", err=True)
            raise typer.Exit(exit_code(exc)) from None


HELP = {"help_option_names": ["-h", "--help"]}
EXITS = "Exit status: 0 done; 1 a check or gate failed; " + "; ".join(
    f"{code} {kind.__name__}: {what}" for kind, code, what in sorted(EXIT_CODES, key=lambda e: e[1])) + "."
app = typer.Typer(cls=_Commands, help="vectrixdb: an embedded store and the tools to measure retrieval on it.",
                  epilog=EXITS,
                  no_args_is_help=True, add_completion=False, context_settings=HELP)
golden_app = typer.Typer(help="Golden question files: check, label, cut-off, write, audit.", no_args_is_help=True,
                         context_settings=HELP)
app.add_typer(golden_app, name="golden")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vectrixdb {vectrixdb.__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """vectrixdb: an embedded store and the tools to measure retrieval on it."""

AS_HELP = "see only what this principal may: attribute=value, repeatable (e.g. --as group=staff)"
PATH_HELP = "root folder of collections"


def principal(pairs: Optional[List[str]]) -> dict | None:
    """{attribute: [values]} from `--as key=value` options; None when there are none (the owner)."""
    if not pairs:
        return None
    out: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"--as {pair!r}: give attribute=value, e.g. --as group=staff")
        out.setdefault(key.strip(), []).append(value)
    return out


def _open(name: str, path: Optional[Path], as_: Optional[List[str]] = None):
    """An existing collection (NotFound when missing: reading never creates), or a principal's view of it."""
    from vectrixdb.collection import Vectrix

    db = Vectrix(name, path=path)
    db.catalog  # noqa: B018 - raises NotFound now rather than half-way through a command
    who = principal(as_)
    return db if who is None else db.as_principal(who)


@app.command()
def add(name: str, files: List[str] = typer.Argument(..., help="files (text, Markdown, PDF) or s3:// / Blob addresses"),
        chunk: str = typer.Option("recursive", help="chunking technique"),
        size: int = typer.Option(1000, help="chunk size in characters"),
        overlap: Optional[int] = typer.Option(None, help="characters carried over (default a fifth of size)"),
        embed_heading: bool = typer.Option(False, help="embed the heading path in front of each chunk"),
        path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Add documents to collection NAME (created when missing); a file's doc id is its name.
    Ctrl-C stops it with exit status 130 and a line saying whether anything was added (the batch is
    one transaction: stopped before its commit, nothing is); the texts embedded by then are cached."""
    from vectrixdb import io
    from vectrixdb.cli.paths import files as matched
    from vectrixdb.collection import Vectrix

    files = matched(files)  # a quoted pattern, or one the shell found nothing for: `no file matches`
    db = Vectrix(name, path=path)
    before = _generation(name, path)
    sources = [f if io.is_remote(f) else Path(f) for f in files]  # each argument is a file, never text
    try:
        ids = db.add_documents(sources, chunk=chunk, chunk_size=size, overlap=overlap, embed_heading=embed_heading)
    except KeyboardInterrupt:
        if _generation(name, path) == before:
            typer.secho(f"interrupted: nothing was added to {name} (the batch is one transaction); the texts embedded "
                        "so far are cached, so running it again starts from them", fg="red", err=True)
        else:
            typer.secho(f"interrupted after {name} changed (the batch, or another writer's): see `vectrixdb info "
                        f"{name}`", fg="red", err=True)
        raise typer.Exit(130) from None
    info = db.info()
    typer.echo(f"added {len(ids)} document(s) to {name}: {info['documents']} documents, {info['chunks']} chunks")


def _generation(name: str, path: Optional[Path]) -> int | None:
    """The collection's generation (it moves with every commit), None when there is no collection."""
    from vectrixdb.collection import Vectrix

    db = Vectrix(name, path=path)
    return db.catalog.generation() if db.exists else None


@app.command()
def search(name: str, query: str, k: int = typer.Option(5, "-k", help="how many hits"),
           mode: str = typer.Option("hybrid", help="hybrid (the default), dense or keyword"),
           vectors: Optional[str] = typer.Option(None, help="vector space"),
           as_json: bool = typer.Option(False, "--json", help="print JSON lines"),
           as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
           path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Search collection NAME."""
    hits = _open(name, path, as_).search(query, k, mode=mode, vectors=vectors)
    for h in hits:
        if as_json:
            typer.echo(json.dumps(h.to_dict()))
        else:
            where = f"{h.doc_id} p.{','.join(map(str, h.pages))}"
            typer.echo(f"{h.rank:>2}. {h.score:.3f}  {where}  {' '.join(h.text.split())[:100]}")


@app.command()
def info(name: str, as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
         path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Show what collection NAME holds (or what a principal sees of it) and how it was built."""
    typer.echo(json.dumps(_open(name, path, as_).info(), indent=2))


@app.command("sweep")
def sweep_cmd(files: List[str] = typer.Argument(..., help="the original documents"),
              golden: str = typer.Option(..., help="golden file"),
              chunk: List[str] = typer.Option(["recursive"], help="technique (repeat for several)"),
              size: List[int] = typer.Option([1000], help="chunk size (repeat for several)"),
              heading: Optional[bool] = typer.Option(None, "--heading/--no-heading",
                                                     help="embed the heading path, or not; leave out to build both"),
              mode: List[str] = typer.Option(["hybrid"], help="search mode: hybrid, dense or keyword (repeat for several)"),
              by: str = typer.Option("doc", help="grain: doc, page, chunk or evidence"),
              as_json: bool = typer.Option(False, "--json", help="print the report as JSON")):
    """Build every chunking setting in a scratch folder and rank them on the golden questions."""
    from vectrixdb.cli.paths import files as matched, one_file
    from vectrixdb.evaluation.retrieval.sweep import sweep, sweep_markdown

    files, golden = matched(files), one_file(golden)
    report = sweep(files, golden, chunk=chunk, chunk_size=size, embed_heading=[False, True] if heading is None else
                   [heading], search=[{"mode": m} for m in mode], by=by)
    typer.echo(report.to_json() if as_json else "\n".join([sweep_markdown(report)] + [
        f"warning: {w}" for w in report.get("warnings") or []]))


@app.command("compare-chunking")
def compare_chunking_cmd(files: List[str] = typer.Argument(..., help="the original documents"),
                         golden: str = typer.Option(..., help="golden file"),
                         budget: int = typer.Option(6000, help="characters handed over per question"),
                         technique: Optional[List[str]] = typer.Option(None, help="limit to these techniques"),
                         size: Optional[List[int]] = typer.Option(None, help="limit to these sizes"),
                         headings: Optional[bool] = typer.Option(None, "--headings/--no-headings",
                                                                 help="embed the heading path, or not; leave out for both"),
                         chat: bool = typer.Option(False, "--chat", help="answer and judge with the chat model the "
                                                   "settings name (VECTRIXDB_WRITER_* or AZURE_OPENAI_*): answered "
                                                   "right decides, and the model-backed builds are made too"),
                         llm_cuts: Optional[bool] = typer.Option(None, "--llm-cuts/--no-llm-cuts",
                                                                 help="the model's cut points (default: with --chat)"),
                         notes: Optional[bool] = typer.Option(None, "--notes/--no-notes",
                                                              help="a model's note before each chunk (default: with --chat)"),
                         late: Optional[bool] = typer.Option(None, "--late/--no-late",
                                                             help="late chunking (default: with --chat, when the "
                                                                  "embedding model pools the mean)"),
                         cache: Optional[str] = typer.Option(None, help="answer cache file for the chat model: a "
                                                                        "rerun costs nothing"),
                         save_to: Optional[str] = typer.Option(None, help="folder, s3:// or Blob address for the run"),
                         run_name: Optional[str] = typer.Option(None, "--name", help="a name for the saved run"),
                         as_json: bool = typer.Option(False, "--json", help="print the report as JSON")):
    """Compare the chunking techniques with the same character budget, with exact tests. A chat
    model (--chat, --llm-cuts, --notes) is asked for one word before any document is read."""
    from vectrixdb.cli.paths import files as matched, one_file
    from vectrixdb.evaluation.chunking.compare import compare_chunking
    from vectrixdb.evaluation.chunking.config import CompareConfig

    files, golden = matched(files), one_file(golden)
    if run_name is not None and save_to is None:
        raise BadInput("--name names a saved run: give --save-to too")
    writer = None
    if chat or llm_cuts or notes:
        from vectrixdb.chat.writer import ChatWriter
        from vectrixdb.evaluation.generation.model_ready import check_answers

        writer = ChatWriter.from_environment(cache=cache)
        check_answers(writer, "before a single document was read")
    elif cache is not None:
        raise BadInput("--cache keeps the chat model's answers: give --chat, --llm-cuts or --notes too")
    from vectrixdb.chunk_models import context_writer, llm_cutter

    model_built: dict[str, Any] = {name: False if given is False else make(writer) if given and writer else None
                   for name, given, make in (("cut_with", llm_cuts, llm_cutter), ("context_with", notes, context_writer))}
    report = compare_chunking(files, golden, budget=budget, techniques=technique or None, sizes=size or None,
                              headings=None if headings is None else [headings], chat=writer if chat else None,
                              save_to=save_to, config=CompareConfig(late=late, name=run_name, **model_built))
    if report.get("best") is None:
        raise VectrixError(report["reason"])
    if as_json:
        typer.echo(report.to_json())
        return
    typer.echo(comparison_text(report))


def comparison_text(report) -> str:
    """Every build, then each technique's best build against the best one, then the cost."""
    decided = report.get("decided_by", "found")
    lines = [f"{'technique':<14} {'size':>5}  heading  {'found':>6}" + ("  right" if "right" in report.frame else "")
             + f"  {'chunks':>7}"]
    for row in report.frame.sort_values(["technique", "chunk_size", "embed_heading"]).itertuples():
        right = f"  {row.right:>5}" if "right" in report.frame else ""
        lines.append(f"{row.technique:<14} {row.chunk_size:>5}  {'yes' if row.embed_heading else 'no':<7}  "
                     f"{row.found:>6}{right}  {row.chunks:>7}")
    lines.append(f"found: questions whose evidence quotes (without evidence: an expected page or document) are in the "
                 f"{report['budget']:,} characters handed over, best hits first")
    if "right" in report.frame:
        lines.append("right: questions the chat model answered right from those characters alone (judged against "
                     "the reference)")
    lines.append(f"\neach technique's best build ({decided} decides; of {report['questions']} questions):")
    for t in report["techniques"]:
        if t["p_value"] is None:
            verdict = "best"
        elif t["tie"]:
            verdict = f"tied with the best (p={t['p_value']:.3f}: the gap could be luck)"
        else:
            verdict = f"behind the best (p={t['p_value']:.3f})"
        lines.append(f"  {t['name']:<14} {t['right']:>4}/{t['of']}  size {t['chunk_size']:<5} heading "
                     f"{'yes' if t['embed_heading'] else 'no ':<4} {t['chunks']:>6} chunks  {verdict}")
    cost = report["cost"]
    lines.append(f"{cost['builds']} builds, {cost['chunks_made']} chunks made, {cost['unique_texts']} distinct texts: "
                 f"{cost['texts_embedded']} embedded now, {cost['texts_reused']} from the cache or repeated; "
                 f"{cost['questions_embedded']} questions embedded"
                 + (f"; saved as run {report['run_id']}" if report.get("run_id") else ""))
    lines += [f"not built: {s['name']} ({s['why']})" for s in report.get("skipped") or []]
    return "\n".join(lines)


@golden_app.command("check")
def golden_check(file: str, collection: Optional[str] = typer.Option(None, help="check labels against this collection"),
                 as_json: bool = typer.Option(False, "--json", help="print the findings as JSON"),
                 as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                 path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Print every finding in a golden file; exit 1 when there is an error."""
    from vectrixdb.cli.paths import one_file
    from vectrixdb.evaluation.golden.schema import check_golden

    if as_ and not collection:
        raise BadInput("--as needs --collection: a principal sees a collection")
    check = check_golden(one_file(file), _open(collection, path, as_) if collection else None)
    if as_json:
        typer.echo(json.dumps({"path": check.path, "ok": check.ok, "rows": check.rows, "ready": check.ready,
                               "outside": check.outside, "counts": check.counts(),
                               "findings": [f.__dict__ for f in check.findings]}, indent=2))
    else:
        typer.echo(check.summary())
    raise typer.Exit(0 if check.ok else 1)


@golden_app.command("label")
def golden_label(name: str, questions: str = typer.Option(..., help="questions to label (Bedrock or golden JSONL)"),
                 out: str = typer.Option(..., help="golden file to write; must not exist"),
                 k: int = typer.Option(3, "-k", help="documents to propose per question"),
                 by: str = typer.Option("doc", help="doc or page"),
                 as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                 path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Propose expected documents for each question (searching with the question and its reference
    answer as one text, hybrid) and write them as drafts ("draft": true) for a person to check.
    Never writes over --out."""
    from dataclasses import replace

    from vectrixdb import io
    from vectrixdb.cli.paths import one_file
    from vectrixdb.evaluation.golden.files import load_questions
    from vectrixdb.evaluation.golden.questions import save_questions
    from vectrixdb.evaluation.golden.suggest import suggest_expected

    if io.exists(out):
        raise AlreadyExists(f"{out} already exists; it may hold checked labels, so it is never written over")
    rows = load_questions(one_file(questions))
    proposals = suggest_expected(_open(name, path, as_), rows, k=k, by=by)
    labelled = [replace(q, id=q.key(), expected=tuple(proposals[q.key()]), draft=True) for q in rows]
    save_questions([q for q in labelled if q.expected], out)
    empty = sum(not q.expected for q in labelled)
    typer.echo(f"wrote {len(labelled) - empty} draft row(s) to {out}" + (f"; {empty} found nothing and were left out" if empty else ""))


@golden_app.command("cutoff")
def golden_cutoff(name: str, golden: str = typer.Option(..., help="golden file"),
                  unanswerable: Optional[str] = typer.Option(None, help="text file, one question a line, that the documents do not answer"),
                  mode: str = typer.Option("dense", help="search mode: dense or keyword (hybrid's scores are ranks)"),
                  by: str = typer.Option("page", help="what makes a top result an answer: page (the labels as "
                                                     "given) or doc (any page of an expected document)"),
                  as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
                  as_: Optional[List[str]] = typer.Option(None, "--as", help=AS_HELP),
                  path: Optional[Path] = typer.Option(None, help=PATH_HELP)):
    """Measure the score below which to decline answering, and print the table."""
    from vectrixdb import io
    from vectrixdb.cli.paths import one_file
    from vectrixdb.evaluation.retrieval.cutoff import answer_cutoff, table_text
    from vectrixdb.reading import decode

    golden = one_file(golden)
    db = _open(name, path, as_)
    outside = []
    if unanswerable:
        unanswerable = one_file(unanswerable)
        outside = [line.strip() for line in decode(io.read_bytes(unanswerable), unanswerable).splitlines() if line.strip()]
    found = answer_cutoff(db, golden, outside, mode=mode, by=by)
    typer.echo(found.to_json() if as_json else table_text(found))


def _register_more() -> None:
    """Commands that live in their own modules: report/evaluate/runs, serve/export, the chat model's check."""
    from vectrixdb.cli import evaluate as cli_eval, golden as cli_golden, serve as cli_serve, write as cli_write
    from vectrixdb.cli import embedders as cli_embedders
    from vectrixdb.cli.writer import writer_app

    cli_eval.register(app, lambda name, path, as_: _open(name, path, as_))
    cli_write.register(golden_app, lambda name, path, as_: _open(name, path, as_))
    cli_golden.register(golden_app, lambda name, path, as_: _open(name, path, as_))
    cli_serve.register(app)
    cli_embedders.register(app, lambda name, path, as_: _open(name, path, as_))
    app.add_typer(writer_app, name="writer")


_register_more()


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
