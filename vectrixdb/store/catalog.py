"""The SQLite catalog: settings, documents with their kept Markdown and pages, chunks, vectors.

The catalog is the truth; the usearch and bm25s files are derived from it and stamped with the
catalog's State: its identity (a random id made with the catalog), its generation and the random
token of its last commit. A stamp that is not exactly the current State is never trusted, so a
catalog that was reset, or an older backup put back and written to again, rebuilds its indexes
instead of loading files that describe other text.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from vectrixdb.errors import IOFailure

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
  doc_id TEXT PRIMARY KEY, source TEXT, markdown TEXT NOT NULL, metadata TEXT NOT NULL,
  access TEXT NOT NULL, notes TEXT NOT NULL, settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
  doc_id TEXT NOT NULL, number INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
  flags TEXT NOT NULL, score REAL NOT NULL, PRIMARY KEY (doc_id, number));
CREATE TABLE IF NOT EXISTS chunks (
  key INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL,
  ord INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, pages TEXT NOT NULL,
  headings TEXT NOT NULL, parent_start INTEGER, parent_end INTEGER, embedded TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id);
CREATE TABLE IF NOT EXISTS vectors (
  space TEXT NOT NULL, key INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (space, key));
"""


@dataclass(frozen=True)
class State:
    """Which catalog, at which commit: what a derived file must be stamped with to be trusted."""

    catalog: str
    generation: int
    commit: str

    def stamp(self, **extra: Any) -> bytes:
        """The JSON stamp a derived file is saved with: this state plus what the file needs checked."""
        return json.dumps({**asdict(self), **extra}, sort_keys=True).encode()

    def matches(self, stamp: dict) -> bool:
        return all(stamp.get(k) == v for k, v in asdict(self).items())


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def digest(data: bytes) -> str:
    """Checksum of a derived file's bytes, recorded in its stamp and checked before it is loaded."""
    return hashlib.sha256(data).hexdigest()


def _connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """A connection to the catalog, and whether it is read-only. A catalog in a folder this process
    cannot write (a read-only mount, a shared copy) is opened read-only: SQLite's own read-only mode,
    else, when the folder cannot hold WAL's shared-memory file, as an immutable file."""
    def connect(target: str | Path, uri: bool = False) -> sqlite3.Connection:
        return sqlite3.connect(target, timeout=60, isolation_level=None, check_same_thread=False, uri=uri)

    if os.access(path.parent, os.W_OK) or not path.exists():
        return connect(path), False
    for mode in ("mode=ro", "immutable=1"):
        conn = connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn, True
        except sqlite3.OperationalError:
            conn.close()
    return connect(path), False  # neither worked: SQLite's own error (on first use) says why


def write_failure(path: Path, exc: BaseException, what: str) -> IOFailure:
    """The family's error for a catalog SQLite could not write (a full disk, a read-only folder)."""
    return IOFailure(f"{path}: could not write {what} ({exc}); nothing of it was stored")


