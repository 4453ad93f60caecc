"""HNSW (usearch, vectrixdb's default settings) beside exact search, at 100k+ vectors of 384 dims.

usage: python scripts/bench_hnsw.py ../shared/data/scifact [--sizes 100000 300000 1000000]
       [--out benchmarks/hnsw.json] [--merge] [--trials FILE] [--note TEXT] [--small]

Vectors: the 5,183 SciFact abstracts embedded with the bundled model (through the embedding
cache), then derived ones up to each size, made 100,000 at a time: v = normalise(w*a + (1-w)*b +
0.7*n), with a, b two real abstracts drawn at random, w ~ U(0.5, 1) and n drawn from a Gaussian with
the real vectors' own covariance (norm about 0.65). The noise varies the points along the directions
real abstracts vary along: the derived vectors' participation ratio (an effective dimension) is
close to the real ones' (70 against 65; isotropic noise of that size gave 133 in a trial), both
recorded per size. Queries: all 1,109 SciFact questions (test and train), real and never in the index.

Per size, in a fresh process (its peak RSS is its own): exact top-10 by a matrix product (the path
vectrixdb takes below EXACT_LIMIT), the HNSW index built exactly as store/vectors.py builds it
(VectorIndex.build: usearch's multi-threaded add into a graph of GRAPH_DTYPE, with the float32
copy) and searched as VectorIndex.search searches it (graph_search: candidates scored again in
float32) at the breadth it sets for that size (search_breadth), recall@10 of HNSW against exact,
per-query p50/p99 latency of both (one query at a time, as a search call does), build time, index
memory; then recall and latency for other expansion_search values on the same graph, to show the
margin.
--small: 50 abstracts, 10 questions and one size of 500 vectors, to check that the script runs.
--merge keeps the sizes not run now from the file at --out, when it was measured on this CPU (each
size keeps the date it was measured on), so the largest size can be run on its own.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, peak_rss_mb, run_phase, versions, write_json  # noqa: E402

SEED = 20261130


def real_vectors(folder: str, small: bool = False):
    from vectrixdb.embedding import SentenceEmbedder
    from vectrixdb.evaluation.golden.beir import load_beir

    data = load_beir(folder, only_judged=False)
    emb = SentenceEmbedder()
    docs, questions = list(data.documents.values()), [q.question for q in data.questions]
    if small:
        docs, questions = docs[:50], questions[:10]
    return emb.encode(docs), emb.encode(questions)


def derive(real, n: int, rng, block: int = 100_000):
    """n vectors around the real ones (see the module's docstring), made a block at a time so the
    temporaries stay small beside the result."""
    import numpy as np

    shape = np.linalg.cholesky(np.cov(real.T.astype(np.float64)) + 1e-9 * np.eye(real.shape[1])).T
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for start in range(0, n, block):
        m = min(block, n - start)
        a, b = real[rng.integers(0, len(real), m)], real[rng.integers(0, len(real), m)]
        w = rng.uniform(0.5, 1.0, (m, 1)).astype(np.float32)
        v = w * a + (1 - w) * b + 0.7 * (rng.standard_normal(a.shape) @ shape).astype(np.float32)
        out[start : start + m] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def participation_ratio(vecs) -> float:
    """(sum of covariance eigenvalues)^2 / sum of their squares: how many dimensions the spread uses."""
    import numpy as np

    eig = np.linalg.eigvalsh(np.cov(vecs.T.astype(np.float64)))
    return float(eig.sum() ** 2 / (eig**2).sum())


def exact_top(base, queries, k: int = 10):
    import numpy as np

    out = np.empty((len(queries), k), dtype=np.int64)
    for i in range(0, len(queries), 100):
        sims = queries[i : i + 100] @ base.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, top, 1), axis=1)
        out[i : i + 100] = np.take_along_axis(top, order, 1)
    return out


def percentiles(times):
    import numpy as np

    return {"p50_ms": round(float(np.percentile(times, 50)), 3), "p99_ms": round(float(np.percentile(times, 99)), 3)}


def phase(folder: str, size: int, small: bool = False) -> dict:
    import numpy as np

    from vectrixdb.store.vectors import GRAPH_DTYPE, VectorIndex, graph_search, search_breadth

    rng = np.random.default_rng(SEED)
    docs, queries = real_vectors(folder, small)
    base = np.empty((size, docs.shape[1]), dtype=np.float32)
    base[: len(docs)] = docs
    base[len(docs) :] = derive(docs, size - len(docs), rng)
    truth = exact_top(base, queries)
    rss_data = peak_rss_mb()

    exact_ms = []
    for q in queries[:200]:  # exact is slow at 1M; 200 single queries give a stable p50/p99
        start = time.perf_counter()
        sims = base @ q
        top = np.argpartition(-sims, 9)[:10]
        top[np.argsort(-sims[top])]
        exact_ms.append((time.perf_counter() - start) * 1000)

    vi = VectorIndex(Path(tempfile.mkdtemp()), "bench", 384)  # the defaults vectrixdb uses
    start = time.perf_counter()
    vi.build(None, np.arange(size, dtype=np.uint64), base)
    build_s = time.perf_counter() - start
    out = {
        "vectors": size, "real_vectors": len(docs), "queries": len(queries),
        "participation_ratio": {"real": round(participation_ratio(docs), 1),
                                "derived": round(participation_ratio(base[len(docs) : len(docs) + 50_000]), 1)},
        "settings": {"connectivity": vi.index.connectivity, "expansion_add": vi.index.expansion_add,
                     "expansion_search": search_breadth(size), "metric": "ip", "dtype": GRAPH_DTYPE},
        "build_s": round(build_s, 1), "index_memory_mb": round(vi.index.memory_usage / 2**20),
        "float32_copy_mb": round(vi.vecs.nbytes / 2**20),
        "vectors_alone_mb": round(base.nbytes / 2**20), "exact": percentiles(exact_ms),
    }
    default = search_breadth(size)  # what VectorIndex.search sets for an index of this size
    sweep = {}
    for ef in sorted({16, 32, 64, 128, 256, 512, 1024, 2048, default}):
        ms, hits = [], 0
        for q, want in zip(queries, truth):
            t0 = time.perf_counter()
            got = graph_search(vi.index, vi.keys, vi.vecs, q, 10, ef)[0]
            ms.append((time.perf_counter() - t0) * 1000)
            hits += len(set(got.tolist()) & set(want.tolist()))
        sweep[str(ef)] = {"recall@10": round(hits / (10 * len(queries)), 4), **percentiles(ms)}
    out["hnsw"] = sweep[str(default)]
    out["expansion_search_sweep"] = sweep
    out["peak_rss_mb"] = round(peak_rss_mb())
    out["peak_rss_before_index_mb"] = round(rss_data)
    return out


def kept_sizes(out: str, sizes: list[int]) -> tuple[list[dict], list[str]]:
    """The results at `out` for sizes not in `sizes`, and that file's notes, when it was measured on
    this CPU; a file from another CPU is refused, so one file never mixes machines."""
    earlier = json.loads(Path(out).read_text())
    here = machine_cpu()
    if earlier.get("cpu") != here:
        raise SystemExit(f"--merge: {out} was measured on {earlier.get('cpu')!r}, this is {here!r}")
    kept = [r for r in earlier["results"] if r["vectors"] not in sizes]
    for r in kept:
        r.setdefault("measured", earlier.get("measured", "not recorded"))
    names = ", ".join(f"{r['vectors']:,}" for r in kept)
    return kept, [f"sizes {names} kept from the earlier run on this CPU."] if kept else []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    ap.add_argument("--out", default="benchmarks/hnsw.json")
    ap.add_argument("--phase", type=int)
    ap.add_argument("--trials", help="a JSON file of earlier trials of other settings, kept beside the figures")
    ap.add_argument("--note", default="", help="what the figures alone do not say (machine load, what was left out)")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--merge", action="store_true", help="keep the other sizes from --out (same CPU only)")
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(phase(args.folder, args.phase, args.small)))
        return
    sizes = [500] if args.small else args.sizes
    kept, notes = kept_sizes(args.out, sizes) if args.merge else ([], [])
    real_vectors(args.folder, args.small)  # fill the embedding cache once, outside every phase
    results = []
    for size in sizes:
        load = os.getloadavg()
        r = run_phase(__file__, args.folder, "--phase", str(size), *(["--small"] if args.small else []))
        r["load_average_at_start"] = [round(x, 2) for x in load]
        r["measured"] = time.strftime("%Y-%m-%d", time.gmtime())
        results.append(r)
        print(json.dumps(r), flush=True)
    write_json(args.out, {
        "what": "usearch HNSW at vectrixdb's defaults beside exact search (matrix product)",
        "how": __doc__.split("\n\n", 2)[2].replace("\n", " ").strip(),
        "target": "recall@10 >= 0.99 against exact at the defaults",
        "trials": json.loads(Path(args.trials).read_text()) if args.trials else None,
        "results": sorted(kept + results, key=lambda r: r["vectors"]),
        "versions": versions("vectrixdb", "usearch", "numpy"),
        "notes": " ".join([*notes, args.note]).strip(), "small": args.small,
    }, indent=2)


if __name__ == "__main__":
    main()
