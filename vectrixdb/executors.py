"""Where cells of work run: here, or on Ray; finished cells are kept, so nothing is done twice.

A *cell* is a pure function of its settings and inputs whose result is a JSON-able value: one
build of a sweep, the chunking of one build of a comparison, one shard of texts to embed, one
question of an evaluation. Its key is the SHA-256 of the function's name, the settings, the
digests of the inputs, the vectrixdb version and the code: code_digest, a SHA-256 of every .py file
of the package taken once per process, and, for the cell's function and the functions it is given
to run (`code`, such as a chunker registered from your own module or notebook), the identity of
those that live outside the package (code_identity.py: their code objects and every global they
name, from any module of yours, by value; a builtin, or a global that cannot be keyed, is keyed by
its name or type with a warning). So an upgrade, an edited chunker
of the package or an edited chunker of yours re-registered recomputes rather than returning what
the old code computed. Results are kept under that key in `<home>/cells.sqlite` as they come
back, so a run that stopped starts again without redoing finished cells, and the same cell is
never computed twice. (Cells whose result must not be kept, such as a shard's vectors, which the
embedding cache keeps instead, pass `keep=False`.)

executor=:
- "local" (the default): cells run here, one after another; each uses the machine's cores inside
  (torch's threads for embedding), so running them side by side would only oversubscribe.
- "ray": a Ray cluster started on this machine for the call (as many CPUs as it has), shut down after.
- "ray://host:port" or "auto": an existing Ray cluster (ray.init(address=...)).
Results come back in the order the cells were given, whichever finished first, so a run on Ray gives
the same rows as a local one. A cell whose worker died (killed, out of memory) is run again on
another worker, up to WORKER_RETRIES times: cells are pure, so the rerun gives the same result.
Model calls never leave the driver: every call goes through the one ChatWriter there, so its rate
limiter and cache hold for the whole run however many workers there are.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from vectrixdb.code_identity import code_identity
from vectrixdb.errors import BadInput
from vectrixdb.roles import EmbeddingModel
from vectrixdb.extras import needs


@dataclass(frozen=True, eq=False)
class Cell:
    fn: Callable[..., Any]  # a module-level function (Ray ships it by reference)
    settings: dict
    inputs: tuple = ()  # passed after settings; their digests are part of the key
    digests: tuple[str, ...] = ()
    keep: bool = True
    code: tuple[Callable[..., Any], ...] = ()  # further functions it runs (a registered chunker): part of the key
    key: str = field(init=False)

    def __post_init__(self):
        from vectrixdb.version import __version__

        body = json.dumps({"fn": f"{self.fn.__module__}.{self.fn.__qualname__}", "settings": self.settings,
                           "inputs": list(self.digests), "vectrixdb": __version__, "code": code_digest(),
                           "runs": [code_identity(f) for f in (self.fn, *self.code)]},
                          sort_keys=True, default=str)
        object.__setattr__(self, "key", hashlib.sha256(body.encode("utf-8")).hexdigest())

    def __getstate__(self) -> dict:
        """What a Ray worker gets: all but `code`, which only the key needed (already computed), so
        a chunker that cannot be pickled never stops a cell from being shipped."""
        return {**self.__dict__, "code": ()}

    def run(self) -> Any:
        return self.fn(self.settings, *self.inputs)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """The identity of the code a cell runs: a SHA-256 over the path and bytes of every .py file
    of the installed vectrixdb package, in path order. Any edit (a chunker, a metric) changes it,
    so no kept cell outlives the code that computed it; read once per process (a few ms)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def digest(value: Any) -> str:
    """A stable SHA-256 of JSON-able data (documents and questions pass their to_json/markdown)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()


class CellStore:
    """Finished cells' results by key: a SQLite table shared by every run on this machine."""

    def __init__(self, path: str | Path | None = None):
        from vectrixdb.embedding import home

        self.path = Path(path) if path else home() / "cells.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._conn() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, result TEXT NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def get(self, keys: Sequence[str]) -> dict[str, Any]:
        out = {}
        with self._conn() as conn:
            for i in range(0, len(keys), 500):
                part = list(keys[i: i + 500])
                rows = conn.execute(f"SELECT key, result FROM cells WHERE key IN ({','.join('?' * len(part))})", part)
                out.update({k: json.loads(r) for k, r in rows})
        return out

    def put(self, key: str, result: Any) -> None:
        with self._conn() as conn:
            conn.execute("INSERT OR REPLACE INTO cells VALUES (?, ?)", (key, json.dumps(result)))


WORKER_RETRIES = 3  # reruns of a cell whose Ray worker died; an exception the cell raised is never retried


def _run_cell(cell: Cell) -> Any:
    return cell.run()


