"""The `vectrixdb` command: add documents, search, inspect, and check golden files."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(help="vectrixdb: an embedded store and the tools to measure retrieval on it.",
                  no_args_is_help=True, add_completion=False)
golden_app = typer.Typer(help="Golden question files: check, label, cut-off.", no_args_is_help=True)
app.add_typer(golden_app, name="golden")


def _open(name: str, path: Optional[Path]):
    from vectrixdb.collection import Vectrix

    return Vectrix(name, path=path)


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg="red", err=True)
    raise typer.Exit(1)


@app.command()
def add(name: str, files: List[str] = typer.Argument(..., help="files (text, Markdown, PDF) or s3:// / Blob addresses"),
        chunk: str = typer.Option("recursive", help="chunking technique"),
        size: int = typer.Option(1000, help="chunk size in characters"),
        overlap: Optional[int] = typer.Option(None, help="characters carried over (default a fifth of size)"),
        embed_heading: bool = typer.Option(False, help="embed the heading path in front of each chunk"),
        path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Add documents to collection NAME (created when missing); a file's doc id is its name."""
    try:
        db = _open(name, path)
        ids = db.add_documents(files, chunk=chunk, chunk_size=size, overlap=overlap, embed_heading=embed_heading)
    except (ValueError, FileNotFoundError, TypeError, IsADirectoryError) as exc:
        _fail(str(exc))
    info = db.info()
    typer.echo(f"added {len(ids)} document(s) to {name}: {info['documents']} documents, {info['chunks']} chunks")


