"""`vectrixdb report`, `vectrixdb evaluate` (both a CI gate with --fail-under) and `vectrixdb runs`.

    vectrixdb report NAME --golden G [--by page] [--k 1 --k 5] [--json | --csv] [--fail-under recall@5=0.8]
    vectrixdb evaluate NAME --golden G [--fail-under ndcg@10=0.6]
    vectrixdb report --retriever my_rag:search --golden G          (an outside retriever instead of NAME:
    vectrixdb report --store chroma --store-path DIR --collection C --golden G [--model M]   cli/retriever.py)
    vectrixdb runs list FOLDER [--json] | show RUN --folder FOLDER | compare A B --folder FOLDER

Printed for people: aligned columns (evaluate: a row per setup with each figure's 95% interval;
runs list: a line per run with its headline figure); `--json` prints the same data for scripts.
A threshold names a figure the way the report does (`recall@5`, `ndcg@10`, `mrr`, `hit_rate@1`);
a figure under its threshold is printed by name and the command exits 1, so a pipeline can stop.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional

import typer

from vectrixdb.errors import BadInput, NotFound

FIGURE_NAME = re.compile(r"([a-z_]+)(?:@(\d+))?")  # recall@5, mrr: a family and an optional cut-off
runs_app = typer.Typer(help="Saved runs: list, show, compare.", no_args_is_help=True)


def figure(values: dict, name: str) -> float | None:
    """A report's figure by the name it is printed under: `recall@5`, `mrr`, `ndcg@10`."""
    match = FIGURE_NAME.fullmatch(name.strip().lower())
    if not match:
        raise BadInput(f"{name!r} is not a figure name like recall@5 or mrr")
    family, k = match[1], match[2]
    got = values.get(family)
    if k is None:
        if isinstance(got, dict):
            raise BadInput(f"{name!r} needs a cut-off, e.g. {family}@{max(got)}")
        return got
    if not isinstance(got, dict) or int(k) not in got:
        known = sorted(got) if isinstance(got, dict) else []
        raise BadInput(f"the report has no {name!r}" + (f"; it has k = {known}" if known else ""))
    return got[int(k)]


FIGURES = ("recall", "ndcg", "precision", "hit_rate", "mrr")


def thresholds(given: list[str], ks: list[int]) -> dict[str, float]:
    """--fail-under NAME=NUMBER items, checked before any search runs: a figure the report has
    (recall@k, ndcg@k, precision@k, hit_rate@k at one of the -k cut-offs, or mrr) and a number in [0, 1]."""
    out = {}
    for item in given:
        name, sep, value = item.partition("=")
        try:
            limit = float(value)
        except ValueError:
            limit = None
        if not sep or limit is None:
            raise BadInput(f"--fail-under takes NAME=NUMBER, e.g. recall@5=0.8, not {item!r}")
        match = FIGURE_NAME.fullmatch(name.strip().lower())
        if not match or match[1] not in FIGURES:
            raise BadInput(f"--fail-under: {name.strip()!r} is not a figure of the report; use one of "
                           f"{', '.join(f + '@K' for f in FIGURES[:-1])} or mrr")
        if (match[1] == "mrr") != (match[2] is None) or (match[2] is not None and int(match[2]) not in ks):
            raise BadInput(f"--fail-under: {name.strip()!r} is not measured: the cut-offs are -k "
                           f"{', '.join(map(str, ks))}" + ("; mrr takes no @K" if match[1] == "mrr" else ""))
        if not 0 <= limit <= 1:
            raise BadInput(f"--fail-under: {name.strip()} = {value} can never be met or never fail; every figure "
                           "lies in [0, 1]")
        out[name.strip()] = limit
    return out


def gate(values: dict, limits: dict[str, float]) -> list[str]:
    """The figures under their thresholds, as lines to print."""
    failed = []
    for name, limit in limits.items():
        got = figure(values, name)
        if got is None or got < limit:
            failed.append(f"{name} = {'undefined' if got is None else f'{got:.4f}'} is under {limit}")
    return failed