def run_cells(cells: Sequence[Cell], executor: str = "local", *, store: CellStore | None = None,
              progress: bool = False, desc: str = "cells") -> list[Any]:
    """Each cell's result, in the order given; kept cells are read back instead of run again."""
    from tqdm.auto import tqdm

    check_executor(executor)
    store = store if store is not None else CellStore()
    done = store.get([c.key for c in cells if c.keep])
    unique = {c.key: c for c in cells}  # a repeated cell runs once
    todo = [c for c in unique.values() if not (c.keep and c.key in done)]
    results: dict[str, Any] = dict(done)
    bar = tqdm(total=len(todo), desc=desc, disable=not progress or not todo)
    for cell, result in _dispatch(todo, executor):
        results[cell.key] = result
        if cell.keep:
            store.put(cell.key, result)
        bar.update(1)
    bar.close()
    return [results[c.key] for c in cells]


def check_executor(executor: str) -> None:
    if executor == "local":
        return
    if executor == "ray" or executor == "auto" or str(executor).startswith("ray://"):
        with needs("ray"):  # before any work: MissingExtra names the extra
            import ray  # noqa: F401
        return
    raise BadInput(f"executor is 'local', 'ray' or a Ray address ('ray://host:port' or 'auto'), not {executor!r}")


def _dispatch(cells: list[Cell], executor: str):
    """(cell, result) as they finish: here in order, or on Ray."""
    if executor == "local" or not cells:
        for cell in cells:
            yield cell, cell.run()
        return
    with needs("ray"):
        import ray

    started_here = not ray.is_initialized()
    if started_here:
        if executor == "ray":
            ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"VECTRIXDB_HOME": os.environ.get("VECTRIXDB_HOME", "")}})
        else:
            ray.init(address=executor, log_to_driver=False)
    try:
        remote = ray.remote(max_retries=WORKER_RETRIES, retry_exceptions=False)(_run_cell)
        pending = {remote.remote(cell): cell for cell in cells}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                yield pending.pop(ref), ray.get(ref)
    finally:
        if started_here:
            ray.shutdown()


def embed_corpus(texts: Sequence[str], model: EmbeddingModel = None, *, executor: str = "local", shard_size: int = 2048,
                 progress: bool | str = False):
    """Unit vectors for many texts, one row each: the on-disk cache first, then what is missing,
    distinct texts only, in shards of `shard_size` spread over the executor's workers (each loads
    the model once); vectors come back here and go into the cache, so nothing is embedded twice.

    Shards are cut from the missing texts in one canonical order (longest first, then by hash),
    so which texts share a batch does not depend on how many workers there are."""
    import numpy as np

    from vectrixdb.embedding import get_embedder, text_hash

    # duck-typed from here on: a SentenceEmbedder's cache and counters are used when it has them
    emb: Any = model if hasattr(model, "encode") and not isinstance(model, str) else get_embedder(model)
    texts = list(texts)
    cache = getattr(emb, "cache", None)
    if executor == "local" or cache is None or not texts:
        return emb.encode(texts, progress=progress) if progress else emb.encode(texts)  # progress: True or a label
    check_executor(executor)
    hashes = [text_hash(t) for t in texts]
    known = cache.get(emb.cache_key, list(set(hashes)), emb.dim)
    missing: dict[bytes, str] = {}
    for h, t in zip(hashes, texts):
        if h not in known:
            missing.setdefault(h, t)
    order = sorted(missing, key=lambda h: (-len(missing[h]), h))
    shards = [order[i: i + shard_size] for i in range(0, len(order), shard_size)]
    cells = [Cell(_embed_shard, {"model": getattr(emb, "name", None), "batch": getattr(emb, "batch_size", 64)},
                  ([missing[h] for h in shard], portable(emb)), (digest([h.hex() for h in shard]),), keep=False)
             for shard in shards]
    for shard, vectors in zip(shards, run_cells(cells, executor, progress=bool(progress), desc="embedding shards")):
        fresh = dict(zip(shard, np.asarray(vectors, dtype=np.float32)))
        cache.put(emb.cache_key, fresh)
        known.update(fresh)
    if hasattr(emb, "embedded"):
        emb.embedded += len(missing)
        emb.reused += len(texts) - len(missing)
    return np.stack([known[h] for h in hashes])


def _embed_shard(settings: dict, texts: list[str], model: Any):
    """One shard on a worker: the model (loaded once per worker process), no cache (the driver keeps it)."""
    from vectrixdb.embedding import Embedder, get_embedder

    emb = model if isinstance(model, Embedder) and not isinstance(model, str) else \
        get_embedder(model, cache=False, batch_size=settings["batch"])
    return emb.encode(texts)


def portable(emb: Any) -> Any:
    """What a worker needs to load the same model: the bundled model's or a sentence-transformers
    model's name or folder (each worker loads it once), else the Embedder object itself."""
    from vectrixdb.embedding import SentenceEmbedder

    if isinstance(emb, SentenceEmbedder) and (emb._source or emb._bundled):
        return emb._source or emb.name
    return emb
