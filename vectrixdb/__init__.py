"""vectrixdb: measure retrieval on your own documents and questions.

`Vectrix` is the embedded store; `vectrixdb.evaluation` holds the measuring tools. Heavy libraries
(torch, pandas, usearch) load only when first used.
"""
from __future__ import annotations

from vectrixdb.version import __version__

__all__ = ["Vectrix", "__version__"]


def __getattr__(name: str):
    if name == "Vectrix":
        from vectrixdb.collection import Vectrix

        return Vectrix
    raise AttributeError(f"module 'vectrixdb' has no attribute {name!r}")