def _finish(values: dict, limits: dict[str, float]) -> None:
    failed = gate(values, limits)
    for line in failed:
        typer.secho(f"fail: {line}", fg="red", err=True)
    if failed:
        raise typer.Exit(1)


RETRIEVER_HELP = ("an outside retriever instead of NAME: module:function (importable from the current directory) or "
                  "path/to/file.py:function; the function takes (query) or (query, k)")
STORE_HELP = "a vector database's collection instead of NAME: chroma, lancedb, qdrant or postgres (with --collection)"
# the options that name an outside retriever, shared by `report` and `evaluate`
OUTSIDE = {
    "retriever": typer.Option(None, help=RETRIEVER_HELP),
    "store": typer.Option(None, help=STORE_HELP),
    "collection": typer.Option(None, help="--store's collection (Chroma, Qdrant) or table (LanceDB, PostgreSQL)"),
    "store_path": typer.Option(None, help="--store's folder (Chroma, LanceDB, Qdrant local mode)"),
    "store_url": typer.Option(None, help="--store's server or connection string"),
    "model": typer.Option(None, help="--store's query embedding model: a name, folder or route string (default: "
                                     "Chroma's own, PostgreSQL full-text, else vectrixdb's default)"),
    "store_option": typer.Option([], help="KEY=VALUE for --store's adapter, e.g. doc_field=source, page_field=page "
                                          "(repeatable)"),
}


def _target(name: str | None, path: Path | None, principal: list[str], open_collection, retriever: str | None,
            store: str | None, collection: str | None, store_path: str | None, store_url: str | None,
            model: str | None, store_option: list[str]):
    """The collection NAME, or the outside retriever --retriever or --store names (cli/retriever.py)."""
    from vectrixdb.cli.retriever import outside

    given = [w for w, v in (("NAME", name), ("--path", path), ("--as", principal)) if v]
    if given and (retriever is not None or store is not None):  # refused before any store is opened
        raise BadInput(f"{', '.join(given)}: for a vectrixdb collection; {'--retriever' if retriever else '--store'} "
                       "names the retriever measured")
    found = outside(retriever, store, collection=collection, path=store_path, url=store_url, model=model,
                    options=store_option)
    if found is not None:
        return found
    if name is None:
        raise BadInput("give the collection NAME to measure, or an outside retriever with --retriever "
                       "module:function or --store")
    return open_collection(name, path, principal)