@app.command()
def search(name: str, query: str, k: int = typer.Option(5, "-k", help="how many hits"),
           mode: str = typer.Option("dense", help="dense, keyword or hybrid"),
           vectors: Optional[str] = typer.Option(None, help="vector space"),
           as_json: bool = typer.Option(False, "--json", help="print JSON lines"),
           path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Search collection NAME."""
    try:
        hits = _open(name, path).search(query, k, mode=mode, vectors=vectors)
    except ValueError as exc:
        _fail(str(exc))
    for h in hits:
        if as_json:
            typer.echo(json.dumps(h.to_dict()))
        else:
            where = f"{h.doc_id} p.{','.join(map(str, h.pages))}"
            typer.echo(f"{h.rank:>2}. {h.score:.3f}  {where}  {' '.join(h.text.split())[:100]}")


@app.command()
def info(name: str, path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Show what collection NAME holds and how it was built."""
    typer.echo(json.dumps(_open(name, path).info(), indent=2))


@app.command("sweep")
def sweep_cmd(files: List[str] = typer.Argument(..., help="the original documents"),
              golden: str = typer.Option(..., help="golden file"),
              chunk: List[str] = typer.Option(["recursive"], help="technique (repeat for several)"),
              size: List[int] = typer.Option([1000], help="chunk size (repeat for several)"),
              heading: List[bool] = typer.Option([False], help="embed heading path (repeat: --heading --no-heading)"),
              mode: List[str] = typer.Option(["dense"], help="search mode (repeat for several)"),
              by: str = typer.Option("doc", help="grain: doc or page")):
    """Build every chunking setting in a scratch folder and rank them on the golden questions."""
    from vectrixdb.evaluation.golden import read_golden
    from vectrixdb.evaluation.sweep import sweep, sweep_markdown

    try:
        report = sweep(files, read_golden(golden), chunk=chunk, chunk_size=size, embed_heading=heading,
                       search=[{"mode": m} for m in mode], by=by)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(sweep_markdown(report))


@app.command("compare-chunking")
def compare_chunking_cmd(files: List[str] = typer.Argument(..., help="the original documents"),
                         golden: str = typer.Option(..., help="golden file"),
                         budget: int = typer.Option(6000, help="characters handed over per question"),
                         technique: Optional[List[str]] = typer.Option(None, help="limit to these techniques"),
                         size: Optional[List[int]] = typer.Option(None, help="limit to these sizes"),
                         save_to: Optional[str] = typer.Option(None, help="folder, s3:// or Blob address for the run")):
    """Compare the chunking techniques with the same character budget, with exact tests."""
    from vectrixdb.evaluation.chunking import compare_chunking

    try:
        report = compare_chunking(files, golden, budget=budget, techniques=technique or None, sizes=size or None,
                                  save_to=save_to)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    if report.get("best") is None:
        _fail(report["reason"])
    for t in report["techniques"]:
        p = "best" if t["p_value"] is None else f"p={t['p_value']:.3f}{' (tie)' if t['tie'] else ''}"
        typer.echo(f"{t['name']:<14} {t['right']:>4}/{t['of']}  size {t['chunk_size']:<5} heading "
                   f"{'yes' if t['embed_heading'] else 'no ':<4} {t['chunks']:>6} chunks  {p}")
    cost = report["cost"]
    typer.echo(f"{cost['builds']} builds, {cost['chunks_made']} chunks made, {cost['texts_embedded']} texts embedded, "
               f"{cost['texts_reused']} reused" + (f"; saved as run {report['run_id']}" if save_to else ""))


@golden_app.command("check")
def golden_check(file: str, collection: Optional[str] = typer.Option(None, help="check labels against this collection"),
                 path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Print every finding in a golden file; exit 1 when there is an error."""
    from vectrixdb.evaluation.schema import check_golden

    try:
        check = check_golden(file, _open(collection, path) if collection else None)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(check.summary())
    raise typer.Exit(0 if check.ok else 1)


@golden_app.command("label")
def golden_label(name: str, questions: str = typer.Option(..., help="questions to label (Bedrock or golden JSONL)"),
                 out: str = typer.Option(..., help="golden file to write; must not exist"),
                 k: int = typer.Option(3, "-k", help="documents to propose per question"),
                 by: str = typer.Option("doc", help="doc or page"),
                 path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Propose expected documents for each question (searching with its reference answer) and write
    them as drafts ("draft": true) for a person to check. Never writes over --out."""
    from dataclasses import replace

    from vectrixdb import io
    from vectrixdb.evaluation.golden import load_questions, save_questions
    from vectrixdb.evaluation.suggest import question_key, suggest_expected

    if io.exists(out):
        _fail(f"{out} already exists; it may hold checked labels, so it is never written over")
    try:
        rows = load_questions(questions)
        proposals = suggest_expected(_open(name, path), rows, k=k, by=by)
        labelled = [replace(q, id=question_key(q, i), expected=proposals[question_key(q, i)], draft=True)
                    for i, q in enumerate(rows)]
        save_questions([q for q in labelled if q.expected], out)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        _fail(str(exc))
    empty = sum(not q.expected for q in labelled)
    typer.echo(f"wrote {len(labelled) - empty} draft row(s) to {out}" + (f"; {empty} found nothing and were left out" if empty else ""))


@golden_app.command("cutoff")
def golden_cutoff(name: str, golden: str = typer.Option(..., help="golden file"),
                  unanswerable: Optional[str] = typer.Option(None, help="text file, one question a line, that the documents do not answer"),
                  mode: str = typer.Option("dense", help="search mode"),
                  path: Optional[Path] = typer.Option(None, help="root folder of collections")):
    """Measure the score below which to decline answering, and print the table."""
    from vectrixdb import io
    from vectrixdb.evaluation.cutoff import answer_cutoff, table_text
    from vectrixdb.evaluation.golden import read_golden
    from vectrixdb.reading import decode

    try:
        db = _open(name, path)
        questions = read_golden(golden, db)
        outside = []
        if unanswerable:
            outside = [line.strip() for line in decode(io.read_bytes(unanswerable), unanswerable).splitlines() if line.strip()]
        found = answer_cutoff(db, questions, outside, mode=mode)
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(table_text(found))


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