class Catalog:
    def __init__(self, path: Path):
        self.path = path
        self.conn, self.read_only = _connect(path)
        self.inode = _inode(path)  # which file was opened: see is_current
        self.conn.execute("PRAGMA foreign_keys=ON")
        if not self.read_only:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.executescript(SCHEMA)
            self._add_missing_columns()
        if self.get("identity") is None:  # written once, with the catalog (or an older one's first open)
            try:
                self.conn.execute("INSERT OR IGNORE INTO meta VALUES ('identity', ?)",
                                  (json.dumps(secrets.token_hex(16)),))
            except sqlite3.OperationalError:  # read-only: trust no saved index rather than refuse to open
                pass
        self.identity: str = self.get("identity") or f"unrecorded-{secrets.token_hex(16)}"

    def _add_missing_columns(self) -> None:
        """Columns later versions added (a chunk's contextual note), added to an older catalog."""
        have = {row[1] for row in self.conn.execute("PRAGMA table_info(chunks)")}
        if "note" not in have:
            try:
                self.conn.execute("ALTER TABLE chunks ADD COLUMN note TEXT NOT NULL DEFAULT ''")
            except sqlite3.OperationalError:  # read-only: the column reads as missing; notes show as ""
                pass

    def is_current(self) -> bool:
        """Whether the file this connection writes to is still the catalog at `path` (not removed,
        nor replaced by another file, since it was opened)."""
        return self.inode is not None and _inode(self.path) == self.inode

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (the caller holds the collection's lock): committed whole, or on any
        error rolled back (SQLite may have rolled back itself, as after a COMMIT on a full disk). A
        file SQLite cannot write (full disk, read-only folder) is the family's IOFailure naming it."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            yield
            self.conn.execute("COMMIT")
        except BaseException as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):
                raise write_failure(self.path, exc, "the batch") from exc
            raise

    # settings ---------------------------------------------------------------------------------
    def get(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set(self, key: str, value: Any) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def generation(self) -> int:
        return self.get("generation", 0)

    def state(self) -> State:
        """The catalog's identity, generation and last commit token, read in one statement."""
        rows = dict(self.conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'commit')"))
        return State(self.identity, json.loads(rows.get("generation", "0")), json.loads(rows.get("commit", '""')))

    def bump(self) -> State:
        """Move to the next generation with a fresh commit token (inside the writer's transaction)."""
        gen = self.generation() + 1
        self.set("generation", gen)
        self.set("commit", secrets.token_hex(8))
        return self.state()

    # writes (inside a transaction the caller holds) ------------------------------------------
    def delete_document(self, doc_id: str) -> list[int]:
        keys = [k for (k,) in self.conn.execute("SELECT key FROM chunks WHERE doc_id = ?", (doc_id,))]
        for table in ("documents", "pages", "chunks"):
            self.conn.execute(f"DELETE FROM {table} WHERE doc_id = ?", (doc_id,))
        self.conn.executemany("DELETE FROM vectors WHERE key = ?", [(k,) for k in keys])
        return keys

    def insert_document(self, doc, metadata: dict, access: dict, settings: dict) -> None:
        self.conn.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
            (doc.doc_id, doc.source, doc.markdown, json.dumps(metadata), json.dumps(access),
             json.dumps(list(doc.notes)), json.dumps(settings)),
        )
        self.conn.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?, ?, ?)",
            [(doc.doc_id, p.number, p.start, p.end, json.dumps(list(p.flags)), p.score) for p in doc.pages],
        )

    def insert_chunks(self, doc_id: str, chunks: Sequence, embedded: Sequence[str],
                      notes: Sequence[str] | None = None) -> list[int]:
        """Chunks as offsets; `embedded` is what the embedder and keyword index saw (kept only when
        it differs from the chunk's text), `notes` a contextual note per chunk, kept apart from it."""
        keys = []
        for i, (c, text) in enumerate(zip(chunks, embedded)):
            parent = c.parent
            cur = self.conn.execute(
                "INSERT INTO chunks (chunk_id, doc_id, ord, start, \"end\", pages, headings, parent_start, "
                "parent_end, embedded, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (f"{doc_id}::{i}", doc_id, i, c.start, c.end, json.dumps(list(c.pages)), json.dumps(list(c.headings)),
                 parent.start if parent else None, parent.end if parent else None, text if text != c.text else "",
                 notes[i] if notes else ""),
            )
            keys.append(int(cur.lastrowid or 0))  # an INSERT's rowid (0 is never one; lastrowid is set here)
        return keys

    def insert_vectors(self, space: str, keys: Sequence[int], vecs: np.ndarray) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
            [(space, int(k), np.asarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vecs)],
        )

    # reads ------------------------------------------------------------------------------------
    def vectors(self, space: str) -> tuple[np.ndarray, np.ndarray]:
        rows = self.conn.execute("SELECT key, vec FROM vectors WHERE space = ? ORDER BY key", (space,)).fetchall()
        keys = np.array([k for k, _ in rows], dtype=np.uint64)
        vecs = np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows]) if rows else np.zeros((0, 0), np.float32)
        return keys, vecs

    def chunk_texts(self) -> tuple[list[int], list[str]]:
        """Every searchable chunk's key and the text its keyword index should see."""
        rows = self.conn.execute(
            'SELECT c.key, substr(d.markdown, c.start + 1, c."end" - c.start), c.embedded FROM chunks c '
            "JOIN documents d USING (doc_id) ORDER BY c.key"
        ).fetchall()
        return [k for k, _, _ in rows], [e or t for _, t, e in rows]

    def chunk_rows(self, keys: Iterable[int]) -> dict[int, dict]:
        """Each chunk's row with its text (and its parent section's), read from its document's kept
        Markdown: each document's Markdown is read once per call, not once per row (a 300-page
        report's Markdown is over a million characters)."""
        keys = [int(k) for k in keys]
        rows = []
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            rows += self.conn.execute(
                'SELECT key, chunk_id, doc_id, start, "end", pages, headings, parent_start, parent_end FROM chunks '
                f"WHERE key IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
        markdown = {doc: self.markdown(doc) or "" for doc in {row[2] for row in rows}}
        out: dict[int, dict] = {}
        for key, chunk_id, doc_id, start, end, pages, headings, ps, pe in rows:
            md = markdown[doc_id]
            out[key] = {
                "chunk_id": chunk_id, "doc_id": doc_id, "start": start, "end": end, "text": md[start:end],
                "pages": tuple(json.loads(pages)), "headings": tuple(json.loads(headings)),
                "parent": (ps, pe, md[ps:pe]) if ps is not None else None,
            }
        return out

    def key_of(self, chunk_id: str) -> int | None:
        row = self.conn.execute("SELECT key FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
        return row[0] if row else None

    def documents(self) -> list[dict]:
        rows = self.conn.execute("SELECT doc_id, source, metadata, access, notes, settings FROM documents ORDER BY doc_id")
        return [
            {"doc_id": d, "source": s, "metadata": json.loads(m), "access": json.loads(a), "notes": json.loads(n),
             "settings": json.loads(st)}
            for d, s, m, a, n, st in rows
        ]

    def has_document(self, doc_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)).fetchone() is not None

    def markdown(self, doc_id: str) -> str | None:
        row = self.conn.execute("SELECT markdown FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def pages(self, doc_id: str) -> list[dict]:
        rows = self.conn.execute(
            'SELECT number, start, "end", flags, score FROM pages WHERE doc_id = ? ORDER BY number', (doc_id,)
        )
        return [{"number": n, "start": s, "end": e, "flags": json.loads(f), "score": sc} for n, s, e, f, sc in rows]

    def keys_of_documents(self, doc_ids: Iterable[str]) -> np.ndarray:
        doc_ids = list(doc_ids)
        keys: list[int] = []
        for i in range(0, len(doc_ids), 500):
            part = doc_ids[i : i + 500]
            keys += [k for (k,) in self.conn.execute(
                f"SELECT key FROM chunks WHERE doc_id IN ({','.join('?' * len(part))})", part)]
        return np.array(sorted(keys), dtype=np.uint64)

    def orphans(self) -> list[str]:
        """Rows that belong to nothing: chunks or pages of a missing document, a document without pages,
        vectors of a missing chunk (as sentences; read by Vectrix.check)."""
        checks = {
            "chunks of a missing document": "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT doc_id FROM documents)",
            "pages of a missing document": "SELECT count(*) FROM pages WHERE doc_id NOT IN (SELECT doc_id FROM documents)",
            "documents without pages": "SELECT count(*) FROM documents WHERE doc_id NOT IN (SELECT doc_id FROM pages)",
            "vectors of a missing chunk": "SELECT count(*) FROM vectors WHERE key NOT IN (SELECT key FROM chunks)",
        }
        found = {what: self.conn.execute(sql).fetchone()[0] for what, sql in checks.items()}
        return [f"{n} {what}" for what, n in found.items() if n]

    def counts(self) -> dict[str, int]:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        return {"documents": one("SELECT count(*) FROM documents"), "pages": one("SELECT count(*) FROM pages"),
                "chunks": one("SELECT count(*) FROM chunks")}

    def chunk_listing(self, doc_ids: Iterable[str] | None = None) -> list[dict]:
        """Every chunk (of `doc_ids`, else of all documents) in document order, with its span, pages,
        headings and parent-section span; read by Vectrix.chunks (the question writer's passages)."""
        sql = ('SELECT chunk_id, doc_id, ord, start, "end", pages, headings, parent_start, parent_end, note '
               "FROM chunks{} ORDER BY doc_id, ord")
        if doc_ids is None:
            rows = self.conn.execute(sql.format("")).fetchall()
        else:
            doc_ids, rows = list(doc_ids), []
            for i in range(0, len(doc_ids), 500):
                part = doc_ids[i : i + 500]
                rows += self.conn.execute(sql.format(f" WHERE doc_id IN ({','.join('?' * len(part))})"), part).fetchall()
            rows.sort(key=lambda r: (r[1], r[2]))
        return [{"chunk_id": c, "doc_id": d, "ord": o, "start": s, "end": e, "pages": tuple(json.loads(p)),
                 "headings": tuple(json.loads(h)), "parent": (ps, pe) if ps is not None else None, "note": note}
                for c, d, o, s, e, p, h, ps, pe, note in rows]
