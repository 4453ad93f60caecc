"""Cutting a document's Markdown into chunks, by one of six techniques in one registry (and a
seventh, llm, that needs a chat model: cut_with=llm_cutter(chat)).

    base.py                 Chunk, register (the "chunkers" kind of vectrixdb/registry.py, CHUNKERS
                            its table) and the shared span machinery
    fixed.py, recursive.py, sentence.py, semantic.py, structure.py, parent_child.py, llm.py
                            one technique each: where to cut, nothing more

A new chunker is one file: a module here whose function is decorated `@register("name")` (from
base.py); the registry imports every module of this package the first time a technique is looked
up. Techniques import base.py, never this module, so the registry and the techniques never import
each other. A chunker outside the package registers the same way when its module is imported, or
through an entry point in the group `vectrixdb.chunkers` (`paragraphs = "mypkg.cut:paragraphs"`).

The signature every technique has (base.Chunker; `register` refuses a function that cannot be
called so, naming the technique and the keyword):

    fn(doc: Document, *, chunk_size: int, overlap: int, embedder: Embedder | None = None, **options)
        -> list[Chunk]

chunk_document checks chunk_size (>= 20) and overlap (0 <= overlap < chunk_size; default a fifth)
before calling it; add_documents and compare_chunking pass the collection's embedder; `options` are
a technique's own keywords (llm's cut_with), each with a default.
"""
from __future__ import annotations

from vectrixdb import registry
from vectrixdb.chunking.base import (ALIASES, CHUNKERS, SEPARATORS, _HEADING, Chunk, Chunker,  # noqa: F401  (public here)
                                     Outline, cut_fixed, make_chunks, merge, outline_of, pages_of, plain, register,
                                     split_at, split_recursive, trim)
from vectrixdb.errors import BadInput
from vectrixdb.reading import Document


def get_chunker(name: str) -> Chunker:
    """The technique registered as `name` (or one of its ALIASES)."""
    return registry.get("chunkers", ALIASES.get(name, name))


def chunk_document(doc: Document, technique: str = "recursive", *, chunk_size: int = 1000,
                   overlap: int | None = None, **options) -> list[Chunk]:
    """Cut `doc` with a registered technique; overlap defaults to a fifth of chunk_size."""
    if chunk_size < 20:
        raise BadInput(f"chunk_size must be at least 20 characters, not {chunk_size}")
    overlap = chunk_size // 5 if overlap is None else overlap
    if not 0 <= overlap < chunk_size:
        raise BadInput(f"overlap must be in [0, chunk_size), not {overlap}")
    return get_chunker(technique)(doc, chunk_size=chunk_size, overlap=overlap, **options)
