"""The child processes that read a long PDF (reading.pdf._read_in_processes): they end with their
parent, however it ends, leave nothing in the temporary folder, and a machine that cannot set them
up (a full temporary folder) reads the file in one process with one warning, never a refusal of
the PDF."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import PDFS, require
from vectrixdb.reading import read
from vectrixdb.reading.pdf import READER_ENV


@pytest.fixture(autouse=True)
def pypdf_reader(monkeypatch):
    """Reading processes are the pypdf reader's (the default pdfium reader reads in one process)."""
    monkeypatch.setenv(READER_ENV, "pypdf")


def _slow_pdf(path, pages: int, slow: int, runs: int):
    """A PDF of `pages` pages (the pdflatex paper's, over and over), the first `slow` of them given a
    content stream of `runs` text runs (compressed), which pypdf takes many seconds to read."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DecodedStreamObject, NameObject

    source, writer = PdfReader(str(require(PDFS / "pdflatex-4-pages.pdf"))), PdfWriter()
    for i in range(pages):
        writer.add_page(source.pages[i % 4])
    for i in range(slow):
        stream = DecodedStreamObject()
        stream.set_data(b"BT /F1 10 Tf " + b"1 0 Td (a slow page) Tj " * runs + b"ET")
        writer.pages[i][NameObject("/Contents")] = writer._add_object(stream)
        writer.pages[i].compress_content_streams()
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, ended but not yet reaped by whoever adopted it, has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    """The pids of `pid`'s child processes (from /proc: each process's parent is in its stat)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(name))
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
    return found


RUNS = 150000  # text runs on each child's first page: some 30 s of reading here (100,000 took 19 s)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from /proc")
def test_a_parent_killed_with_sigkill_leaves_no_reading_process_and_no_file(tmp_path):
    """A script reading a long PDF of slow pages (seconds each) in 2 processes is killed with
    SIGKILL once its children are reading: within a few seconds neither child runs (they do not read
    on to the end of their page) and the temporary folder the script was given is empty (no copy of
    the PDF is left behind; none is made)."""
    from vectrixdb.reading import pdf

    path = _slow_pdf(tmp_path / "slow.pdf", pdf.PROCESSES_FROM, 2, RUNS)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    script = tmp_path / "read_it.py"
    script.write_text("import sys\nfrom vectrixdb.reading import read\nread(sys.argv[1])\n")
    env = {**os.environ, pdf.READ_PROCESSES_ENV: "2", "TMPDIR": str(temporary)}
    said = open(tmp_path / "stderr.txt", "wb")  # closed below; read if the script fails
    parent = subprocess.Popen([sys.executable, str(script), str(path)], env=env, stdout=subprocess.DEVNULL,
                              stderr=said)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(children) < 2:
            assert parent.poll() is None, (tmp_path / "stderr.txt").read_text()[-2000:]
            assert time.monotonic() < deadline, "the script started no reading processes"
            time.sleep(0.1)
            children = _children(parent.pid)
        time.sleep(3)  # they have the file and are inside their first, slow page
        assert all(_alive(pid) for pid in children)
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 8  # generous: they end at once; their first page takes far longer
        while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        running, left = [pid for pid in children if _alive(pid)], sorted(os.listdir(temporary))
        assert (running, left) == ([], []), "reading processes still running, files left in the temporary folder"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        said.close()
        for pid in children:  # the old code's children read on: end them here, not after the run
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("fault", ["full", "missing"])
def test_a_temporary_folder_that_cannot_be_used_leaves_a_good_pdf_read_here(tmp_path, monkeypatch, fault):
    """The temporary folder full (ENOSPC for anything created in it) or not there at all: setting up
    the reading processes is not the PDF's fault. One RuntimeWarning says reading in processes failed,
    and the file is read in this process, the same document; never BadInput naming the PDF."""
    import tempfile
    import warnings

    from tests.test_reading import _long_pdf
    from vectrixdb.reading import pdf

    path = _long_pdf(tmp_path / "long.pdf")
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "1")
    here = read(str(path))
    folder = tmp_path / ("full" if fault == "full" else "missing")
    if fault == "full":
        folder.mkdir()
        for name in ("open", "mkdir"):
            real = getattr(os, name)

            def refuse(target, *args, _real=real, **kwargs):
                if str(target).startswith(str(folder)):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))
                return _real(target, *args, **kwargs)

            monkeypatch.setattr(os, name, refuse)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "2")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = read(str(path))
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1 and "long.pdf: reading in 2 processes failed" in said[0], said
    assert "reading it in this process" in said[0]
    assert again.markdown == here.markdown and again.pages == here.pages
