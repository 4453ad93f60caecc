"""A saved run written out as one file: the certification PDF, or a self-contained HTML copy.

    vectrixdb export RUN --folder FOLDER --pdf out.pdf [--sla sla.yaml]
    vectrixdb export RUN --folder FOLDER --html out.html

What the files say is the presentation layer's (present/certificate.py: pdf_bytes, html_text, the
same the dashboard serves); this module only loads the run, draws its figures once for both files
and writes them, never over an existing file (io.write_new).
"""
from __future__ import annotations

from vectrixdb.errors import AlreadyExists, BadInput


def export_run(run_id: str, folder: str, *, pdf: str | None = None, html: str | None = None,
               sla: str | None = None) -> list[str]:
    """Write the PDF and/or HTML of a saved run; refuses a path that exists. Returns what it wrote."""
    from vectrixdb import io
    from vectrixdb.evaluation.runs.store import load_run
    from vectrixdb.present import certify
    from vectrixdb.present.certificate import html_text, pdf_bytes
    from vectrixdb.present.figures import run_figures

    if not pdf and not html:
        raise BadInput("say what to write: --pdf out.pdf and/or --html out.html")
    for path in (pdf, html):
        if path and io.exists(path):
            raise AlreadyExists(f"{path} already exists; it is never written over")
    report = load_run(folder, run_id)
    rules = certify.load_sla(sla)
    figures = run_figures(report)  # drawn once for both files
    written = []
    for path, make in ((pdf, lambda: pdf_bytes(report, sla=rules, figures=figures)),
                       (html, lambda: html_text(report, sla=rules, figures=figures))):
        if path:
            try:
                written.append(io.write_new(path, make()))
            except FileExistsError as exc:
                raise AlreadyExists(str(exc)) from None
    return written
