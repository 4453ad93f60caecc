"""Vectrix: a persistent collection of documents, chunked, embedded and searchable.

This class is the facade: ingestion lives in ingest.py, search modes in search.py, the catalog and
indexes in store/, access rules in policy.py; each method here checks its call and hands over.

A collection is a folder: `catalog.sqlite` (documents with their kept Markdown and pages, chunks,
vectors, settings), one usearch file per vector space and a bm25s index, both derived from the
catalog. The folder is `<root>/<name>`, the root being `path=`, else $VECTRIXDB_HOME, else
~/.vectrixdb. Writes (add, replace, delete) take a file lock, so two processes writing at once
queue rather than corrupt; a batch is one SQLite transaction, so a failure half-way (a full disk
included, raised as IOFailure naming the catalog) leaves the collection as it was. Readers never
take the lock: a search, and a read of chunks or of a document, sees one committed state (read
again when a commit lands in the middle, see _at_one_state). A collection in a read-only folder is
opened read-only and searched as usual. `check()` says what, if anything, is wrong on disk.

Reading never creates: opening a collection that is not there makes no folder, and any read of it
(search, documents, info, ...) raises NotFound naming the root and the collections that do exist.
The first write (add_document(s), add_vectors) creates the folder and the catalog. A catalog that
SQLite cannot read is a Corrupt error naming the file, never a raw sqlite3 traceback.
"""
from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar

from vectrixdb.embedding import Embedder, get_embedder, home
from vectrixdb.errors import BadInput, Corrupt, IOFailure, NotFound
from vectrixdb import search as searching
from vectrixdb.search import Hit
from vectrixdb.store import DEFAULT_SPACE
from vectrixdb.extras import require

if TYPE_CHECKING:
    from vectrixdb.roles import EmbeddingModel, Reranker
    from vectrixdb.store.catalog import Catalog

DEFAULT_CHUNKING = {"chunk": "recursive", "chunk_size": 1000, "overlap": None, "embed_heading": False}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
CATALOG = "catalog.sqlite"
STABLE_TRIES = 20  # reads started again after a commit landed mid-way, before one waits on the lock
T = TypeVar("T")


