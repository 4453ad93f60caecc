"""Vectrix: a persistent collection of documents, chunked, embedded and searchable.

A collection is a folder: `catalog.sqlite` (documents with their kept Markdown and pages, chunks,
vectors, settings), one usearch file per vector space and a bm25s index, both derived from the
catalog. The folder is `<root>/<name>`, the root being `path=`, else $VECTRIXDB_HOME, else
~/.vectrixdb. Writes take a file lock, so two processes adding at once queue rather than corrupt;
a batch is one SQLite transaction, so a failure half-way leaves the collection as it was.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from vectrixdb.embedding import Embedder, get_embedder, home
from vectrixdb.search import Hit

DEFAULT_SPACE = "default"
DEFAULT_CHUNKING = {"chunk": "recursive", "chunk_size": 1000, "overlap": None, "embed_heading": False}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class Vectrix:
    def __init__(self, name: str, *, path: str | Path | None = None, model: Any = None,
                 embedders: dict[str, Embedder] | None = None):
        from filelock import FileLock

        from vectrixdb.store.catalog import Catalog

        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"collection name {name!r}: use letters, digits, '.', '_' or '-' (at most 128)")
        self.name = name
        self.folder = Path(path).expanduser() / name if path else home() / "collections" / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog(self.folder / "catalog.sqlite")
        self.lock = FileLock(str(self.folder / ".lock"))
        self._embedders: dict[str, Embedder] = dict(embedders or {})
        spaces = self.catalog.get("spaces", {})
        main = get_embedder(model) if model is not None else None
        recorded = spaces.get(DEFAULT_SPACE, {}).get("model")
        if main is not None and recorded and main.name != recorded:
            raise ValueError(
                f"collection {name!r} was built with model {recorded!r}; it cannot be searched with {main.name!r}. "
                "Open it without model=, or build a new collection (or add a vector space) for the other model."
            )
        if main is not None:
            self._embedders[DEFAULT_SPACE] = main
        if not recorded:
            emb = self.embedder(DEFAULT_SPACE, model)
            with self.lock:
                if not self.catalog.get("spaces"):
                    self.catalog.set("spaces", {DEFAULT_SPACE: {"model": emb.name, "dim": emb.dim}})
                    self.catalog.set("chunking", DEFAULT_CHUNKING)
        self._indexes: dict[str, Any] = {}
        self._keywords = None
        self._docs_cache: tuple[int, list[dict]] | None = None

    def __repr__(self) -> str:
        c = self.catalog.counts()
        return f"Vectrix({self.name!r}: {c['documents']} documents, {c['chunks']} chunks, at {self.folder})"

    # models and indexes ---------------------------------------------------------------------
    @property
    def spaces(self) -> dict[str, dict]:
        return self.catalog.get("spaces", {})

    def embedder(self, space: str = DEFAULT_SPACE, model: Any = None) -> Embedder:
        if space not in self._embedders:
            recorded = self.spaces.get(space, {}).get("model")
            if space != DEFAULT_SPACE and recorded is None and model is None:
                raise ValueError(f"no vector space {space!r}; this collection has {sorted(self.spaces)}")
            self._embedders[space] = get_embedder(model if model is not None else recorded)
        return self._embedders[space]

    def _vector_index(self, space: str):
        from vectrixdb.store.vectors import VectorIndex

        if space not in self.spaces:
            raise ValueError(f"no vector space {space!r}; this collection has {sorted(self.spaces)}")
        if space not in self._indexes:
            self._indexes[space] = VectorIndex(self.folder, space, self.spaces[space]["dim"])
        index = self._indexes[space]
        index.load(self.catalog.generation(), lambda: self.catalog.vectors(space))
        return index

    def _keyword_index(self):
        from vectrixdb.store.keywords import KeywordIndex

        if self._keywords is None:
            self._keywords = KeywordIndex(self.folder)
        generation = self.catalog.generation()
        if self._keywords.generation != generation:
            with self.lock:  # one process rebuilds and saves; the others then load its file
                self._keywords.load(self.catalog.generation(), self.catalog.chunk_texts)
        return self._keywords

    # ingestion ------------------------------------------------------------------------------
    def add_document(self, text_or_path: Any, *, doc_id: str | None = None, metadata: dict | None = None,
                     access: dict | None = None, **chunking) -> str:
        """Read, chunk, embed and store one document; an existing doc_id is replaced. Returns the id.

        chunking: chunk (technique), chunk_size, overlap (default a fifth of the size),
        embed_heading (embed the heading path in front of each chunk; the stored text is unchanged).
        """
        return self.add_documents([{"source": text_or_path, "doc_id": doc_id, "metadata": metadata,
                                    "access": access}], progress=False, **chunking)[0]

    def add_documents(self, items: Iterable[Any], *, progress: bool = True, **chunking) -> list[str]:
        """Add many documents as one batch: all of them are stored, or, on any error, none.

        items: paths, texts, or dicts with source and optionally doc_id, metadata, access.
        """
        from vectrixdb.ingest import prepare, store

        prepared = prepare(self, list(items), chunking, progress)
        return store(self, prepared, progress)

    def add_vectors(self, space: str, model: Any, *, progress: bool = True) -> int:
        """Embed every chunk again with another model into the named vector space `space`."""
        from vectrixdb.ingest import add_space

        return add_space(self, space, model, progress)

    # reading back ---------------------------------------------------------------------------
    def documents(self) -> list[dict]:
        generation = self.catalog.generation()
        if self._docs_cache is None or self._docs_cache[0] != generation:
            self._docs_cache = (generation, self.catalog.documents())
        return self._docs_cache[1]

    def document(self, doc_id: str):
        """The kept Markdown of a document as a Document with its pages (None when absent)."""
        from vectrixdb.reading import Document, Page

        markdown = self.catalog.markdown(doc_id)
        if markdown is None:
            return None
        pages = tuple(Page(p["number"], p["start"], p["end"], tuple(p["flags"]), p["score"])
                      for p in self.catalog.pages(doc_id))
        return Document(doc_id, markdown, pages)

    def info(self) -> dict:
        return {"name": self.name, "path": str(self.folder), **self.catalog.counts(), "spaces": self.spaces,
                "chunking": self.catalog.get("chunking"), "generation": self.catalog.generation()}

    # search ---------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, *, mode: str = "dense", rerank: Any = None,
               vectors: str | None = None, where: dict | None = None, _principal: dict | None = None) -> list[Hit]:
        """Ranked hits for a query. mode: dense (cosine on the vector space `vectors`), keyword (BM25)
        or hybrid (reciprocal rank fusion of both); rerank: a cross-encoder re-scores the top
        candidates; where: metadata filter, e.g. {"year": 2021} or {"doc_id": [...]}."""
        from vectrixdb.search import check_query, fuse, get_reranker

        check_query(query, k, mode)
        allowed = self._allowed(where, _principal)
        want = max(k * 3, k + 20) if rerank in (None, False) else max(k * 3, 50)
        if mode == "dense":
            keys, scores = self._dense(self.embedder(vectors or DEFAULT_SPACE).encode([query])[0], want, vectors, allowed)
        elif mode == "keyword":
            keys, scores = self._keyword_index().search(query, want, allowed)
        else:
            pool = max(want, 100)
            dense, _ = self._dense(self.embedder(vectors or DEFAULT_SPACE).encode([query])[0], pool, vectors, allowed)
            sparse, _ = self._keyword_index().search(query, pool, allowed)
            fused = fuse([dense, sparse])[:want]
            keys, scores = np.array([k_ for k_, _ in fused], np.uint64), np.array([s for _, s in fused])
        hits = self._hits(keys, scores, k if rerank in (None, False) else len(keys))
        if rerank not in (None, False) and hits:
            relevance = get_reranker(rerank)(query, [h.text for h in hits])
            order = np.argsort(-relevance, kind="stable")[:k]
            hits = [Hit(**{**hits[i].to_dict(), "rank": r, "relevance": float(relevance[i])})
                    for r, i in enumerate(order, start=1)]
        return hits

    def similar(self, text_or_chunk_id: str, k: int = 10, *, vectors: str | None = None, where: dict | None = None,
                _principal: dict | None = None) -> list[Hit]:
        """Chunks most like a text, or like a stored chunk (given its chunk id; it is left out)."""
        from vectrixdb.search import check_query

        check_query(text_or_chunk_id, k, "dense")
        space = vectors or DEFAULT_SPACE
        own = self.catalog.key_of(text_or_chunk_id)
        index = self._vector_index(space)
        if own is not None and own in index.index:
            query = np.asarray(index.index.get(own), dtype=np.float32).reshape(-1)
        else:
            query = self.embedder(space).encode([text_or_chunk_id])[0]
        allowed = self._allowed(where, _principal)
        keys, scores = self._dense(query, max(k * 3, k + 20) + 1, space, allowed)
        keep = keys != (own if own is not None else -1)
        return self._hits(keys[keep], scores[keep], k)

    def as_principal(self, principal: dict) -> "PrincipalView":
        """A view that searches only what `principal` (e.g. {"group": ["hr"]}) may see."""
        from vectrixdb.policy import check_access

        return PrincipalView(self, check_access(principal, "principal"))

    def _dense(self, query: np.ndarray, k: int, space: str | None, allowed) -> tuple[np.ndarray, np.ndarray]:
        return self._vector_index(space or DEFAULT_SPACE).search(query, k, allowed)

    def _allowed(self, where: dict | None, principal: dict | None) -> np.ndarray | None:
        from vectrixdb.policy import matches, visible

        if not where and principal is None:
            return None
        if where is not None and not isinstance(where, dict):
            raise ValueError(f"where must be a dict of metadata values, not {where!r}")
        ids = [d["doc_id"] for d in self.documents() if matches(d, where) and visible(d["access"], principal)]
        return self.catalog.keys_of_documents(ids)

    def _hits(self, keys: np.ndarray, scores: np.ndarray, k: int) -> list[Hit]:
        rows = self.catalog.chunk_rows(keys)
        hits: list[Hit] = []
        seen_parents: set = set()
        doc_pages: dict[str, list[dict]] = {}
        for key, score in zip(keys, scores):
            row = rows.get(int(key))
            if row is None:
                continue
            text, start, end, pages = row["text"], row["start"], row["end"], row["pages"]
            if row["parent"] is not None:  # parent-child: hand back the section, once
                start, end, text = row["parent"]
                if (row["doc_id"], start) in seen_parents:
                    continue
                seen_parents.add((row["doc_id"], start))
                if row["doc_id"] not in doc_pages:  # one catalog read per document, not per hit
                    doc_pages[row["doc_id"]] = self.catalog.pages(row["doc_id"])
                pages = tuple(p["number"] for p in doc_pages[row["doc_id"]] if p["start"] < end and start < p["end"])
            hits.append(Hit(row["chunk_id"], row["doc_id"], pages, text, float(score), len(hits) + 1,
                            row["headings"], start, end))
            if len(hits) == k:
                break
        return hits


class PrincipalView:
    """What one principal may see of a collection: search and similar, filtered before ranking."""

    def __init__(self, db: Vectrix, principal: dict):
        self.db, self.principal = db, principal

    def search(self, query: str, k: int = 10, **options) -> list[Hit]:
        return self.db.search(query, k, _principal=self.principal, **options)

    def similar(self, text_or_chunk_id: str, k: int = 10, **options) -> list[Hit]:
        if self.db.catalog.key_of(text_or_chunk_id) is not None:
            doc_id = text_or_chunk_id.rsplit("::", 1)[0]
            if doc_id not in {d["doc_id"] for d in self.documents()}:
                raise PermissionError(f"chunk {text_or_chunk_id!r} is not visible to this principal")
        return self.db.similar(text_or_chunk_id, k, _principal=self.principal, **options)

    def documents(self) -> list[dict]:
        from vectrixdb.policy import visible

        return [d for d in self.db.documents() if visible(d["access"], self.principal)]

    def __getattr__(self, name: str):
        if name in ("name", "folder", "spaces", "info", "embedder"):
            return getattr(self.db, name)
        raise AttributeError(f"{name!r} is not available through a principal's view")
