"""One usearch index per named vector space, saved beside the catalog and stamped with its State.

Vectors are unit length, so cosine similarity is the inner product. Collections up to
EXACT_LIMIT vectors are searched exactly (a brute-force matrix product is both faster and exact at
that size); larger ones use usearch's HNSW graph, searched at the smallest breadth measured to give
recall@10 0.99 at the index's size (search_breadth).

The graph holds its vectors in bfloat16 (GRAPH_DTYPE). Scores are never bfloat16: the index keeps
each vector in float32 too, the exact search uses those, and the graph's candidates (`breadth` of
them) are scored again in float32 and ordered by that score (graph_search), so a similarity reads
the same whichever path found it. At 1,000,000 SciFact-derived vectors on a 2-core AMD EPYC with
avx512_bf16 (benchmarks/hnsw_rule_1m_bf16.json against the float32 graph's hnsw_rule_1m.json) the
graph built with 2,124 CPU-s instead of 5,502 (faiss's IndexHNSWFlat, float32, at the same settings:
2,562), a search at breadth 512 took 5.0 ms p50 instead of 10.7, at recall@10 0.9957 instead of
0.9956; the memory is 2.0 GB for the graph and 1.5 GB for the float32 copy, against 3.1 GB for
the float32 graph. Limited to AVX2 kernels (usearch's "haswell", faiss's AVX2; the CPU's AVX-512
and bfloat16 instructions hidden, benchmarks/hnsw_rule_1m_bf16_avx2.json) the same build took 1.60x
faiss's CPU and a search 7.8 ms at the same recall, 1.15x raw usearch's: within the rule, though on
that CPU faiss's HNSW searches faster (5.4 ms at recall@10 0.9977; 3.7 ms at 0.9956).

The file is derived from the catalog, so it is only trusted when its stamp (vectors.<space>.json)
names the catalog's current State and the SHA-256 of the file's bytes matches: the bytes are read
and checked first and only then handed to usearch, because a garbled file can crash the process
inside usearch's loader. Anything else is rebuilt from the catalog, with a logged note.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import cast

import numpy as np

from vectrixdb.store.catalog import State, digest
from vectrixdb.store.derived import Derived
from vectrixdb.extras import needs

EXACT_LIMIT = 20_000
CONNECTIVITY, EXPANSION_ADD = 64, 256  # the graph; see search_breadth for the search side
GRAPH_DTYPE = "bf16"  # the graph's copy of the vectors; the scores come from the float32 copy


# The smallest expansion_search with recall@10 >= 0.99 against exact search, measured on the float32 graph
# (CONNECTIVITY, EXPANSION_ADD) at three sizes of SciFact-derived vectors: 96 at 100,000 (0.9926;
# benchmarks/hnsw_rule.json), 128 at 300,000 (0.9938) and 512 at 1,000,000 (0.9956; 0.9948 in the
# build before; both in benchmarks/hnsw.json's history, up to commit 155fb69). At 1,000,000, 256 gave
# 0.9907 and 0.9896 in the two builds: too near 0.99 to rely on. Recall at a fixed breadth falls as
# the index grows, so an index between two measured sizes takes the larger one's breadth. Measured
# again on the bfloat16 graph searched as graph_search searches it: 0.9931 at 96 for 100,000, 0.9937
# at 128 for 300,000 (benchmarks/hnsw_rule_bf16.json) and 0.9957 at 512 for 1,000,000 (256: 0.9903;
# benchmarks/hnsw_rule_1m_bf16.json); in a second build of each, the store's own bench
# (benchmarks/hnsw.json): 0.9932, 0.9936 and 0.9957 (256: 0.9908).
MEASURED_BREADTHS = ((100_000, 96), (300_000, 128), (1_000_000, 512))


def search_breadth(n: int) -> int:
    """usearch's expansion_search for an index of n vectors (MEASURED_BREADTHS); past 1,000,000 it
    doubles each time the index grows fourfold (1,024 up to 4,000,000, then 2,048), which is not
    measured: the last measured step (300,000 to 1,000,000) needed 4x the breadth."""
    for size, breadth in MEASURED_BREADTHS:
        if n <= size:
            return breadth
    breadth, limit = MEASURED_BREADTHS[-1][1], MEASURED_BREADTHS[-1][0]
    while n > limit and breadth < 2048:
        breadth, limit = breadth * 2, limit * 4
    return breadth


_BLAS: list = []  # threadpoolctl's controller, made once (it looks up the loaded BLAS libraries)


def graph_search(index, keys: np.ndarray, vecs: np.ndarray, query: np.ndarray, k: int,
                 breadth: int) -> tuple[np.ndarray, np.ndarray]:
    """The top k of usearch `index` searched at `breadth`, scored in float32: the graph is asked for
    at least `breadth` candidates (so every k up to it gets the first k of one list), each is scored
    with its float32 vector (`vecs`, rows of the sorted `keys`) and they are ordered by (similarity
    descending, key), as the exact search orders. A candidate the graph's bfloat16 scores put just
    below the k-th but truly above it is thus kept: the top k is the true top k of the candidates."""
    index.expansion_search = breadth
    found = np.asarray(index.search(query, min(max(k, breadth), len(index)), threads=1).keys, dtype=np.uint64)
    with _one_blas_thread():
        sims = vecs[np.searchsorted(keys, found)] @ query
    top = np.lexsort((found, -sims))[:k]
    return found[top], sims[top]


def _one_blas_thread():
    """The exact search's matrix-vector product on one BLAS thread. It is at most EXACT_LIMIT rows:
    on a busy 2-core machine OpenBLAS's second thread waited for a core and one 1,651-row search
    took 21 ms instead of ~1.4 (issue 51). benchmarks/search_under_load.json measures whole searches
    both ways in turns (11,190 vectors, an AMD EPYC with AVX2): idle, one thread costs half a
    millisecond (p50 2.45 against 1.95 ms); beside two busy processes the two are within noise (p50
    6.9 / 6.5 ms, p95 11 / 12 ms; beside two BLAS-busy ones p50 11 / 12 ms, p95 24 / 24 ms), so the
    21 ms stall did not recur there, and one thread is kept for the machine where it did."""
    from threadpoolctl import ThreadpoolController

    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


def load_openvino_first() -> None:
    """Import openvino before usearch's compiled module, when openvino is installed (the int8
    default's runtime). Loaded the other way round, openvino's read_model fails with an empty
    RuntimeError ("Exception from src/inference/src/cpp/core.cpp:") for the rest of the process:
    seen with usearch 2.26.6 and openvino 2026.4.1 when a collection built by another embedder then
    had an int8 space added (tests/test_embedding.py plants it). The import costs about 40 ms once."""
    import importlib.util

    if "openvino" not in sys.modules and importlib.util.find_spec("openvino") is not None:
        from vectrixdb.embedding_openvino import load_openvino

        load_openvino()


class VectorIndex(Derived):
    """A vector space's usearch graph (GRAPH_DTYPE) and its float32 copy (`keys` sorted, `vecs` their
    rows), which gives every score. The saved file is usearch's bytes followed by the copy's keys and
    vectors; its stamp records where the graph ends."""

    def __init__(self, folder: Path, space: str, dim: int):
        load_openvino_first()
        with needs("store"):
            from usearch.index import Index

        self.path = folder / f"vectors.{space}.usearch"
        self.stamp_path = folder / f"vectors.{space}.json"
        self.dim = dim
        # A dense graph for high recall (benchmarks/hnsw.json has the figures, and its version at
        # commit 9f8813d the trials behind the choice; at 1,000,000 vectors a graph of connectivity
        # 32 and expansion_add 128 stayed below recall@10 0.99 at every breadth up to 512,
        # benchmarks/hnsw_rule.json). In float32 its build took 1.55x the CPU of faiss's IndexHNSWFlat
        # at the same settings at 100,000 vectors (a Xeon) and 2.12x at 1,000,000 (a 2-core AMD EPYC,
        # benchmarks/hnsw_rule_1m.json), over issue 51's 2x; in bfloat16 (GRAPH_DTYPE, the module's
        # docstring) 0.83x at 1,000,000. faiss's HNSW index cannot remove a vector, which every
        # update here does, so it cannot replace usearch. expansion_search is a search-time setting,
        # set per search from the index's size, so saved indexes get it too; a saved index keeps the
        # connectivity it was built with until rebuilt.
        self.index = Index(ndim=dim, metric="ip", dtype=GRAPH_DTYPE, connectivity=CONNECTIVITY,
                           expansion_add=EXPANSION_ADD)
        self.keys, self.vecs = np.zeros(0, np.uint64), np.zeros((0, dim), np.float32)
        self.state: State | None = None  # the catalog state the vectors in memory reflect

    def __repr__(self) -> str:
        return f"VectorIndex({self.path.name})"

    @property
    def where(self):
        return self.path

    def _stamp_bytes(self) -> bytes | None:
        try:
            return self.stamp_path.read_bytes()
        except OSError:
            return None

    def _read(self, state: State) -> str | None:
        try:
            stamp = json.loads(self.stamp_path.read_text())
        except FileNotFoundError:
            return "behind (no stamp)" if not self.path.exists() else "its stamp is missing"
        except (OSError, ValueError) as exc:
            return f"its stamp is unreadable ({exc})"
        if not isinstance(stamp, dict) or stamp.get("catalog") != state.catalog:
            return "it belongs to another catalog (or its stamp is damaged)"
        if not state.matches(stamp):
            return f"behind (stamped generation {stamp.get('generation')}, catalog at {state.generation})"
        if stamp.get("graph_dtype") != GRAPH_DTYPE:  # files before the float32 copy: a graph of float32 alone
            return f"behind (saved with a {stamp.get('graph_dtype', 'float32')} graph and no float32 copy)"
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            return f"unreadable ({exc})"
        graph, count = stamp.get("graph_bytes"), stamp.get("count")
        if (digest(data) != stamp.get("sha256") or stamp.get("dim") != self.dim or not isinstance(graph, int)
                or not isinstance(count, int) or len(data) != graph + count * (8 + 4 * self.dim)):
            return "its checksum does not match its stamp (truncated or garbled)"
        keys = np.frombuffer(data, np.uint64, count, offset=graph).copy()
        if np.any(np.diff(keys.astype(np.int64)) <= 0):
            return "its float32 copy's keys are not in order"
        self.index.reset()
        try:
            self.index.load(memoryview(data)[:graph])
        except Exception as exc:  # noqa: BLE001 - the bytes are what was saved: a usearch/version mismatch, given as the reason
            self.index.reset()
            return f"usearch could not load it ({exc})"
        if len(self.index) != count:
            self.index.reset()
            return f"it holds {len(self.index)} vectors, its stamp says {count}"
        self.keys = keys
        self.vecs = np.frombuffer(data, np.float32, count * self.dim, offset=graph + count * 8).reshape(count, self.dim).copy()
        self.state = state
        return None

    def build(self, state: State, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Index every vector of the space afresh, as of catalog `state`."""
        self.state = None
        self.index.reset()
        keys, vecs = np.asarray(keys, dtype=np.uint64), np.asarray(vecs, dtype=np.float32).reshape(len(keys), self.dim)
        order = np.argsort(keys, kind="stable")
        self.keys, self.vecs = keys[order], vecs[order]
        if len(keys):
            self.index.add(keys, vecs)
        self.state = state

    def update(self, remove: list[int], keys: list[int], vecs: np.ndarray | None, state: State) -> None:
        """Apply one committed batch to the vectors in memory (they must be at the state before it)."""
        self.state = None  # half-applied is not any state
        added = np.array(keys if vecs is not None else [], dtype=np.uint64)
        if remove:
            self.index.remove(np.array(remove, dtype=np.uint64))
        if len(added):
            vecs = np.asarray(vecs, dtype=np.float32).reshape(len(added), self.dim)
            self.index.add(added, vecs)
        if remove or len(added):
            keep = ~np.isin(self.keys, np.concatenate([np.array(remove, dtype=np.uint64), added]))
            all_keys = np.concatenate([self.keys[keep], added])
            all_vecs = np.concatenate([self.vecs[keep], vecs]) if len(added) else self.vecs[keep]
            order = np.argsort(all_keys, kind="stable")
            self.keys, self.vecs = all_keys[order], all_vecs[order]
        self.state = state

    def save(self) -> None:
        """Write the file, then its stamp (each replaced in one step); the caller holds the lock."""
        from vectrixdb.io import replace_atomic

        if self.state is None:
            raise RuntimeError(f"{self}: nothing consistent to save")
        for stale in self.path.parent.glob(f".{self.path.name}.*.tmp"):  # left by a killed writer
            stale.unlink(missing_ok=True)
        graph = bytes(cast(bytes, self.index.save()))  # with no path, save() returns the bytes
        data = graph + self.keys.tobytes() + np.ascontiguousarray(self.vecs).tobytes()
        replace_atomic(self.path, data)
        replace_atomic(self.stamp_path, self.state.stamp(sha256=digest(data), count=len(self.keys), dim=self.dim,
                                                         graph_bytes=len(graph), graph_dtype=GRAPH_DTYPE))

    def __len__(self) -> int:
        return len(self.keys)

    def vector(self, key: int) -> np.ndarray | None:
        """The float32 vector of `key`, or None when the space has none."""
        row = int(np.searchsorted(self.keys, np.uint64(key)))
        return self.vecs[row] if row < len(self.keys) and self.keys[row] == key else None

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(keys, similarities) best first; `allowed`, sorted keys, restricts the candidates."""
        n, query = len(self.keys), np.asarray(query, dtype=np.float32)
        if n == 0 or k <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        if allowed is None and n > EXACT_LIMIT:
            return graph_search(self.index, self.keys, self.vecs, query, k, search_breadth(n))
        keys, vecs = self.keys, self.vecs
        if allowed is not None:
            keys = allowed[np.isin(allowed, self.keys)]
            if len(keys) == 0:
                return np.zeros(0, np.uint64), np.zeros(0, np.float32)
            vecs = self.vecs[np.searchsorted(self.keys, keys)]
        with _one_blas_thread():  # see _one_blas_thread: threads only ever cost here under load
            sims = vecs @ query
        top = np.arange(len(sims))
        if len(sims) > k:  # every vector tied with the k-th is kept, so (similarity, key) alone decides
            top = np.flatnonzero(sims >= sims[np.argpartition(-sims, k - 1)[k - 1]])
        top = top[np.lexsort((keys[top], -sims[top]))][:k]
        return keys[top], sims[top]
