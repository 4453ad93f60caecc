"""A child interpreter that reads some of a PDF's pages for reading.pdf._read_in_processes.

Started as `python -I -c <reading.pdf._CHILD> SYS_PATH SIZE K N COUNT`: it reads the file's SIZE
bytes from stdin, reads pages K, K + N, K + 2N, ... below COUNT (0-based) and writes one pickle per
page to stdout, ("page", what reading.pdf._read_page returns), in order; on a page that cannot be
read, one ("error", the exception), and it exits 1. Only the parent process talks to it, over its
own pipes.

It ends with its parent, however the parent ends (kill -9 too), rather than read on: the parent
keeps its end of stdin open until this process has ended, so an end of stdin means the parent is
gone, and a thread waiting for it ends the process at once; on Linux the kernel is also asked to
kill it when the parent ends (PR_SET_PDEATHSIG), which holds even while Python is busy in C code.
"""
from __future__ import annotations
from vectrixdb.extras import needs

import logging
import os
import pickle
import sys
import threading

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_GONE = 3  # the exit status when the parent went away


def _sendable(exc: Exception) -> Exception:
    """The exception itself when it comes back whole from a pickle, else a RuntimeError with its
    type and text (one holding a pypdf object, say, cannot be rebuilt without the file)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - anything that does not round-trip goes back as text
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _die_with_parent() -> None:
    """Ask the Linux kernel to kill this process when its parent ends (elsewhere, or where prctl is
    not there, the end of stdin does it: `_watch_parent`)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no libc to ask: stdin's end still stops it
        pass


def _receive(size: int) -> bytes:
    """The file's `size` bytes from stdin (read from the descriptor: no buffer of sys.stdin's is
    held, so the watching thread never keeps one locked at exit); ends the process if stdin ends first."""
    chunks, got = [], 0
    while got < size:
        chunk = os.read(0, min(size - got, 1 << 20))
        if not chunk:  # the parent went away before sending it all
            os._exit(_GONE)
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _watch_parent() -> None:
    """Wait on stdin, which the parent never writes to again and closes only once this process has
    ended: an end of it means the parent is gone, so this process ends now, not after its page."""
    while True:
        try:
            if not os.read(0, 1 << 16):
                break
        except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
            continue
        except OSError:
            break
    os._exit(_GONE)


def main(argv: list[str]) -> int:
    _die_with_parent()
    size, first, step, count = (int(a) for a in argv[:4])
    data = _receive(size)
    threading.Thread(target=_watch_parent, name="vectrixdb-reading-parent", daemon=True).start()

    import io

    with needs("pdf"):
        from pypdf import PdfReader

    from vectrixdb.reading.pdf import _read_page

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything else that prints goes to stderr, never into the pickles
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")  # the parent checked that the empty password opens it
        for i in range(first, count, step):
            pickle.dump(("page", _read_page(reader.pages[i])), out)
            out.flush()
    except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent, as read in one process
        pickle.dump(("error", _sendable(exc)), out)
        out.flush()
        return 1
    return 0
