"""PDF pages to Markdown: the ".pdf" reader (PDFium by default, or pypdf; PyMuPDF is AGPL and is not used).

read_pdf reads with the reader $VECTRIXDB_PDF_READER names: pdfium (reading/pdfium.py, the default
since 2026-12-05: about a tenth of pypdf's CPU) or pypdf (this module's own reader, the default
before; every benchmark file names the reader it was measured with). Both give each page a layout
text and styled runs, which reading/layout.py turns into Markdown by the same rules (headings,
tables, two columns, bullets); scripts/reader_diff.py lists where their Markdown differs.
pypdf makes two passes over each page: its layout mode gives lines in reading order with the
spacing of the page kept, so words are not run together and columns of a table stay apart; a
plain pass with a visitor sees each text run with its font (the runs headings are found by).
A page with no text layer (a scan) is kept as an empty page, noted, with a score of 0.
A long PDF (PROCESSES_FROM pages or more) is read by one process per core, the pages dealt out to
them in turn, each sent the file's bytes over its stdin (no copy on disk); the pages come back in
order, the same as read in one process.
"""
from __future__ import annotations

import io
import logging
import os
import re
import warnings
from typing import Any

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.reading.document import Document
from vectrixdb.reading.layout import collapse, pages_document
from vectrixdb.extras import needs

def _styles(page) -> list[tuple[str, float, bool]]:
    runs: list[tuple[str, float, bool]] = []

    def visit(text, cm, tm, font, size):
        text = collapse(text)
        if text:
            scale = abs(tm[3] * cm[3]) or abs(tm[0] * cm[0]) or 1.0
            name = str(font.get("/BaseFont", "")) if hasattr(font, "get") else ""
            heavy = any(w in name.lower() for w in ("bold", "black", "heavy", "semibold"))
            runs.append((text, round(float(size or 0) * scale, 1), heavy))

    page.extract_text(visitor_text=visit)
    return runs


def _read_page(page) -> tuple[str, list[tuple[str, float, bool]]]:
    """A page's layout-mode text and its styled runs, parsing its content stream once.

    pypdf's public calls parse a page's content stream once per call, and parsing is most of what
    reading costs (about 60% of the two passes on uber_2021.pdf). Here the stream is parsed once:
    layout mode runs on its operations through the same four pypdf steps that
    `extract_text(extraction_mode="layout")` runs (with its defaults), and the visitor pass finds
    the same parsed stream on the page (pypdf reuses a content stream it is given). The output is
    the public calls' output exactly (tests/test_reading.py compares them); where pypdf's layout
    internals are not there (another pypdf), the public calls are used."""
    try:
        with needs("pdf"):
            from pypdf._text_extraction import _layout_mode
            from pypdf.generic import ArrayObject, ContentStream, NameObject, StreamObject
    except ImportError:  # pragma: no cover - another pypdf layout
        return page.extract_text(extraction_mode="layout") or "", _styles(page)
    contents = page.get("/Contents")
    contents = contents.get_object() if contents is not None else None
    if not isinstance(contents, (ArrayObject, StreamObject)) or not hasattr(page, "_layout_mode_fonts"):
        return page.extract_text(extraction_mode="layout") or "", _styles(page)
    stream = ContentStream(contents, page.pdf, "bytes")
    groups = _layout_mode.text_show_operations(iter(stream.operations), page._layout_mode_fonts(), True, None)
    text = ""
    if groups:
        text = _layout_mode.fixed_width_page(_layout_mode.y_coordinate_groups(groups, None),
                                             _layout_mode.fixed_char_width(groups, 1.25), True, 1)
    page[NameObject("/Contents")] = stream  # in memory only: the visitor pass reuses the parsed operations
    return text, _styles(page)


PROGRESS_FROM = 20  # a PDF of this many pages or more shows a bar as its pages are read (about 15 a second)
PROCESSES_FROM = 40  # a PDF of this many pages or more is read by one process per core (READ_PROCESSES_ENV)
READ_PROCESSES_ENV = "VECTRIXDB_READ_PROCESSES"  # how many processes read a long PDF; 1 reads it here
_PAGES_PER_PROCESS = 20  # fewer pages than this are not worth another process's start (~0.3 s)


