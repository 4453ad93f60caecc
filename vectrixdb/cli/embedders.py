"""`vectrixdb compare-embedders`: embedding models (and rerankers) compared on a collection's chunks, with cost.

Registered by commands.py's `_register_more` (`register(app, open_collection)`); the verb is
vectrixdb.evaluation.retrieval.embedders_compare.compare_embedders.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from vectrixdb.errors import BadInput


def prices_of(pairs: Optional[List[str]]) -> dict[str, dict[str, float]]:
    """{model: {"per_million_tokens": $}} from `--price MODEL=USD` options (the last `=` splits,
    so a route string with `=` in it still reads)."""
    out: dict[str, dict[str, float]] = {}
    for pair in pairs or []:
        model, sep, usd = pair.rpartition("=")
        try:
            value = float(usd)
        except ValueError:
            value = -1.0
        if not sep or not model.strip() or not value >= 0:
            raise BadInput(f"--price {pair!r}: give MODEL=USD_PER_MILLION_TOKENS, e.g. "
                           "--price http://127.0.0.1:8080/v1#nomic-embed-text=0.02")
        out[model.strip()] = {"per_million_tokens": value}
    return out


def register(app: typer.Typer, open_collection: Callable[[str, Optional[Path], Optional[List[str]]], Any]) -> None:
    @app.command("compare-embedders")
    def compare_embedders_cmd(name: str = typer.Argument(..., help="the collection whose chunks are embedded"),
                              golden: str = typer.Option(..., help="golden file"),
                              model: List[str] = typer.Option(..., help="an embedding model or route string "
                                                              "(repeat: one per candidate)"),
                              rerank: Optional[List[str]] = typer.Option(None, help="a reranker over the leading "
                                                                         "model's space (repeat for several)"),
                              price: Optional[List[str]] = typer.Option(None, help="MODEL=USD per million tokens "
                                                                        "(repeat); an unpriced route is 'not priced'"),
                              k: List[int] = typer.Option([1, 3, 5, 10], help="cut-offs (the largest decides)"),
                              by: Optional[str] = typer.Option(None, help="grain: doc, page, chunk or evidence "
                                                               "(default: the labels')"),
                              save_to: Optional[str] = typer.Option(None, help="folder, s3:// or Blob address "
                                                                    "for the run"),
                              run_name: Optional[str] = typer.Option(None, "--name", help="a name for the saved run"),
                              path: Optional[Path] = typer.Option(None, help="root folder of collections"),
                              as_json: bool = typer.Option(False, "--json", help="print the report as JSON")):
        """Embed the collection's chunks once per model (each into its own vector space, reused
        next time), score each on the golden questions at the labels' grain, test each against the
        leader (paired, Holm) and show embedding time, query p50/p95, index size and cost."""
        from vectrixdb.cli.paths import one_file
        from vectrixdb.evaluation.retrieval.embedders_compare import comparison_text, compare_embedders

        if run_name is not None and save_to is None:
            raise BadInput("--name names a saved run: give --save-to too")
        db = open_collection(name, path, None)
        report = compare_embedders(db, one_file(golden), list(model), k=k, by=by, prices=prices_of(price),
                                   rerankers=list(rerank or []), save_to=save_to, name=run_name)
        typer.echo(report.to_json() if as_json else comparison_text(report))