def register(app: typer.Typer, open_collection) -> None:
    """Add report, evaluate and runs to the main app; open_collection(name, path, principal) opens one."""

    @app.command("report")
    def report_cmd(name: Optional[str] = typer.Argument(None, metavar="NAME", help="the collection (or --retriever / --store)"),
                   golden: str = typer.Option(..., help="golden file"),
                   by: Optional[str] = typer.Option(None, help="grain: doc, page, chunk or evidence (default: what "
                                                    "the labels name; page when a row names a page)"),
                   k: List[int] = typer.Option([1, 3, 5, 10], "--k", "-k", help="cut-off (repeat for several)"),
                   mode: Optional[str] = typer.Option(None, help="search mode: hybrid (the default), dense or "
                                                      "keyword; a collection's only"),
                   as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
                   as_csv: bool = typer.Option(False, "--csv", help="print the per-question table as CSV"),
                   fail_under: List[str] = typer.Option([], help="NAME=NUMBER, e.g. recall@5=0.8 (repeatable)"),
                   save_to: Optional[str] = typer.Option(None, help="folder, s3:// or Blob address for the run"),
                   run_name: Optional[str] = typer.Option(None, "--name", help="a name for the saved run"),
                   path: Optional[Path] = typer.Option(None, help="root folder of collections"),
                   principal: List[str] = typer.Option([], "--as", help="search as key=value (repeatable)"),
                   retriever: Optional[str] = OUTSIDE["retriever"], store: Optional[str] = OUTSIDE["store"],
                   collection: Optional[str] = OUTSIDE["collection"], store_path: Optional[str] = OUTSIDE["store_path"],
                   store_url: Optional[str] = OUTSIDE["store_url"], model: Optional[str] = OUTSIDE["model"],
                   store_option: List[str] = OUTSIDE["store_option"]):
        """The retrieval report of collection NAME (or an outside retriever) on a golden file, with its misses."""
        from vectrixdb.cli.paths import one_file
        from vectrixdb.evaluation import retrieval_report

        limits = thresholds(fail_under, sorted(set(k)))
        if as_json and as_csv:
            raise BadInput("--json and --csv each print the whole report: give one")
        golden = one_file(golden)
        if run_name is not None and save_to is None:
            raise BadInput("--name names a saved run: give --save-to too")
        db = _target(name, path, principal, open_collection, retriever, store, collection, store_path, store_url,
                     model, store_option)
        if mode is not None and (retriever is not None or store is not None):
            raise BadInput("--mode chooses how a vectrixdb collection is searched; an outside retriever searches its "
                           "own way")
        search = {"mode": mode} if mode is not None else {}  # the default mode is recorded all the same
        report = retrieval_report(db, golden, k=tuple(k), by=by, name=run_name, **search)
        _save(report, save_to, run_name)
        if as_json:
            typer.echo(report.to_json())
        elif as_csv:
            typer.echo(report.frame.to_csv() if report.frame is not None else "")
        else:
            typer.echo(report_text(report))
        _finish(report, limits)

    @app.command("evaluate")
    def evaluate_cmd(name: Optional[str] = typer.Argument(None, metavar="NAME", help="the collection (or --retriever / --store)"),
                     golden: str = typer.Option(..., help="golden file"),
                     by: Optional[str] = typer.Option(None, help="grain (default: what the labels name)"),
                     k: List[int] = typer.Option([1, 3, 5, 10], "--k", "-k", help="cut-off (repeat for several)"),
                     as_json: bool = typer.Option(False, "--json", help="print the table as JSON"),
                     fail_under: List[str] = typer.Option([], help="NAME=NUMBER for the best setup (repeatable)"),
                     save_to: Optional[str] = typer.Option(None, help="folder, s3:// or Blob address for the run"),
                     run_name: Optional[str] = typer.Option(None, "--name", help="a name for the saved run"),
                     path: Optional[Path] = typer.Option(None, help="root folder of collections"),
                     principal: List[str] = typer.Option([], "--as", help="search as key=value (repeatable)"),
                     retriever: Optional[str] = OUTSIDE["retriever"], store: Optional[str] = OUTSIDE["store"],
                     collection: Optional[str] = OUTSIDE["collection"], store_path: Optional[str] = OUTSIDE["store_path"],
                     store_url: Optional[str] = OUTSIDE["store_url"], model: Optional[str] = OUTSIDE["model"],
                     store_option: List[str] = OUTSIDE["store_option"]):
        """Every way collection NAME can be searched, side by side; the gate judges the best setup. An outside
        retriever (--retriever, --store) is one setup: the way it searches."""
        from vectrixdb.cli.paths import one_file
        from vectrixdb.evaluation import evaluate, retrieval_report

        limits = thresholds(fail_under, sorted(set(k)))
        golden = one_file(golden)
        if run_name is not None and save_to is None:
            raise BadInput("--name names a saved run: give --save-to too")
        db = _target(name, path, principal, open_collection, retriever, store, collection, store_path, store_url,
                     model, store_option)
        table = evaluate(db, golden, k=tuple(k), by=by, progress=False, name=run_name)
        _save(table, save_to, run_name)
        typer.echo(table.to_json() if as_json else evaluate_text(table))
        if limits and table["best"] is not None:
            best = table["best"]
            options = {"mode": best["mode"], **({"vectors": best["vectors"]} if best["vectors"] != "-" else {})}
            if retriever is not None or store is not None:
                options = {}  # the one setup an outside retriever has
            typer.echo(f"gate on the best setup: {options or best['mode']}")
            _finish(retrieval_report(db, golden, k=tuple(k), by=by, **options), limits)

    @runs_app.command("list")
    def runs_list(folder: str, kind: Optional[str] = typer.Option(None, help="only runs of this kind"),
                  as_json: bool = typer.Option(False, "--json", help="print list_runs' rows as JSON")):
        """Every saved run under FOLDER, newest first."""
        from vectrixdb import io
        from vectrixdb.evaluation import list_runs
        from vectrixdb.evaluation.runs.store import unregistered_runs

        if not io.is_remote(folder) and not Path(folder).expanduser().is_dir():
            raise NotFound(f"{folder}: " + ("is a file, not a folder of runs" if Path(folder).exists() else
                                            "no such folder"))
        frame = list_runs(folder, kind)
        hidden = [u for u in unregistered_runs(folder) if kind is None or u["kind"] == kind]
        if as_json:  # every column of list_runs, for scripts; what it cannot show goes to stderr
            typer.echo(frame.to_json(orient="records") if len(frame) else "[]")
        else:
            typer.echo(runs_text(frame) if len(frame) else
                       f"no runs{' of a registered kind' if hidden else ''} under {folder}")
        for u in hidden:
            typer.echo(u["note"], err=as_json)

    @runs_app.command("show")
    def runs_show(run: str, folder: str = typer.Option(..., help="the folder the runs were saved in"),
                  as_json: bool = typer.Option(False, "--json")):
        """One saved run."""
        from vectrixdb.evaluation import load_run

        report = load_run(folder, run)
        if as_json:
            typer.echo(report.to_json())
            return
        typer.echo("\n".join([repr(report), *interval_legend(report)]))
        typer.echo(f"status: {report.meta.get('status')}" + (f" ({report.meta['error']})" if report.meta.get("error") else ""))
        from vectrixdb.evaluation.retrieval.adapters import system_words

        if system_words(report.meta):  # what it measured, when the run recorded it
            typer.echo(f"system measured: {system_words(report.meta)}")
        if report.frame is not None:  # the per-question (or per-build) table, first 50 rows
            typer.echo(report.frame.head(50).to_string(max_colwidth=40)
                       + (f"\n... {len(report.frame) - 50} more rows (--json has them all)" if len(report.frame) > 50 else ""))

    @runs_app.command("compare")
    def runs_compare(a: str, b: str, folder: str = typer.Option(..., help="the folder the runs were saved in"),
                     as_json: bool = typer.Option(False, "--json")):
        """Pair runs A and B question by question: differences, intervals, paired tests."""
        from vectrixdb.evaluation import compare_runs

        report = compare_runs(a, b, folder=folder)
        typer.echo(report.to_json() if as_json else report.frame.to_string() + f"\n{report['rule']}")

    app.add_typer(runs_app, name="runs")


