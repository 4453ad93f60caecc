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


def test_the_graph_is_bfloat16_and_every_score_is_float32(tmp_path, monkeypatch):
    """GRAPH_DTYPE keeps the graph in bfloat16; its candidates are scored again with the float32
    copy, so a similarity is the float32 inner product (to float32's rounding: BLAS may sum in
    another order; bfloat16's 8-bit mantissa would be off by ~1e-3), whichever path found it."""
    base, queries = embedded(3000, 5), embedded(20, 6)
    index = VectorIndex(tmp_path, "default", 384)
    index.build(None, np.arange(3000, dtype=np.uint64)[::-1].copy(), base[::-1].copy())  # any key order
    assert str(index.index.dtype).endswith("BF16") and index.keys.tolist() == list(range(3000))
    monkeypatch.setattr(vectors, "EXACT_LIMIT", 100)
    for q in queries:
        keys, sims = index.search(q, 10)
        np.testing.assert_allclose(sims, base[keys.astype(np.int64)] @ q, rtol=0, atol=2e-7)
        assert np.array_equal(index.vector(int(keys[0])), base[int(keys[0])])
    assert index.vector(3000) is None


def test_a_saved_index_reads_back_its_graph_and_float32_copy(tmp_path):
    from vectrixdb.store.catalog import State

    state = State(catalog="c", generation=3, commit="t")
    base = embedded(500, 7)
    index = VectorIndex(tmp_path, "default", 384)
    index.build(state, np.arange(100, 600, dtype=np.uint64), base)
    index.save()
    again = VectorIndex(tmp_path, "default", 384)
    assert again.load(state)
    assert np.array_equal(again.keys, index.keys) and np.array_equal(again.vecs, index.vecs)
    assert len(again.index) == 500 and str(again.index.dtype).endswith("BF16")
    assert not VectorIndex(tmp_path, "default", 384).load(State(catalog="c", generation=4, commit="u"))


def test_an_index_saved_before_the_float32_copy_is_rebuilt_not_misread(tmp_path, caplog):
    """Until GRAPH_DTYPE the file was a float32 graph alone and its stamp had no graph_bytes: such a
    file is behind (rebuilt from the catalog, noted at INFO), never read as graph plus copy."""
    import json
    import logging

    from usearch.index import Index

    from vectrixdb.store.catalog import State, digest

    state = State(catalog="c", generation=1, commit="t")
    old = Index(ndim=384, metric="ip", dtype="f32", connectivity=vectors.CONNECTIVITY)
    old.add(np.arange(50, dtype=np.uint64), embedded(50, 8))
    data = bytes(old.save())
    (tmp_path / "vectors.default.usearch").write_bytes(data)
    (tmp_path / "vectors.default.json").write_bytes(state.stamp(sha256=digest(data), count=50, dim=384))
    with caplog.at_level(logging.INFO, logger="vectrixdb"):
        assert not VectorIndex(tmp_path, "default", 384).load(state)
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "float32 graph and no float32 copy" in caplog.text
    stamp = json.loads((tmp_path / "vectors.default.json").read_text())
    assert "graph_bytes" not in stamp  # the file is left for the rebuild to replace


def test_updates_keep_the_float32_copy_as_a_fresh_build_would(tmp_path):
    base = embedded(400, 9)
    index = VectorIndex(tmp_path, "default", 384)
    index.build(None, np.arange(300, dtype=np.uint64), base[:300])
    index.update([5, 17, 299], [300, 301], base[300:302], None)  # removals and additions in one batch
    index.update([], list(range(302, 400)), base[302:400], None)
    index.update([0, 1], [], None, None)
    fresh = VectorIndex(tmp_path, "other", 384)
    keep = np.array(sorted(set(range(400)) - {0, 1, 5, 17, 299}), dtype=np.uint64)
    fresh.build(None, keep, base[keep.astype(np.int64)])
    assert np.array_equal(index.keys, fresh.keys) and np.array_equal(index.vecs, fresh.vecs)
    assert len(index) == len(index.index) == len(keep)
    q = embedded(1, 10)[0]
    assert [a.tolist() for a in index.search(q, 10)] == [a.tolist() for a in fresh.search(q, 10)]
