"""A child interpreter that reads a run of a PDF's pages for reading.pdf._read_in_processes.

stdin: a pickle of (the file's bytes, the 0-based numbers of the pages to read). stdout: one pickle per page,
("page", what reading.pdf._read_page returns), in order; on a page that cannot be read, one
("error", the exception) and exit 1. Only the parent process talks to it, over its own pipes.
"""
from __future__ import annotations

import io
import logging
import pickle
import sys


def main() -> int:
    from pypdf import PdfReader

    from vectrixdb.reading.pdf import _read_page

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    data, numbers = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")  # the parent checked that the empty password opens it
        for i in numbers:
            pickle.dump(("page", _read_page(reader.pages[i])), out)
            out.flush()
    except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent, as read in one process
        try:
            blob = pickle.dumps(("error", exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle goes back as its text
            blob = pickle.dumps(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        out.write(blob)
        out.flush()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