def _save(report, folder: str | None, name: str | None) -> None:
    """Save the run under `folder` with its --name (list_runs and the dashboard show it)."""
    if name is not None and folder is None:
        raise BadInput("--name names a saved run: give --save-to too")
    if folder is not None:
        run_id = report.save(folder)
        typer.secho(f"saved run {run_id} under {folder}", err=True)


def report_text(report) -> str:
    """A retrieval report for a terminal: the figures at each k, then the misses."""
    if report.get("recall") is None:
        return f"no figures: {report.get('reason')}"
    from vectrixdb.evaluation.golden.grain import Grain
    from vectrixdb.evaluation.retrieval.adapters import system_words

    ks = report["k"]
    ci = report.get("ci") or {}
    search = report.get("search") or {}
    how = ", ".join(f"{key}={value}" for key, value in search.items()) or system_words(report.meta) or \
        "the retriever given"
    lines = [f"{plural(report['questions'], 'question')} by {report['by']}{_grain_source(report)} "
             f"({report['unlabelled']} unlabelled); mrr@{report['depth']} {report['mrr']:.4f}; searched with {how}"]
    lines += cannot_fail_lines(report)
    lines.append(f"{'k':>4}  {'recall [95% CI]':>22}  {'ndcg [95% CI]':>22}  {'precision':>9}  {'hit_rate':>8}")
    for k in ks:
        cell = lambda family, k=k: _with_ci(report[family][k], (ci.get(family) or {}).get(k))  # noqa: E731
        lines.append(f"{k:>4}  {cell('recall'):>22}  {cell('ndcg'):>22}  {report['precision'][k]:>9.4f}  "
                     f"{report['hit_rate'][k]:>8.4f}")
    lines.append("[low, high]: 95% interval over questions (Wilson for 0/1 figures, studentized bootstrap for "
                 "graded ones)")
    for warning in report.get("warnings") or []:
        if not warning.startswith("cannot fail:"):  # shown above the figures
            lines.append(f"warning: {warning}")
    if report.get("misses"):
        lines.append(f"misses: {plural(len(report['misses']), 'question')} with no right result in the top {ks[-1]}")
    by_chunk = Grain.of(report["by"]).names_chunks  # a miss's results shown by chunk id, else by document and pages
    for miss in report.get("misses") or []:
        got = ", ".join(g.get("chunk_id") or g["doc_id"] if by_chunk else
                        f"{g['doc_id']} p.{','.join(map(str, g['pages']))}" for g in miss["got"])
        later = f"; first right at rank {miss['first_right_rank']}" if miss["first_right_rank"] else ""
        lines.append(f"miss {miss['id']}: {miss['question'][:70]!r} expected {', '.join(miss['expected'])}; "
                     f"got {got}{later}")
    return "\n".join(lines)


