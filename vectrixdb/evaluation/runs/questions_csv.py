"""questions.csv: a run's per-question table as CSV, safe to open in a spreadsheet, read back exactly.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage return
before one) as a formula, so a question text such as `=HYPERLINK(...)` would act on whoever opens
the file (CSV injection). As OWASP advises, such a text cell is written with a single quote in
front, which a spreadsheet shows as text. A text cell that already starts with a quote gets one
more, so reading strips exactly one quote from every text cell that starts with one and gives back
what was written (`'=x` is written `''=x`). Only text is guarded: numbers (-0.5 in a score column)
stay numbers. The index (question keys) and the column names are text cells too.

to_csv() writes the table; read_csv() reads a questions.csv back as the frame that was saved (as
text and numbers: lists come back as their Python text, as pandas writes them).
"""
from __future__ import annotations

import io as _io
from typing import Any

QUOTE = "'"
RISKY = ("=", "+", "-", "@", "\t", "\r", QUOTE)  # OWASP's formula starts, and the quote that guards them


def guard(value: Any) -> Any:
    """A text cell as written: a quote in front when a spreadsheet would run it (or it starts with one)."""
    return QUOTE + value if isinstance(value, str) and value.startswith(RISKY) else value


def unguard(value: Any) -> Any:
    """A text cell as read back: guard() undone (one leading quote taken off)."""
    return value[1:] if isinstance(value, str) and value.startswith(QUOTE) else value


def _map_text(frame, cell):
    """A copy of `frame` with `cell` applied to each text cell, index entry and column name."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    out = frame.copy()
    for column in out.columns:
        if is_object_dtype(out[column]) or is_string_dtype(out[column]):  # text; numbers stay numbers
            out[column] = out[column].map(cell)
    out.index = out.index.map(cell)
    out.index.names = [cell(n) for n in out.index.names]
    out.columns = out.columns.map(cell)
    return out


def to_csv(frame) -> str:
    """The per-question table as questions.csv text, every risky text cell guarded (module docstring)."""
    buffer = _io.StringIO()
    _map_text(frame, guard).to_csv(buffer)
    return buffer.getvalue()


def read_csv(source: Any):
    """A questions.csv (a path, an open file or its text) read back as the table that was saved."""
    import pandas as pd

    if isinstance(source, str) and "\n" in source:
        source = _io.StringIO(source)
    return _map_text(pd.read_csv(source, index_col=0), unguard)