class Vectrix:
    def __init__(self, name: str, *, path: str | Path | None = None, model: EmbeddingModel = None,
                 embedders: dict[str, Embedder] | None = None):
        from filelock import FileLock

        require("store", "usearch", "bm25s", "Stemmer")  # the indexes: MissingExtra before any folder is made
        if not isinstance(name, str) or not _NAME.match(name):
            raise BadInput(f"collection name {name!r}: use letters, digits, '.', '_' or '-' (at most 128)")
        self.name = name
        self.root = Path(path).expanduser() if path else home() / "collections"
        self.folder = self.root / name
        self.lock = FileLock(str(self.folder / ".lock"))
        self._embedders: dict[str, Embedder] = dict(embedders or {})
        self._model = model
        if model is not None:
            self._embedders[DEFAULT_SPACE] = get_embedder(model)
        self._catalog: Catalog | None = None
        self._indexes: dict[str, Any] = {}
        self._keywords = None
        self._docs_cache: tuple[Any, list[dict]] | None = None
        self._visible_keywords: dict[tuple, Any] = {}  # (catalog state, visible keys) -> in-memory BM25
        if (self.folder / CATALOG).exists():
            self._open()

    def __repr__(self) -> str:
        if not self.exists:
            return f"Vectrix({self.name!r}: not created yet, at {self.folder})"
        c = self.catalog.counts()
        return f"Vectrix({self.name!r}: {c['documents']} documents, {c['chunks']} chunks, at {self.folder})"

    # the catalog: opened when there, created by the first write ---------------------------
    @property
    def exists(self) -> bool:
        """Whether the collection has been created (its catalog is on disk)."""
        return self._catalog is not None or (self.folder / CATALOG).exists()

    @property
    def catalog(self):
        """The SQLite catalog; NotFound when the collection was never created (reads never create it)."""
        if self._catalog is None:
            if not (self.folder / CATALOG).exists():
                existing = sorted(p.parent.name for p in self.root.glob(f"*/{CATALOG}"))
                raise NotFound(f"no collection {self.name!r} under {self.root}; existing: "
                               f"{', '.join(existing) or 'none'}")
            self._open()
        return self._catalog

    def _open(self) -> None:
        from vectrixdb.store.catalog import Catalog

        path = self.folder / CATALOG
        try:
            catalog = Catalog(path)
            recorded = catalog.get("spaces", {}).get(DEFAULT_SPACE, {}).get("model")
        except sqlite3.OperationalError as exc:  # SQLite could not open or write the file: not damage
            raise IOFailure(f"{path}: could not open the catalog ({exc}); check the folder's permissions and "
                            "free space") from exc
        except sqlite3.DatabaseError as exc:
            raise Corrupt(f"{path} is not a readable catalog ({exc}). Restore it from a backup, or delete the "
                          f"folder {self.folder} to start again (its documents must then be added again).") from None
        main = self._embedders.get(DEFAULT_SPACE) if self._model is not None else None
        if main is not None and recorded and main.name != recorded:
            catalog.conn.close()
            raise BadInput(
                f"collection {self.name!r} was built with model {recorded!r}; it cannot be searched with {main.name!r}. "
                "Open it without model=, or build a new collection (or add a vector space) for the other model."
            )
        if main is not None:
            self._hold_dim(main, catalog.get("spaces", {}).get(DEFAULT_SPACE, {}), DEFAULT_SPACE)
        self._catalog = catalog

    def _create(self) -> None:
        """Make the folder and catalog on the first write and record the model and chunking defaults."""
        if self._catalog is not None and self.catalog.get("spaces"):
            return
        with self.locked():  # two processes making the same collection at once: one creates, the other finds it
            if self._catalog is None:
                self._open()
            if not self.catalog.get("spaces"):
                emb = self.embedder(DEFAULT_SPACE, self._model)
                with self.catalog.transaction():
                    self.catalog.set("spaces", {DEFAULT_SPACE: {"model": emb.name, "dim": emb.dim}})
                    self.catalog.set("chunking", DEFAULT_CHUNKING)

    # models and indexes ---------------------------------------------------------------------
    @property
    def spaces(self) -> dict[str, dict]:
        return self.catalog.get("spaces", {})

    def embedder(self, space: str = DEFAULT_SPACE, model: EmbeddingModel = None) -> Embedder:
        if space not in self._embedders:
            recorded = self.spaces.get(space, {}).get("model")
            if space != DEFAULT_SPACE and recorded is None and model is None:
                raise BadInput(f"no vector space {space!r}; this collection has {sorted(self.spaces)}")
            self._embedders[space] = get_embedder(model if model is not None else recorded)
            self._hold_dim(self._embedders[space], self.spaces.get(space, {}), space)
        return self._embedders[space]

    def _hold_dim(self, emb: Embedder, info: dict, space: str) -> None:
        """A served model (served.EmbeddingRoute) is held to the dimension the space records: a reply of
        another is refused naming both. A local model's dimension is its own, read from its files."""
        expect = getattr(emb, "expect", None)
        if callable(expect) and info.get("dim"):
            expect(int(info["dim"]), f"collection {self.name!r}, vector space {space!r}")

    def _vector_index(self, space: str):
        """The usearch index of `space` as of the catalog now: the writer's saved file when its stamp
        and checksum match, else rebuilt from the catalog's vectors (see _keyword_index)."""
        from vectrixdb.store.vectors import VectorIndex

        if space not in self.spaces:
            raise BadInput(f"no vector space {space!r}; this collection has {sorted(self.spaces)}")
        if space not in self._indexes:
            self._indexes[space] = VectorIndex(self.folder, space, self.spaces[space]["dim"])
        index = self._indexes[space]
        state = self.catalog.state()
        if index.state != state and not index.load(state):
            index.build(state, *self.catalog.vectors(space))
            self._save_if_free(index, state)
        return index

    def _keyword_index(self):
        """The BM25 index as of the catalog now, without ever waiting on a writer.

        The writer builds and saves it at commit; a reader loads that saved index, and only when it
        is missing, behind (a writer stopped between COMMIT and saving) or damaged rebuilds it in
        memory, outside the lock, saving it for the next process only if the lock is free.
        """
        from vectrixdb.store.keywords import KeywordIndex

        if self._keywords is None:
            self._keywords = KeywordIndex(self.folder)
        state = self.catalog.state()
        if self._keywords.state != state and not self._keywords.load(state):
            self._keywords.build(state, *self.catalog.chunk_texts())
            self._save_if_free(self._keywords, state)
        return self._keywords

    def _save_if_free(self, index, state) -> None:
        """Save an index a reader rebuilt, if no one holds the lock this instant (a reader never
        waits) and the catalog is still at `state`; a failure is logged, never raised to a reader."""
        import logging

        from filelock import Timeout

        try:
            with self.lock.acquire(timeout=0):
                if self.catalog.state() == state:
                    index.save()
        except Timeout:
            pass
        except Exception as exc:  # noqa: BLE001 - logged: the index in memory is right, only its file is not
            logging.getLogger("vectrixdb").warning("could not save the rebuilt %r (%s: %s); it is rebuilt again "
                                                   "next time", index, type(exc).__name__, exc)

    def _at_one_state(self, read: Callable[[], T]) -> T:
        """read() as of one committed state of the catalog. Each catalog read is its own statement,
        and a writer may commit between two of them (a search reads an index, then the rows of the
        keys it found: a document replaced in between would vanish). Every commit moves the state
        (a new random token), so when the state is the same before and after, everything read() saw
        (indexes are loaded for the state they find) belongs to it; otherwise it is read again. A
        reader never waits on a writer, except after STABLE_TRIES changed states in a row, when it
        reads once under the lock."""
        for _ in range(STABLE_TRIES):
            before = self.catalog.state()
            out = read()
            if self.catalog.state() == before:
                return out
        with self.locked():
            return read()

    # ingestion ------------------------------------------------------------------------------
    def add_document(self, text_or_path: Any, *, doc_id: str | None = None, metadata: dict | None = None,
                     access: dict | None = None, max_chars: int | None = None, progress: bool = False,
                     **chunking) -> str:
        """Read, chunk, embed and store one document; an existing doc_id is replaced. Returns the id.

        text_or_path: text, or a path (see vectrixdb.reading for the rule that tells them apart);
        text without doc_id gets `text-<hash of the text>`, a file its name. max_chars caps the
        document's text (default $VECTRIXDB_MAX_CHARS, else 50,000,000).
        chunking: chunk (technique), chunk_size, overlap (default a fifth of the size),
        embed_heading (embed the heading path in front of each chunk; the stored text is unchanged),
        and the model-backed cut_with=, context_with=, late= (see vectrixdb.ingest).
        """
        return self.add_documents([{"source": text_or_path, "doc_id": doc_id, "metadata": metadata,
                                    "access": access}], progress=progress, max_chars=max_chars, **chunking)[0]

    def add_documents(self, items: Iterable[Any], *, progress: bool = True, max_chars: int | None = None,
                      executor: str = "local", **chunking) -> list[str]:
        """Add many documents as one batch: all of them are stored, or, on any error, none.

        items: paths, texts, or dicts with source (or text, which is never taken for a path) and
        optionally doc_id, metadata, access. The first add creates the collection; a batch naming a
        missing or unreadable file is refused before anything is created. executor="ray" (or a Ray
        address) embeds the batch's texts on a Ray cluster (vectrixdb.executors.embed_corpus); the
        vectors come back here and land in the catalog in the batch's one transaction.
        """
        from vectrixdb.ingest import _item, prepare, store
        from vectrixdb.reading import check_doc_id, check_source

        items = list(items)
        if not self.exists:  # the cheap checks first, so a refused first batch leaves no empty collection
            for item in map(_item, items):
                if "source" in item:
                    check_source(item["source"])
                if item.get("doc_id") is not None:
                    check_doc_id(item["doc_id"])
            if chunking.get("late") and self._model is None and DEFAULT_SPACE not in self._embedders:
                from vectrixdb.embedding import FLOAT_MODEL  # late chunking pools torch's token embeddings;
                self._embedders[DEFAULT_SPACE] = get_embedder(FLOAT_MODEL)  # the int8 graph has none
        fresh = not (self.folder / CATALOG).exists()
        try:
            self._create()
            prepared = prepare(self, items, chunking, progress, max_chars=max_chars)
            return store(self, prepared, progress, executor)
        except BaseException:
            if fresh:  # a first batch that failed (a file that cannot be read, ...) leaves no collection behind
                self._uncreate()
            raise

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the collection's write lock (reentrant), making its folder first. Another process may
        remove the folder of a collection it created for a first batch that failed (see _uncreate)
        while this one waits: the folder is then made again and the lock taken anew."""
        for _ in range(5):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise IOFailure(f"{self.folder}: cannot make the collection's folder ({exc})") from exc
            try:
                self.lock.acquire()
                break
            except FileNotFoundError:  # the folder went between the two steps
                continue
            except OSError as exc:  # a read-only folder, a full disk: nothing can be written there
                raise IOFailure(f"{self.folder / '.lock'}: cannot take the collection's write lock ({exc})") from exc
        else:
            raise NotFound(f"{self.folder} keeps disappearing while collection {self.name!r} is being written")
        try:
            yield
        finally:
            self.lock.release()

    def _uncreate(self) -> None:
        """Remove the collection this object created for a first batch that then failed, but only if,
        under the lock, nothing was committed to it by anyone: another process may have opened the
        new collection meanwhile and committed documents, which must never go with the folder. A
        process that opened it and commits later finds its catalog gone and makes it again
        (store() calls _ensure_catalog under the lock)."""
        import shutil

        if not self.folder.exists():  # removed already (by another process's failed first batch)
            self._forget()
            return
        with self.locked():
            if self._catalog is None:  # it could not be made (a full disk): nothing, or an empty file
                catalog = self.folder / CATALOG
                untouched = not catalog.exists() or catalog.stat().st_size == 0
            else:
                untouched = self._catalog.is_current() and self._catalog.generation() == 0 \
                    and self._catalog.counts()["documents"] == 0
            self._forget()
            if untouched:
                shutil.rmtree(self.folder, ignore_errors=True)

    def _forget(self) -> None:
        """Drop the open catalog and everything read from it (the next use opens the folder again)."""
        if self._catalog is not None:
            self._catalog.conn.close()
        self._catalog, self._indexes, self._keywords, self._docs_cache = None, {}, None, None
        self._visible_keywords = {}

    def _ensure_catalog(self) -> None:
        """Under the lock, before a commit: the catalog this object holds open must still be the file
        in the folder. When another process removed a collection it had just created (its first
        batch failed) and this one had opened it meanwhile, a commit would land in a deleted file and
        be lost; instead the collection is made again and the commit goes there."""
        if self._catalog is not None and not self._catalog.is_current():
            self._forget()
        if self._catalog is None:
            self._create()

    def delete_document(self, doc_id: str) -> bool:
        """Remove a document with its pages, chunks and vectors; False when it was not there."""
        return bool(self.delete_documents([doc_id]))

    def delete_documents(self, doc_ids: Iterable[str]) -> list[str]:
        """Remove documents as one batch (all of them, or on any error none); returns the ids that
        were there. A search that starts after this returns never finds them."""
        from vectrixdb.ingest import remove
        from vectrixdb.reading import check_doc_id

        if isinstance(doc_ids, str):
            raise BadInput(f"delete_documents takes a list of ids, not the text {doc_ids!r} (see delete_document)")
        doc_ids = list(doc_ids)
        for doc_id in doc_ids:
            check_doc_id(doc_id)
        self.catalog  # noqa: B018 - NotFound for a collection that was never made: deleting never creates it
        return remove(self, doc_ids)

    def add_vectors(self, space: str, model: EmbeddingModel, *, progress: bool = True) -> int:
        """Embed every chunk again with another model into the named vector space `space`."""
        from vectrixdb.ingest import add_space

        self._create()
        return add_space(self, space, model, progress)

    # reading back ---------------------------------------------------------------------------
    def documents(self) -> list[dict]:
        state = self.catalog.state()  # not the generation alone: a restored backup can repeat a number
        if self._docs_cache is None or self._docs_cache[0] != state:
            self._docs_cache = (state, self.catalog.documents())
        return self._docs_cache[1]

    def document(self, doc_id: str):
        """The kept Markdown of a document as a Document with its pages (None when absent)."""
        from vectrixdb.reading import Document, Page

        def read() -> Document | None:
            markdown = self.catalog.markdown(doc_id)
            if markdown is None:
                return None
            pages = tuple(Page(p["number"], p["start"], p["end"], tuple(p["flags"]), p["score"])
                          for p in self.catalog.pages(doc_id))
            return Document(doc_id, markdown, pages)

        return self._at_one_state(read)

    def chunks(self, doc_ids: Iterable[str] | None = None) -> list[dict]:
        """The chunks as a search hands them back, in document order: dicts with chunk_id, doc_id,
        text, pages, headings, start and end. A parent-child build gives each parent section once
        (under its first child's id), since that is what a search returns; doc_ids narrows the list."""
        doc_ids = None if doc_ids is None else list(doc_ids)
        return self._at_one_state(lambda: self._chunks(doc_ids))

    def _chunks(self, doc_ids: list[str] | None) -> list[dict]:
        out: list[dict] = []
        seen: set = set()
        markdown: dict[str, str] = {}
        pages: dict[str, list[dict]] = {}
        for row in self.catalog.chunk_listing(doc_ids):
            doc = row["doc_id"]
            if doc not in markdown:
                markdown[doc] = self.catalog.markdown(doc) or ""
            start, end, on = row["start"], row["end"], row["pages"]
            if row["parent"] is not None:
                start, end = row["parent"]
                if (doc, start) in seen:
                    continue
                seen.add((doc, start))
                if doc not in pages:
                    pages[doc] = self.catalog.pages(doc)
                on = tuple(p["number"] for p in pages[doc] if p["start"] < end and start < p["end"])
            out.append({"chunk_id": row["chunk_id"], "doc_id": doc, "text": markdown[doc][start:end], "pages": on,
                        "headings": row["headings"], "start": start, "end": end, "note": row["note"]})
        return out

    def check(self) -> list[str]:
        """What is wrong with the collection on disk, as sentences (an empty list: nothing).

        Checks, at one committed state: SQLite's own integrity check; every chunk's document is
        there and every document has its pages; each vector space holds exactly one vector per chunk
        of its dimension; and each saved index that is stamped with the current state holds exactly
        the catalog's chunk keys. A saved index stamped with an older state is not a fault (the next
        use rebuilds it from the catalog) and is left out."""
        from vectrixdb.store.keywords import KeywordIndex
        from vectrixdb.store.vectors import VectorIndex

        def read() -> list[str]:
            problems = [f"SQLite: {line}" for (line,) in self.catalog.conn.execute("PRAGMA integrity_check")
                        if line != "ok"]
            problems += self.catalog.orphans()
            state, chunk_keys = self.catalog.state(), set(self.catalog.chunk_texts()[0])
            for space, info in self.spaces.items():
                keys, vecs = self.catalog.vectors(space)
                if set(keys.tolist()) != chunk_keys or len(keys) != len(chunk_keys):
                    problems.append(f"vector space {space!r} holds {len(keys)} vectors for {len(chunk_keys)} chunks")
                if len(keys) and vecs.shape[1] != info["dim"]:
                    problems.append(f"vector space {space!r} holds vectors of {vecs.shape[1]} numbers, not {info['dim']}")
                saved = VectorIndex(self.folder, space, info["dim"])
                if saved.load(state) and set(saved.keys.tolist()) != chunk_keys:
                    problems.append(f"{saved.path.name} is stamped as current but holds other keys than the catalog")
            words = KeywordIndex(self.folder)
            if words.load(state) and set(words.keys.tolist()) != chunk_keys:
                problems.append("the keyword index is stamped as current but holds other keys than the catalog")
            return problems

        return self._at_one_state(read)

    def info(self) -> dict:
        return {"name": self.name, "path": str(self.folder), **self.catalog.counts(), "spaces": self.spaces,
                "chunking": self.catalog.get("chunking"), "generation": self.catalog.generation()}

    # search ---------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, *, mode: str = searching.DEFAULT_MODE, rerank: Reranker | bool | None = None,
               vectors: str | None = None, where: dict | None = None, _principal: dict | None = None) -> list[Hit]:
        """Ranked hits for a query. mode: hybrid, the default (reciprocal rank fusion of the two
        others), dense (cosine on the vector space `vectors`) or keyword (BM25); rerank: a
        cross-encoder re-scores the top candidates; where: metadata filter, e.g. {"year": 2021} or
        {"doc_id": [...]}.

        What a k gets is the first k of what any larger k gets, in every mode, because each mode's
        ranking is one fixed list that k only cuts: dense and keyword rank every candidate by score,
        then key; hybrid fuses a dense and a keyword pool of fixed depth HYBRID_POOL (300), and a
        k that needs more hits than that fusion gives takes, after them, what the fusion of pools
        twice as deep adds (and so on); a reranker re-scores the hits RERANK_DEPTH (50) at a time,
        in the mode's order. Dense search of the HNSW graph (over 20,000 vectors) is read the same
        way: what a search twice as deep adds comes after."""
        return searching.search(self, query, k, mode=mode, rerank=rerank, vectors=vectors, where=where,
                                principal=_principal)

    def similar(self, text_or_chunk_id: str, k: int = 10, *, vectors: str | None = None, where: dict | None = None,
                _principal: dict | None = None) -> list[Hit]:
        """Chunks most like a text, or like a stored chunk (given its chunk id; it is left out).

        For a principal, a chunk id of a document it may not see is taken as text, exactly as a
        collection without that document would take it: the answer does not tell that it exists."""
        return searching.similar(self, text_or_chunk_id, k, vectors=vectors, where=where, principal=_principal)

    def as_principal(self, principal: dict) -> "PrincipalView":
        """What `principal` (e.g. {"group": ["hr"]}) may see, as if nothing else were stored."""
        from vectrixdb.policy import check_access

        return PrincipalView(self, check_access(principal, "principal"))


