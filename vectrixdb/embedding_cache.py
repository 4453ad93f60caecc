"""The on-disk embedding cache: vectors keyed by a model's identity and the SHA-256 of the text.

Every embedder puts its vectors here, the bundled model (vectrixdb.embedding) and a served one
(vectrixdb.served.embedding) alike, each under its own key, so the same text is never embedded twice
by the same model, whichever collection or process asks. It sits below both, which is why it is a
module of its own; vectrixdb.embedding hands out the same names.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np


def home() -> Path:
    """Root folder for collections and the embedding cache: $VECTRIXDB_HOME or ~/.vectrixdb."""
    return Path(os.environ.get("VECTRIXDB_HOME") or Path.home() / ".vectrixdb")



class EmbeddingCache:
    """SQLite table of vectors keyed by (model key, sha256(text)); safe across processes (WAL).

    A damaged file (garbled, truncated, a folder in its place) is moved aside with a warning and an
    empty cache started, so one bad file never breaks every collection of a home; an entry that is
    not a unit-length row of `dim` float32 values is ignored, so the caller recomputes (and replaces) it.
    """

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash BLOB, vec BLOB, PRIMARY KEY (model, hash)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, stat TEXT NOT NULL, digest TEXT NOT NULL);"
    )

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else home() / "cache" / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._run(lambda conn: None)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(self.SCHEMA)
            self._local.conn = conn
        return conn

    def _run(self, work):
        """`work(conn)`; when the file turns out damaged, move it aside and do the work once more."""
        try:
            return work(self._conn())
        except sqlite3.DatabaseError as exc:
            damaged = getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
            if not damaged and not self.path.is_dir():
                raise  # locked, read-only, ...: not damage, so not ours to throw away
            self._move_aside(exc)
            return work(self._conn())

    def _move_aside(self, exc: Exception) -> None:
        conn, self._local.conn = getattr(self._local, "conn", None), None
        if conn is not None:
            conn.close()
        from vectrixdb.io import move_aside_sqlite

        aside = move_aside_sqlite(self.path)
        warnings.warn(f"embedding cache {self.path} is damaged ({exc}); moved it aside to {aside.name} and "
                      "started an empty one (vectors are computed again as needed)", RuntimeWarning, stacklevel=4)

    def get(self, model: str, hashes: Sequence[bytes], dim: int | None = None) -> dict[bytes, np.ndarray]:
        """The cached vectors among `hashes`; an entry of the wrong size or not of unit length is left out."""
        def read(conn: sqlite3.Connection) -> dict[bytes, np.ndarray]:
            found: dict[bytes, np.ndarray] = {}
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                rows = conn.execute(
                    f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({','.join('?' * len(part))})",
                    (model, *part),
                )
                for h, blob in rows:
                    if not isinstance(blob, bytes) or not blob or len(blob) % 4 or (dim and len(blob) != 4 * dim):
                        continue
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if abs(float(np.dot(vec, vec)) - 1.0) < 1e-3:  # NaN fails too; garbled bytes almost surely do
                        found[h] = vec
            return found

        return self._run(read)

    def put(self, model: str, items: dict[bytes, np.ndarray]) -> None:
        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()],
                )

        self._run(write)

    def file_digest(self, path: Path) -> str:
        """SHA-256 of a file's bytes, remembered by its size, mtime and inode: a model's weights are
        hashed once per change, not each time the model is opened. A file changed in the last two
        seconds is not remembered (as git does), since a rewrite within the clock's tick keeps its mtime."""
        st = path.stat()
        stat = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
        row = self._run(lambda c: c.execute("SELECT stat, digest FROM files WHERE path = ?", (str(path),)).fetchone())
        if row and row[0] == stat:
            return row[1]
        digest = file_sha256(path)
        if time.time_ns() - st.st_mtime_ns < 2_000_000_000:
            return digest

        def remember(conn: sqlite3.Connection) -> None:
            with conn:
                conn.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (str(path), stat, digest))

        self._run(remember)
        return digest


def file_sha256(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()

