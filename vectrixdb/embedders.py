"""The embedders the registry knows by name: the "embedders" kind of vectrixdb/registry.py.

An embedder member is `make(model: str | None = None, **options) -> Embedder` (roles.Embedder: texts
to unit-length float32 rows). Built in: "sentence-transformers", embedding.py's SentenceEmbedder (the
bundled model by default; "@fp32" and "@int8" in the model string pick its backend). A new embedder
inside the package registers here, or in its own module with one `registry.register("embedders",
...)` line; outside it, through an entry point in the group `vectrixdb.embedders`. A collection is
built with one by the model string "NAME" or "NAME:model" (embedding.get_embedder), records the
embedder's `name`, and reopens by that name: so an embedder from outside the package names itself
NAME or NAME:... (embedding.registered_embedder refuses one that does not).
"""
from __future__ import annotations

from typing import Any

from vectrixdb import registry
from vectrixdb.errors import BadType
from vectrixdb.roles import Embedder


@registry.contract("embedders")
def _fits(name: str, make: Any) -> None:
    if not callable(make):
        raise BadType(f"embedder {name!r}: an embedder is make(model=None, **options) -> Embedder, "
                      f"not {type(make).__name__}")


def sentence_transformers(model: str | None = None, **options: Any) -> Embedder:
    """embedding.py's SentenceEmbedder for a model name, folder or None (the bundled model)."""
    from vectrixdb.embedding import SentenceEmbedder

    return SentenceEmbedder(model, **options)


registry.register("embedders", "sentence-transformers", sentence_transformers)
