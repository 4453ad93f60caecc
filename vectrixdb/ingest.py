"""The ingestion path behind Vectrix.add_documents: read, chunk, embed, then store in one transaction.

Everything that can fail on bad input (reading, chunking, model calls, embedding) happens before
the catalog is touched; the catalog write is a single SQLite transaction under the collection's
file lock, and the derived indexes are updated only after it commits.

Model-backed options (vectrixdb.chunk_models): chunk="llm" with cut_with=llm_cutter(chat);
context_with=context_writer(chat), a note per chunk stored in its own column, embedded in front of
the chunk and indexed for keyword search, never shown as its text; late=True, each chunk's vector
the mean of its tokens read in the whole document (vectrixdb.late). Each document records what
was used (by name) in its settings. Late vectors and vectors of the chunk's own text are not
comparable, so a collection records which kind it holds on its first add and refuses the other;
late chunking with a note or a heading path in front is refused too (neither is in the document's
tokens). A refusal by the model's service stops the batch before anything is stored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from vectrixdb.chunking import Chunk, chunk_document
from vectrixdb.errors import BadInput, BadType
from vectrixdb.policy import check_access
from vectrixdb.reading import Document, read
from vectrixdb.roles import EmbeddingModel


@dataclass
class Prepared:
    doc: Document
    chunks: list[Chunk]
    embedded: list[str]
    metadata: dict
    access: dict
    settings: dict
    notes: list[str] | None = None
    vectors: Any = None  # late chunking: the default space's vectors, one per chunk


PLAIN_OPTIONS = ("chunk", "chunk_size", "overlap", "embed_heading")
MODEL_OPTIONS = ("cut_with", "context_with", "late")


def settings_for(db, chunking: dict) -> dict:
    """The document's settings: the collection's defaults overridden by what was given; model-backed
    options are recorded by name. Incompatible combinations are refused, with the reason."""
    unknown = set(chunking) - set(PLAIN_OPTIONS) - set(MODEL_OPTIONS)
    if unknown:
        raise BadType(f"unknown option(s) {sorted(unknown)}; chunking takes {', '.join(PLAIN_OPTIONS + MODEL_OPTIONS)}")
    base = db.catalog.get("chunking") or {}
    merged = {**base, **{k: v for k, v in chunking.items() if v is not None and k in PLAIN_OPTIONS}}
    if merged.get("overlap") is None:
        merged["overlap"] = merged["chunk_size"] // 5
    cut, context, late = (chunking.get(k) for k in MODEL_OPTIONS)
    if cut is not None and merged["chunk"] != "llm":
        raise BadInput(f'cut_with= is for chunk="llm", not chunk={merged["chunk"]!r}')
    if late and (context is not None or merged.get("embed_heading")):
        raise BadInput("late chunking pools each chunk's own tokens in the document; a note or heading path in front "
                       "is not part of the document: leave out context_with= and embed_heading= with late=True")
    if late:
        from vectrixdb.late import check_late

        check_late(db.embedder())
    kind, recorded = ("late" if late else "text"), db.catalog.get("vector_kind")
    if recorded and recorded != kind:
        described = "late=True" if recorded == "late" else "each chunk embedded alone"
        raise BadInput(f"this collection's vectors are {recorded} vectors ({described}); {kind} vectors would not be "
                       "comparable with them: add with the same setting, or build another collection")
    merged.update({"cut_with": getattr(cut, "name", None), "context_with": getattr(context, "name", None),
                   "late": bool(late), "_tools": {"cut_with": cut, "context_with": context}})
    return merged


def embed_text(chunk: Chunk, embed_heading: bool) -> str:
    """What the embedder sees: the chunk, with its heading path in front when asked."""
    if embed_heading and chunk.headings:
        return " > ".join(chunk.headings) + "\n\n" + chunk.text
    return chunk.text


_ITEM_KEYS = {"source", "text", "doc_id", "metadata", "access"}


def _item(item: Any) -> dict:
    """One batch item as a dict: {"source": text or path} or {"text": text} (never taken for a
    path), with doc_id, metadata, access when given. A (source, doc_id) pair works too."""
    if isinstance(item, dict):
        unknown = set(item) - _ITEM_KEYS
        if unknown:
            raise BadInput(f"a document given as a dict takes {sorted(_ITEM_KEYS)}, not {sorted(unknown)}")
        if ("source" in item) == ("text" in item):
            raise BadInput(f"a document given as a dict needs one of 'source' (text or path) or 'text': {sorted(item)}")
        return item
    if isinstance(item, tuple) and len(item) == 2:
        return {"source": item[0], "doc_id": item[1]}
    return {"source": item}


def prepare(db, items: list, chunking: dict, progress: bool, *, max_chars: int | None = None) -> list[Prepared]:
    """Read, check and chunk every item before anything is stored; the first bad one raises,
    naming it, and nothing is written."""
    settings = settings_for(db, chunking)
    out, seen = [], set()
    for raw in tqdm(items, desc="reading and chunking", unit="doc", disable=not progress or len(items) < 2):
        item = _item(raw)
        as_text = "text" in item
        source = item["text"] if as_text else item["source"]
        if isinstance(source, str) and not source.strip():
            raise BadInput("cannot add an empty document (the text is empty or only whitespace)")
        doc = read(source, doc_id=item.get("doc_id"), as_text=as_text, max_chars=max_chars)
        if doc.doc_id in seen:
            raise BadInput(f"doc_id {doc.doc_id!r} appears twice in one batch")
        seen.add(doc.doc_id)
        tools = settings["_tools"]
        options = {"cut_with": tools["cut_with"]} if settings["chunk"] == "llm" else {}
        chunks = chunk_document(doc, settings["chunk"], chunk_size=settings["chunk_size"],
                                overlap=settings["overlap"], embedder=db.embedder(), **options)
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise BadInput(f"{doc.doc_id}: metadata must be a dict, not {metadata!r}")
        access = check_access(item.get("access"), f"{doc.doc_id}: access")
        embedded = [embed_text(c, settings["embed_heading"]) for c in chunks]
        notes = None
        if tools["context_with"] is not None:
            from vectrixdb.chunk_models import notes_of  # the notes asked at once, in order

            notes = notes_of(tools["context_with"], doc.markdown, [(c.start, c.end) for c in chunks])
            embedded = [f"{n}\n\n{t}" if n else t for n, t in zip(notes, embedded)]
        vectors = None
        if settings["late"]:
            from vectrixdb.late import late_vectors

            vectors = late_vectors(db.embedder(), doc.markdown, [(c.start, c.end) for c in chunks])
        recorded = {k: v for k, v in settings.items() if k != "_tools"}
        out.append(Prepared(doc, chunks, embedded, metadata, access, recorded, notes, vectors))
    return out


def _vectors(db, prepared: list[Prepared], progress: bool, executor: str = "local") -> dict:
    """Every space's vectors for the batch, in chunk order; late-chunked documents bring their own
    for the default space (other spaces embed the chunk texts as usual)."""
    import numpy as np

    from vectrixdb.store import DEFAULT_SPACE
    from vectrixdb.executors import embed_corpus

    out = {}
    for space in db.spaces:
        own = [p for p in prepared if p.vectors is None or space != DEFAULT_SPACE]
        texts = [t for p in own for t in p.embedded]
        label = f"embedding {len(texts):,} chunks of {len(own):,} document{'s' * (len(own) != 1)}" + \
            ("" if space == DEFAULT_SPACE else f" into {space!r}")  # what the bar says it embeds
        encoded = iter(embed_corpus(texts, db.embedder(space), executor=executor,
                                    progress=label if progress and len(texts) > 64 else False)) if texts else iter(())
        rows = []
        for p in prepared:
            rows += list(p.vectors) if p.vectors is not None and space == DEFAULT_SPACE else \
                [next(encoded) for _ in p.embedded]
        out[space] = np.asarray(rows, dtype=np.float32) if rows else np.zeros((0, db.spaces[space]["dim"]), np.float32)
    return out


def store(db, prepared: list[Prepared], progress: bool, executor: str = "local") -> list[str]:
    vectors = _vectors(db, prepared, progress, executor)
    with db.locked():
        db._ensure_catalog()
        with db.catalog.transaction():
            removed, keys = [], []
            for p in prepared:
                removed += db.catalog.delete_document(p.doc.doc_id)
                db.catalog.insert_document(p.doc, p.metadata, p.access, p.settings)
                keys += db.catalog.insert_chunks(p.doc.doc_id, p.chunks, p.embedded, p.notes)
            for space, vecs in vectors.items():
                db.catalog.insert_vectors(space, keys, vecs)
            if prepared and db.catalog.get("vector_kind") is None:
                db.catalog.set("vector_kind", "late" if prepared[0].settings["late"] else "text")
            before = db.catalog.state()
            after = db.catalog.bump()
        _update_indexes(db, before, after, {space: (removed, keys, vecs) for space, vecs in vectors.items()},
                        texts_changed=True)
    return [p.doc.doc_id for p in prepared]


def remove(db, doc_ids: list[str]) -> list[str]:
    """Delete documents (with their pages, chunks and every space's vectors) in one transaction
    under the lock, and bring the indexes along; the ids that were there, in the order given."""
    with db.locked():
        db._ensure_catalog()
        with db.catalog.transaction():
            gone = [d for d in dict.fromkeys(doc_ids) if db.catalog.has_document(d)]
            removed = [key for d in gone for key in db.catalog.delete_document(d)]
            before = db.catalog.state()
            after = db.catalog.bump() if gone else before
        if gone:
            _update_indexes(db, before, after, {space: (removed, [], None) for space in db.spaces},
                            texts_changed=True)
    return gone


def _update_indexes(db, before, after, changes: dict, *, texts_changed: bool) -> None:
    """Bring every derived index from catalog state `before` to `after` and save it, stamped.

    The writer does this at commit, under the lock, so readers find a saved index that matches the
    catalog and never rebuild one themselves. It runs after COMMIT, so the batch is stored whatever
    happens here: an index that cannot be updated or saved (disk full, a folder in the way) is
    dropped from memory, its file stays stamped with an older state (so the next use rebuilds it
    from the catalog), and a warning says so rather than an error that reads as a failed batch.
    changes: space -> (removed keys, added keys, their vectors); texts_changed: chunks came or went.
    """
    from vectrixdb.store.keywords import KeywordIndex
    from vectrixdb.store.vectors import VectorIndex

    for space, info in db.spaces.items():
        index = db._indexes.pop(space, None) or VectorIndex(db.folder, space, info["dim"])
        try:
            removed, keys, vecs = changes.get(space, ([], [], None))
            if index.state == before or index.load(before):
                index.update(removed, keys, vecs, after)
            else:
                index.build(after, *db.catalog.vectors(space))
            index.save()
            db._indexes[space] = index
        except Exception as exc:  # noqa: BLE001 - the batch is stored: _behind warns, the index is rebuilt on use
            _behind(db, f"vector index {space!r}", exc)
    words = db._keywords or KeywordIndex(db.folder)
    db._keywords = None
    try:
        if not texts_changed and (words.state == before or words.load(before)):
            words.state = after
        else:
            words.build(after, *db.catalog.chunk_texts())
        words.save()
        db._keywords = words
    except Exception as exc:  # noqa: BLE001 - the batch is stored: _behind warns, the index is rebuilt on use
        _behind(db, "keyword index", exc)


def _behind(db, what: str, exc: Exception) -> None:
    """Say that a committed batch's index could not be brought up to date (it is rebuilt on next use)."""
    import logging
    import warnings

    message = (f"collection {db.name!r}: the batch is stored, but its {what} could not be updated "
               f"({type(exc).__name__}: {exc}); it is rebuilt from the catalog on next use")
    logging.getLogger("vectrixdb").warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=5)


def add_space(db, space: str, model: EmbeddingModel, progress: bool) -> int:
    from vectrixdb.embedding import get_embedder

    if space in db.spaces:
        raise BadInput(f"vector space {space!r} already exists in {db.name!r}")
    emb = get_embedder(model)
    with db.locked():
        db._ensure_catalog()
        keys, texts = db.catalog.chunk_texts()
        vecs = emb.encode(texts, progress=progress)
        with db.catalog.transaction():
            db.catalog.insert_vectors(space, keys, vecs)
            db.catalog.set("spaces", {**db.spaces, space: {"model": emb.name, "dim": int(emb.dim)}})
            before = db.catalog.state()
            after = db.catalog.bump()
        db._embedders[space] = emb
        _update_indexes(db, before, after, {space: ([], keys, vecs)}, texts_changed=False)
    return len(keys)