def read_processes(pages: int) -> int:
    """How many processes read a PDF of `pages` pages: one below PROCESSES_FROM pages or in a frozen
    app (its sys.executable is the app, not Python), else $VECTRIXDB_READ_PROCESSES when set, else
    the cores this process may use, at most 8; never more than one per _PAGES_PER_PROCESS pages.
    Reading is pure Python, a core per process; pages are independent."""
    import sys

    if pages < PROCESSES_FROM or getattr(sys, "frozen", False) or not sys.executable:
        return 1
    chosen = os.environ.get(READ_PROCESSES_ENV, "").strip()
    if chosen:
        if not re.fullmatch(r"[0-9]+", chosen) or int(chosen) < 1:
            raise BadInput(f"{READ_PROCESSES_ENV}={chosen!r}: give a whole number of processes, 1 or more")
        wanted = int(chosen)
    else:
        wanted = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8)
    return max(1, min(wanted, pages // _PAGES_PER_PROCESS))


class ReadingProcessFailed(RuntimeError):
    """A reading process could not be set up (no interpreter, process or thread to be had, no room in
    the temporary folder for its error file), or ended without saying which page it could not read
    (killed, out of memory, vectrixdb not importable there): the file is then read in this process,
    with one RuntimeWarning. Never the PDF's fault, so never BadInput."""


#: The child's first lines: the parent's import path, exactly (so the same vectrixdb and pypdf, and
#: nothing from the child's working folder: it runs isolated, `python -I`), then reading._pages.
_CHILD = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
          "from vectrixdb.reading._pages import main; sys.exit(main(sys.argv[2:]))")


def _read_in_processes(data: bytes, count: int, processes: int, bar) -> list:
    """Every page's `_read_page`, in page order, from `processes` child interpreters; child k of n
    reads pages k, k + n, k + 2n, ... (a filing's heavy pages, its financial tables, come in runs,
    so dealt out like cards they fall evenly). Each child (vectrixdb.reading._pages) is sent the
    file's bytes over its stdin and sends each page back as it is read, so the bar moves.

    The bytes go over a pipe, not through a copy in the temporary folder: nothing is left on disk
    when this process is killed (kill -9 runs no cleanup), a full temporary folder does not stop a
    good PDF, and each child reads exactly the bytes this process checked (a file reopened by path
    could have changed). The pipe stays open while the child reads: this process's end closes when it
    ends, however it ends, and the child then stops at once (on Linux the kernel also kills it,
    PR_SET_PDEATHSIG), instead of reading on to the end of its page. (pypdf reads a file given by
    path into memory whole, so a child held a copy in memory before too.)

    Children are plain isolated interpreters (`python -I -c`, with this process's sys.path), not
    multiprocessing: a caller's script is never imported again in them (a script without
    `if __name__ == "__main__":` stays safe), a module in the working folder named like one of the
    standard library's is not run there, and no thread of torch's or OpenVINO's is forked. A page a
    child cannot read raises here what it raised there, and when several pages are bad, the first
    one's, as one process would: a child stops once the first bad page is known to come before its
    own next page. A child that cannot be set up (no interpreter, no process or thread to be had,
    no room for its error file) or fails otherwise raises ReadingProcessFailed. The output is the
    one-process output, page for page (tests/test_reading.py compares)."""
    import json
    import pickle
    import subprocess
    import sys
    import tempfile
    import threading

    shares = [list(range(k, count, processes)) for k in range(min(processes, count))]
    results: list[list] = [[] for _ in shares]
    bad: dict[int, BaseException] = {}  # page number -> what reading it raised
    broken: list[BaseException] = []  # children that failed without naming a page
    lock = threading.Lock()

    def collect(i: int, child: subprocess.Popen) -> None:
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write(data)  # the child reads len(data) bytes; its stdin stays open (the lifeline)
            child.stdin.flush()
            while len(results[i]) < len(shares[i]):
                page = shares[i][len(results[i])]
                with lock:
                    if bad and min(bad) < page:  # one process would have stopped before this page
                        return
                kind, value = pickle.load(child.stdout)
                with lock:
                    if kind == "error":
                        bad[page] = value
                        return
                    results[i].append(value)
                    if bar is not None:
                        bar.update(1)
        except Exception as exc:  # noqa: BLE001 - an end or a reply it cannot read: not the file's fault
            with lock:
                broken.append(ReadingProcessFailed(f"a reading process ended early ({type(exc).__name__}: {exc})"))

    children: list[tuple[subprocess.Popen, Any]] = []
    try:
        for k in range(len(shares)):
            try:
                errors = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child never blocks on it
            except OSError as exc:  # a full or unwritable temporary folder: not the file's fault
                broken.append(ReadingProcessFailed(f"no file for a reading process's errors ({type(exc).__name__}: "
                                                   f"{exc})"))
                break
            try:
                child = subprocess.Popen(
                    [sys.executable, "-I", "-c", _CHILD, json.dumps(sys.path), str(len(data)), str(k),
                     str(len(shares)), str(count)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
            except OSError as exc:  # no interpreter to start, no process to be had
                errors.close()
                broken.append(ReadingProcessFailed(f"could not start a reading process ({type(exc).__name__}: {exc})"))
                break
            children.append((child, errors))
        threads = [] if broken else [threading.Thread(target=collect, args=(i, child), daemon=True)
                                     for i, (child, _) in enumerate(children)]
        started = []
        for thread in threads:
            try:
                thread.start()
            except RuntimeError as exc:  # no thread to be had
                broken.append(ReadingProcessFailed(f"could not start a thread to read from a reading process ({exc})"))
                break
            started.append(thread)
        for thread in started:
            thread.join()
    finally:
        done = not broken and not bad and all(len(r) == len(share) for r, share in zip(results, shares))
        for child, errors in children:
            if not done:
                child.kill()
            child.wait()
            for pipe in (child.stdout, child.stdin):  # stdin only now: the child has ended
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:  # bytes that could not be written to a child that ended: nothing to keep
                    pass
            errors.seek(0)
            err = errors.read().decode(errors="replace").strip()
            errors.close()
            if done and child.returncode:
                said = err.splitlines()[-1] if err else f"exit status {child.returncode}"
                broken.append(ReadingProcessFailed(f"a reading process failed ({said})"))
    if broken:  # pages before a bad one may be unread: the caller reads the file here, which finds the first
        raise broken[0]
    if bad:  # the first bad page, as one process would raise it: the file's fault, not the machine's
        raise bad[min(bad)]
    pages: list = [None] * count
    for share, got in zip(shares, results):
        for i, page in zip(share, got):
            pages[i] = page
    return pages


READER_ENV = "VECTRIXDB_PDF_READER"  # which reader reads PDFs: READERS[0] (the default) or another of READERS
READERS = ("pdfium", "pypdf")


def pdf_reader() -> str:
    """The reader $VECTRIXDB_PDF_READER names: READERS[0] when it is unset or empty; any value not in
    READERS raises BadInput naming the variable and the allowed values."""
    chosen = os.environ.get(READER_ENV, "").strip()
    if not chosen:
        return READERS[0]
    if chosen not in READERS:
        raise BadInput(f"{READER_ENV}={chosen!r}: give one of {', '.join(READERS)} (unset reads with {READERS[0]})")
    return chosen


def read_pdf(data: bytes, *, doc_id: str, source: str | None = None) -> Document:
    """A PDF's pages as Markdown, read by the reader `pdf_reader()` names: `pdfium`
    (vectrixdb.reading.pdfium, the default: about a tenth of pypdf's CPU) or `pypdf`
    (read_pdf_pypdf: Markdown of the same shape; spacing, some headings and a few table cells differ)."""
    if pdf_reader() == "pypdf":
        return read_pdf_pypdf(data, doc_id=doc_id, source=source)
    from vectrixdb.reading.pdfium import read_pdf as read_pdf_pdfium

    return read_pdf_pdfium(data, doc_id=doc_id, source=source)


def read_pdf_pypdf(data: bytes, *, doc_id: str, source: str | None = None) -> Document:
    """A PDF read by pypdf: two passes per page (layout text, styled runs), in child processes for
    a long PDF; see the module's docstring."""
    with needs("pdf"):
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError

    where = source or doc_id
    if not data:
        raise BadInput(f"{where}: the file is empty (0 bytes)")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # e.g. lyft_2021.pdf's startxref warning
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BadInput(f"{where}: the PDF is encrypted; decrypt it first")
        from tqdm.auto import tqdm

        count = len(reader.pages)
        bar = None if count < PROGRESS_FROM else tqdm(
            total=count, desc=f"reading {where.rsplit('/', 1)[-1]}", unit="page", leave=False)
        processes, pages = read_processes(count), []
        try:
            if processes > 1:
                try:
                    pages = _read_in_processes(data, count, processes, bar)
                except ReadingProcessFailed as exc:
                    warnings.warn(f"{where}: reading in {processes} processes failed ({exc}); reading it in this "
                                  f"process instead (set {READ_PROCESSES_ENV}=1 to skip the attempt)",
                                  RuntimeWarning, stacklevel=3)
                    if bar is not None:
                        bar.reset()
            if not pages:
                for page in reader.pages:
                    pages.append(_read_page(page))
                    if bar is not None:
                        bar.update(1)
        finally:
            if bar is not None:
                bar.close()
    except BadInput:
        raise
    except PdfReadError as exc:
        raise BadInput(f"{where}: not a readable PDF ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on broken files (ValueError, KeyError, ...)
        raise BadInput(f"{where}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    if not pages:
        raise BadInput(f"{where}: the PDF has no pages")
    return pages_document(pages, doc_id, source)


registry.register("readers", ".pdf", read_pdf)