def interval_legend(report) -> list[str]:
    """The line that says what a run's `ci` brackets are, under the line that prints them; none
    when the run has no intervals. The level is the one the run recorded (an answer report records
    none: 95% unless its `confidence=` said otherwise)."""
    ci = report.get("ci")
    if not ci:
        return []
    given = ci.get("confidence") if isinstance(ci, dict) else None
    level = given if isinstance(given, float) else report.get("confidence")
    method = ci.get("method") if isinstance(ci, dict) else None
    how = f"{level:.0%} interval" if isinstance(level, float) else "interval at the run's level (95% unless set; not recorded)"
    return [f"ci [low, high]: {how} {method or 'over questions'}"]


def _grain_source(report) -> str:
    return " (from the labels)" if report.get("by_from", "asked") != "asked" else ""


def cannot_fail_lines(report) -> list[str]:
    """What makes a report's figures unable to come out low, above them, so nobody ships them."""
    return [f"CANNOT FAIL: {reason}. These figures say nothing about the retriever."
            for reason in report.get("cannot_fail") or []]


def aligned(header: list[str], rows: list[list[str]], right: set[int] | frozenset[int] = frozenset()) -> list[str]:
    """Rows of text cells padded into columns two spaces apart; columns in `right` align right
    (numbers), the rest left. The last column is not padded, so no line ends in spaces."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for row in [header] + rows:
        cells = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return lines


def evaluate_text(table) -> str:
    """evaluate's table for a terminal: a line saying what was measured (grain, k, questions, the
    interval), one aligned row per setup (mode, vectors, reranker, each figure with its interval,
    latency), then its warnings and its three picks."""
    frame = table.frame
    if frame is None:
        return f"no table: {table.get('reason')}"
    quality = next(c for c in frame.columns if c.startswith("ndcg@") and not c.endswith(("low", "high")))
    ks = table.get("k") or []
    lines = [f"{table.get('setups', len(frame))} search setups on {plural(table['questions'], 'question')} by "
             f"{table.get('by')}; k = {', '.join(map(str, ks))}; mrr to rank {table.get('depth')}; "
             "[low, high]: 95% interval over questions (Wilson for 0/1 figures, studentized bootstrap for graded "
             "ones); the best by {quality}".format(quality=quality)]
    lines += cannot_fail_lines(table)
    figures = [c for c in frame.columns if c not in ("mode", "vectors", "rerank", "median_ms", "p95_ms")
               and not str(c).endswith((" low", " high"))]
    header = ["mode", "vectors", "rerank"] + [f"{c} [95% CI]" if f"{c} low" in frame else c for c in figures] + \
             ["median ms", "p95 ms"]
    rows = []
    for _, row in frame.iterrows():
        cells = [str(row["mode"]), str(row["vectors"]), str(row["rerank"])]
        for c in figures:
            bounds = (row.get(f"{c} low"), row.get(f"{c} high"))
            known = all(b is not None and b == b for b in bounds)  # NaN: no interval
            cells.append(_with_ci(row[c], bounds if known else None, 3) if f"{c} low" in frame else f"{row[c]:.3f}")
        cells += [f"{row['median_ms']:.1f}", f"{row['p95_ms']:.1f}"]
        rows.append(cells)
    lines += aligned(header, rows, right=set(range(3, len(header))))
    lines += [f"warning: {w}" for w in table.get("warnings") or [] if not w.startswith("cannot fail:")]
    for pick, why in (("best", "highest quality"), ("fastest_close", "fastest within 0.01 of the best"),
                      ("best_per_ms", "most quality per millisecond")):
        row = table[pick]
        lines.append(f"{pick}: mode={row['mode']} vectors={row['vectors']} rerank={row['rerank']} "
                     f"({why}: {quality} {row[quality]:.4f}, median {row['median_ms']:.1f} ms)")
    return "\n".join(lines)


def headline_figure(row) -> str:
    """The one figure `runs list` shows for a run, as its kind declares it (Kind.cli; by default the
    first the run has of kinds.HEADLINE: a sweep's or a comparison's best in words; else accuracy,
    nDCG, recall, then set F1 from the finest grain); an unreadable run says why."""
    from vectrixdb.evaluation.runs.kinds import KINDS, first_headline

    if row.get("status") == "unreadable":
        return f"cannot be read: {_short(row.get('error') or '')}"
    kind = KINDS.get(row.get("kind"))
    return kind.cli_text(row) if kind else first_headline(row)


def runs_text(frame) -> str:
    """`runs list`: one aligned line per run (name, kind, status, headline figure, start time, id);
    a kind whose badge comes from its values (an evaluation's Retrieval, RAG) shows it beside its name."""
    from vectrixdb.evaluation.runs.kinds import KINDS

    rows = []
    for _, row in frame.iterrows():
        row = {k: v for k, v in row.items() if not (isinstance(v, float) and v != v)}  # NaN: not recorded
        kind = row.get("kind") or "?"
        if kind in KINDS and KINDS[kind].badge_from and row.get("type"):
            kind = f"{kind} ({row['type']})"
        started = str(row.get("started") or "—").replace("T", " ").rstrip("Z")
        rows.append([_short(row.get("name") or "—")[:32], kind, str(row.get("status")), headline_figure(row),
                     started, str(row.get("run_id"))])
    return "\n".join(aligned(["name", "kind", "status", "headline", "started (UTC)", "run id"], rows))


def _short(value) -> str:
    """A cell of `runs list`: numbers to 3 places, anything else cut to 40 characters."""
    if isinstance(value, float):
        return f"{value:.3f}"
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _with_ci(value: float, interval, places: int = 4) -> str:
    return f"{value:.{places}f} [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else f"{value:.{places}f}"
