"""A child interpreter that reads some of a PDF's pages for reading.pdf._read_in_processes.

Started as `python -I -c <reading.pdf._CHILD> SYS_PATH FILE K N COUNT`: it reads pages K, K + N,
K + 2N, ... below COUNT (0-based) of FILE and writes one pickle per page to stdout, ("page", what
reading.pdf._read_page returns), in order; on a page that cannot be read, one ("error", the
exception), and it exits 1. Only the parent process talks to it, over its own pipe.
"""
from __future__ import annotations

import logging
import pickle
import sys


def _sendable(exc: Exception) -> Exception:
    """The exception itself when it comes back whole from a pickle, else a RuntimeError with its
    type and text (one holding a pypdf object, say, cannot be rebuilt without the file)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - anything that does not round-trip goes back as text
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    from pypdf import PdfReader

    from vectrixdb.reading.pdf import _read_page

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    path, first, step, count = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything else that prints goes to stderr, never into the pickles
    try:
        reader = PdfReader(path)
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
