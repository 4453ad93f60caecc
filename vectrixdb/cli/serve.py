"""`vectrixdb serve` (the dashboard) and `vectrixdb export` (the certification PDF / offline HTML).

    vectrixdb serve [FOLDER] [--port 8000] [--host 127.0.0.1] [--host-name NAME ...] [--sla sla.yaml]
    vectrixdb export RUN --folder FOLDER --pdf out.pdf [--html out.html] [--sla sla.yaml]

Kept apart from cli/commands.py so the dashboard's dependencies (fastapi, uvicorn, jinja2, reportlab: the
`serve` extra) load only when these commands run. cli/commands.py adds them with one line:
`from vectrixdb.cli import serve; serve.register(app)`.
"""
from __future__ import annotations

from typing import Optional

import typer

from vectrixdb.errors import BadInput
from vectrixdb.extras import needs

def _require() -> None:
    """Fail before any work when the serve extra is missing (MissingExtra names it)."""
    with needs("serve"):
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import reportlab  # noqa: F401
        import uvicorn  # noqa: F401


def serve(folder: str = typer.Argument(".", help="folder of runs: a path, s3://bucket/prefix or a Blob address"),
          port: int = typer.Option(8000, help="port to listen on"),
          host: str = typer.Option("127.0.0.1", help="address to bind; only this machine can connect unless told"),
          host_name: Optional[list[str]] = typer.Option(
              None, "--host-name", help="a name the dashboard is reached by (repeat for more); requests naming "
                                        "any other host are refused, against DNS rebinding"),
          sla: Optional[str] = typer.Option(None, help="SLA thresholds, a JSON or YAML file (defaults when none)")):
    """Serve the dashboard (read only) over a folder of saved runs."""
    _require()
    _folder_of_runs(folder)
    with needs("serve"):
        import uvicorn

    from vectrixdb.server import create_app
    from vectrixdb.server.guard import allowed_hosts

    hosts = allowed_hosts(host, host_name or ())
    app = create_app(folder, sla=sla, hosts=hosts)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"vectrixdb dashboard for {folder} on http://{shown}:{port}/ (read only; Ctrl-C stops it)")
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"note: bound to {host}, so other machines can read these runs; it answers to the host names "
                   f"{', '.join(sorted(hosts))} (add others with --host-name)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _folder_of_runs(folder: str) -> None:
    """A local folder that is not there (a typo) or is a file is refused, naming it, rather than
    served as "0 of 0 runs". An object store's prefix is not checked: it exists once a run is saved."""
    from pathlib import Path

    from vectrixdb import io
    from vectrixdb.errors import NotFound

    if io.is_remote(folder):
        return
    where = Path(folder).expanduser()
    if not where.exists():
        raise NotFound(f"{folder}: no such folder; give the folder the runs were saved in (save_to=, --save-to)")
    if not where.is_dir():
        raise BadInput(f"{folder} is a file, not a folder of runs")


def export(run: str = typer.Argument(..., help="run id, as `vectrixdb runs list` or the dashboard shows it"),
           folder: str = typer.Option(..., help="the folder the run was saved in"),
           pdf: Optional[str] = typer.Option(None, help="write the certification PDF here (never over a file)"),
           html: Optional[str] = typer.Option(None, help="write the self-contained HTML copy here (never over a file)"),
           sla: Optional[str] = typer.Option(None, help="SLA thresholds, a JSON or YAML file (defaults when none)")):
    """Export a saved run as a certification PDF and/or a self-contained HTML file."""
    _require()
    from vectrixdb.export.files import export_run

    for path in export_run(run, folder, pdf=pdf, html=html, sla=sla):
        typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    """Add `serve` and `export` to the main `vectrixdb` command."""
    app.command("serve")(serve)
    app.command("export")(export)
