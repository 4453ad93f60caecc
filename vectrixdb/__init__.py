"""vectrixdb: measure retrieval on your own documents and questions.

`Vectrix` is the embedded store; `vectrixdb.evaluation` holds the measuring tools. Heavy libraries
(torch, pandas, usearch) load only when first used, and those outside the core install come
from extras: a part whose extra is missing says which (extras.py).

The flow, bottom to top: a module imports only from its own line and the lines above it, and no
import, even one inside a function, goes round in a circle (tests/test_layout.py checks both, and
that every top-level module is on a line):

    errors.py, extras.py, io.py, version.py, settings.py, roles.py, code_identity.py, registry.py
                                  the error family, the optional parts' extras (MissingExtra),
                                  file access (local, s3://, Blob), the version,
                                  the checks every settings dataclass runs, the roles a user's
                                  objects play (typing protocols: Searchable, Embedder, ChatModel, ...),
                                  the identity of a user's function (what a cell's key holds of it),
                                  the one registry of every extensible part (it imports its
                                  members' modules by name, on first lookup)
    chat/                         chat models: ChatWriter, routes, cache, limits
    reading/                      sources -> Documents (pages of Markdown with quality flags)
    plotting/                     figures over reports, and a score's colour everywhere
    embedding*.py, embedders.py, late.py, served/
                                  texts -> vectors (the bundled model, OpenVINO int8, late chunking;
                                  the embedders the registry knows by name; embedding and rerank
                                  models served over HTTP, on chat's retry rules)
    chunk_models.py               the chunking a chat model does (LLM cut points, chunk notes)
    chunking/                     Documents -> Chunks, by a registered technique
    store/, policy.py             the catalog, vector and keyword indexes; who may see what
    executors.py                  cells: cached (keyed by data and code, a user's chunker's
                                  included), run locally or on Ray
    ingest.py, search.py          adding documents; dense, keyword and hybrid search
    collection.py                 Vectrix, the facade over ingest and search
    evaluation/, widgets.py       golden files -> retrieval and answer measures -> saved runs;
                                  notebook widgets (labelling, pooling review)
    present/                      how a run is shown: views, decisions, figures, Markdown, the
                                  certification rules, the certificate PDF and the offline HTML
    server/, export/, cli/        the dashboard, the PDF/HTML hand-over, the command: the top,
                                  which nothing below imports (server/ and export/ both stand on
                                  present/, never on each other)
"""
from __future__ import annotations

from vectrixdb.version import __version__

__all__ = ["Vectrix", "__version__"]


def __getattr__(name: str):
    if name == "Vectrix":
        from vectrixdb.collection import Vectrix

        return Vectrix
    raise AttributeError(f"module 'vectrixdb' has no attribute {name!r}")
