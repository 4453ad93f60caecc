"""store/vectors.py: the HNSW path (above EXACT_LIMIT) checked against exact search.

Collections in tests are small, so the HNSW branch never runs unless the threshold is lowered;
these tests lower it with monkeypatch and compare with the exact branch on the same vectors.
"""
import numpy as np

import vectrixdb.store.vectors as vectors
from vectrixdb.store.vectors import VectorIndex


def embedded(n: int, seed: int, dim: int = 384) -> np.ndarray:
    """Unit vectors of low intrinsic dimension (16 latent factors, a fixed projection, a little
    noise), as sentence embeddings are; uniform noise in 384 dims has no real neighbours to find."""
    proj = np.random.default_rng(0).normal(size=(16, dim))
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 16)) @ proj + rng.normal(scale=0.5, size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_hnsw_search_agrees_with_exact_search(tmp_path, monkeypatch):
    base, queries = embedded(3000, 1), embedded(100, 2)
    index = VectorIndex(tmp_path, "default", 384)
    index.build(None, np.arange(10, 3010, dtype=np.uint64), base)  # keys need not start at 0
    exact = [index.search(q, 10) for q in queries]
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 100)
    approx = [index.search(q, 10) for q in queries]
    found = sum(len(set(a[0].tolist()) & set(e[0].tolist())) for a, e in zip(approx, exact))
    assert found / (10 * len(queries)) >= 0.99  # recall@10 of HNSW at the defaults against exact
    for (keys, sims), q in zip(approx, queries):
        assert keys.dtype == np.uint64 and np.all(np.diff(sims) <= 1e-6)  # best first
        np.testing.assert_allclose(sims, base[keys.astype(np.int64) - 10] @ q, atol=1e-5)  # scores are cosines


def test_a_collection_above_the_threshold_searches_through_hnsw(policies, monkeypatch):
    queries = ["defer a loan payment", "stolen card", "overpay the mortgage", "fees for displaced customers"]
    exact = {q: [(h.chunk_id, round(h.score, 5)) for h in policies.search(q, 3, mode="dense")] for q in queries}
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 1)
    calls = []
    index = policies._vector_index("default")
    real = index.index.search
    monkeypatch.setattr(index.index, "search", lambda *a, **k: calls.append(1) or real(*a, **k), raising=False)
    approx = {q: [(h.chunk_id, round(h.score, 5)) for h in policies.search(q, 3, mode="dense")] for q in queries}
    assert calls, "the HNSW branch did not run"
    assert approx == exact


def test_the_search_breadth_grows_with_the_index(tmp_path, monkeypatch):
    sizes = [1, 20_000, 100_000, 100_001, 300_000, 300_001, 1_000_000, 1_000_001, 4_000_000, 4_000_001, 10**9]
    assert [vectors.search_breadth(n) for n in sizes] == [96, 96, 96, 128, 128, 512, 512, 1024, 1024, 2048, 2048]
    index = VectorIndex(tmp_path, "default", 384)
    index.build(None, np.arange(200, dtype=np.uint64), embedded(200, 3))
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 10)
    index.search(embedded(1, 4)[0], 5)
    assert index.index.expansion_search == 96 and index.index.connectivity == vectors.CONNECTIVITY