class PrincipalView:
    """What one principal may see of a collection, and nothing more: it answers every question
    (search in each mode, similar, documents, document, info) exactly as a collection holding only
    the visible documents would, keyword statistics included.

    It is a boundary, not a filter with the real collection one attribute away: the collection
    and the principal are kept in private slots (no `db`, no `principal`, nothing to set), and
    only the read methods below are offered. It satisfies the same `Searchable` surface as a
    Vectrix (search, similar, documents, document, info, name, spaces, embedder), so the
    evaluation verbs take either.
    """

    __slots__ = ("__db", "__principal")
    __db: Vectrix  # declared for type checkers; set once in __init__
    __principal: dict

    def __init__(self, db: Vectrix, principal: dict):
        object.__setattr__(self, "_PrincipalView__db", db)
        object.__setattr__(self, "_PrincipalView__principal", {k: list(v) for k, v in principal.items()})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a principal's view cannot be changed (tried to set {name!r})")

    def __repr__(self) -> str:
        return f"PrincipalView of {self.name!r}"

    @property
    def name(self) -> str:
        return self.__db.name

    @property
    def spaces(self) -> dict[str, dict]:
        return self.__db.spaces

    def embedder(self, space: str = DEFAULT_SPACE) -> Embedder:
        return self.__db.embedder(space)

    def search(self, query: str, k: int = 10, **options) -> list[Hit]:
        """As Vectrix.search, over the visible documents only."""
        return self.__db.search(query, k, _principal=self.__principal, **options)

    def similar(self, text_or_chunk_id: str, k: int = 10, **options) -> list[Hit]:
        """As Vectrix.similar; the id of a chunk it may not see is taken as text, like any unknown id."""
        return self.__db.similar(text_or_chunk_id, k, _principal=self.__principal, **options)

    def documents(self) -> list[dict]:
        """The visible documents' catalog rows (copies: changing them changes nothing)."""
        import copy

        from vectrixdb.policy import visible

        return [copy.deepcopy(d) for d in self.__db.documents() if visible(d["access"], self.__principal)]

    def document(self, doc_id: str):
        """A visible document with its pages; None for one that is hidden or absent alike."""
        from vectrixdb.policy import visible

        if not any(d["doc_id"] == doc_id and visible(d["access"], self.__principal) for d in self.__db.documents()):
            return None
        return self.__db.document(doc_id)

    def chunks(self) -> list[dict]:
        """As Vectrix.chunks, of the visible documents only."""
        return self.__db.chunks([d["doc_id"] for d in self.documents()])

    def info(self) -> dict:
        """Name, counts of the visible documents, pages and chunks, vector spaces and chunking.
        The folder and the generation (which moves with hidden writes too) are left out."""
        docs = self.documents()
        pages = sum(len(self.__db.catalog.pages(d["doc_id"])) for d in docs)
        chunks = len(self.__db.catalog.keys_of_documents([d["doc_id"] for d in docs]))
        return {"name": self.name, "documents": len(docs), "pages": pages, "chunks": chunks,
                "spaces": self.spaces, "chunking": self.__db.catalog.get("chunking")}
