"""File arguments that may be glob patterns.

A pattern reaches a command as itself when it was quoted (`vectrixdb add docs 'reports/*.pdf'`), on
a shell that does not expand, or when bash found no match and left it as it was. An argument that
names no file but holds `*`, `?` or `[` is expanded here, sorted; one that matches nothing is
NotFound, `no file matches PATTERN` (exit status 3, as a missing file), never a silent no-op or a
puzzling `no such file`; one that must name one file and matches several is BadInput (exit 2). A file or address given as it is goes through untouched.
"""
from __future__ import annotations

import glob
import os
from pathlib import Path

from vectrixdb.errors import BadInput, NotFound


def _matches(arg: str) -> list[str] | None:
    """The files a pattern matches, sorted; None when arg is not a pattern (an existing path, an
    s3:// or Blob address, or no `*`, `?`, `[` in it)."""
    from vectrixdb import io

    if io.is_remote(arg) or not glob.has_magic(arg) or Path(arg).expanduser().exists():
        return None
    found = sorted(glob.glob(os.path.expanduser(arg), recursive=True))
    if not found:
        raise NotFound(f"no file matches {arg}")
    return found


def files(args: list[str]) -> list[str]:
    """Each argument as given, a pattern replaced by the files it matches."""
    return [path for arg in args for path in (_matches(arg) or [arg])]


def one_file(arg: str) -> str:
    """A one-file argument (a golden file): a pattern must match exactly one file."""
    found = _matches(arg)
    if found is None:
        return arg
    if len(found) > 1:
        shown = ", ".join(found[:3]) + (", ..." if len(found) > 3 else "")
        raise BadInput(f"{arg} matches {len(found)} files ({shown}): give one")
    return found[0]
