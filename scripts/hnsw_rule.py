"""The HNSW rule of store/vectors.py measured: graph settings and search breadth against raw usearch
and faiss on the same vectors -> benchmarks/hnsw_rule.json.

usage: python scripts/hnsw_rule.py export ../shared/data/scifact .hnsw     # SciFact vectors as .npy
       python scripts/hnsw_rule.py check FILE      # the store graph's verdict (check()) into a grid's file
       python scripts/hnsw_rule.py grid .hnsw [--sizes 100000 1000000] [--out FILE] [--small]
              [--graphs 64:256 ...] [--breadths 128 256 512 ...] [--dtype f32|bf16|f16|i8]
              [--faiss-simd AVX2]

`export` embeds SciFact's 5,183 abstracts and 1,109 questions with the default embedder (through the
embedding cache) into docs.npy and queries.npy. `grid` needs numpy, usearch, faiss-cpu and this
repository's vectrixdb package (the store's rule and its graph_search), so it runs on any machine
the repository and the vectors are copied to. Per size, the index vectors are the abstracts and
vectors derived from them as scripts/bench_hnsw.py derives them (same seed and formula); the queries
are the real questions. For each graph (usearch's connectivity M and expansion_add, and faiss's
IndexHNSWFlat with the same M and efConstruction) it records the build's wall and CPU seconds (all
threads: the process's CPU clock) and, for each search breadth (usearch expansion_search, faiss
efSearch), recall@10 against the exact top 10 and the p50/p95 of one query at a time on one thread.
usearch keeps its vectors in `--dtype` (default: the store's, GRAPH_DTYPE) and is searched twice
on each graph: raw (asked for 10 results, in its own precision) and as the store searches
(store/vectors.graph_search: `min(max(k, breadth), n)` candidates scored again in float32, the
best k kept), with the share of queries whose top 10 is the same both ways; per library, the
smallest breadth with recall@10 >= 0.99. On the store's own graph, in the store's precision, it adds
the rule's verdict (check(): the store at the breadth store/vectors.py gives the size reaches 0.99,
its p50 within 2x of raw usearch's at that breadth, the build's CPU within 2x of faiss's for the
same M and efConstruction), and faiss's p50 at the same recall beside it. `--graphs`
(M:expansion_add) and `--breadths` replace the default grid, e.g. to check the store's own graph at
1,000,000 vectors, where each build takes an hour on two cores.

Each row names the SIMD kernels each library ran (usearch_kernels, faiss_simd). To measure the rule
as a CPU without AVX-512 would run it, on one that has it: `--faiss-simd AVX2` sets faiss's level,
scripts/nk_mask.c (preloaded, NK_MASK=0x5) leaves usearch only its AVX2 kernels, and
OPENBLAS_CORETYPE=Haswell does the same for numpy's products (exact truth, float32 rescoring). The
run records those settings under machine.kernels_limited. The clock, caches and memory stay this
machine's: it shows what the instructions change, not a slower machine.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, write_atomic  # noqa: E402

SEED = 20261130
BREADTHS = (16, 24, 32, 48, 64, 96, 128, 192, 256, 512)
TARGET = 0.99


def export(folder: str, out: str) -> None:
    import numpy as np

    from bench_hnsw import real_vectors

    docs, queries = real_vectors(folder)
    Path(out).mkdir(parents=True, exist_ok=True)
    np.save(Path(out) / "docs.npy", docs.astype(np.float32))
    np.save(Path(out) / "queries.npy", queries.astype(np.float32))
    print(f"wrote {len(docs)} abstracts and {len(queries)} questions to {out}")


def timed(fn):
    """(result, wall seconds, CPU seconds of the whole process: every thread's)."""
    wall, cpu = time.perf_counter(), time.process_time()
    got = fn()
    return got, time.perf_counter() - wall, time.process_time() - cpu


def sweep(search, queries, truth, breadths) -> dict:
    """recall@10 and latency of one query at a time at each breadth; `search(q, breadth)` -> ids."""
    import numpy as np

    out = {}
    for b in breadths:
        ms, hits = [], 0
        for q, want in zip(queries, truth):
            t0 = time.perf_counter()
            got = search(q, b)
            ms.append((time.perf_counter() - t0) * 1000)
            hits += len(set(got[:10].tolist()) & set(want.tolist()))
        out[str(b)] = {"recall@10": round(hits / (10 * len(queries)), 4),
                       "p50_ms": round(float(np.percentile(ms, 50)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3)}
    return out


def smallest(table: dict) -> str | None:
    """The smallest breadth whose recall@10 reaches TARGET, or None."""
    ok = [b for b, row in table.items() if row["recall@10"] >= TARGET]
    return min(ok, key=int) if ok else None


def check(row: dict, store_breadth: int | None) -> dict:
    """The rule's verdict on one graph, as issue 51 states it: the store, searching at the breadth its
    rule gives this size (store/vectors.search_breadth), must reach recall@10 >= TARGET with a p50
    within 2x of raw usearch at the same recall (the same graph and breadth: the store's search is
    usearch's, asked for more results and scored again in float32), and the graph's build CPU must
    be within 2x of faiss's at the same M and efConstruction. Beside it, for the reader: raw usearch
    at the smallest breadth that reaches TARGET (what a smaller breadth would save) and faiss at the
    smallest breadth whose recall reaches the store's (faiss's index cannot remove a vector, so it cannot replace usearch)."""
    store = row["usearch_as_store"].get(str(store_breadth)) if store_breadth else None
    out: dict = {"store_breadth": store_breadth, "rule": "met when the store's recall@10 at its breadth >= "
                 f"{TARGET}, its p50 <= 2x raw usearch's at the same breadth, and build CPU <= 2x faiss's"}
    if store is None:
        return {**out, "met": False, "why": f"breadth {store_breadth} was not measured"}
    raw = row["usearch_raw"][str(store_breadth)]
    faiss_b = [b for b, r in row["faiss"].items() if r["recall@10"] >= store["recall@10"]]
    faiss = {"breadth": int(min(faiss_b, key=int)), **row["faiss"][min(faiss_b, key=int)]} if faiss_b else None
    out.update(store={"recall@10": store["recall@10"], "p50_ms": store["p50_ms"]}, raw_usearch_p50_ms=raw["p50_ms"],
               store_to_raw_usearch=round(store["p50_ms"] / raw["p50_ms"], 2),
               store_to_raw_usearch_at_target=(round(store["p50_ms"] / row["usearch_raw_at_target"]["p50_ms"], 2)
                                               if row["usearch_raw_at_target"] else None),
               faiss_at_the_store_recall=faiss,
               store_to_faiss=round(store["p50_ms"] / faiss["p50_ms"], 2) if faiss else None,
               build_cpu_usearch_to_faiss=row["build_cpu_ratio_usearch_to_faiss"])
    failed = [why for bad, why in ((store["recall@10"] < TARGET, f"recall@10 {store['recall@10']} < {TARGET}"),
                                   (out["store_to_raw_usearch"] > 2, "p50 over 2x raw usearch's"),
                                   (out["build_cpu_usearch_to_faiss"] > 2, "build CPU over 2x faiss's")) if bad]
    return {**out, "met": not failed, "why": "; ".join(failed) or "all three hold"}


def store_rule(n: int) -> tuple[tuple[int, int], int]:
    """The store's graph (connectivity, expansion_add) and the breadth it searches an index of n vectors at."""
    from vectrixdb.store.vectors import CONNECTIVITY, EXPANSION_ADD, search_breadth

    return (CONNECTIVITY, EXPANSION_ADD), search_breadth(n)


def add_check(row: dict, n: int) -> None:
    """`check` into the row of a graph of n vectors, when the graph is the store's own."""
    rule = store_rule(n)
    if (row["connectivity"], row["expansion_add"]) == rule[0]:
        row["check"] = check(row, rule[1])


def check_file(path: str) -> dict:
    """add_check on every graph of a grid's file, written back atomically; refused for a grid whose
    usearch held another precision than the store's graph does (files from before GRAPH_DTYPE say f32)."""
    from vectrixdb.store.vectors import GRAPH_DTYPE

    result = json.loads(Path(path).read_text())
    if result.get("usearch_dtype", "f32") != GRAPH_DTYPE:
        raise SystemExit(f"{path}: usearch stored {result.get('usearch_dtype', 'f32')}, the store's graph keeps "
                         f"{GRAPH_DTYPE}: no verdict")
    for size in result["sizes"]:
        for row in size["graphs"]:
            add_check(row, size["vectors"])
    write_atomic(path, result, indent=1)
    return result


def usearch_rows(base, queries, truth, m: int, ef_add: int, breadths, threads: int, dtype: str) -> dict:
    import numpy as np
    from usearch.index import Index

    from vectrixdb.store.vectors import graph_search

    n = len(base)
    index = Index(ndim=base.shape[1], metric="ip", dtype=dtype, connectivity=m, expansion_add=ef_add)
    _, wall, cpu = timed(lambda: index.add(np.arange(n, dtype=np.uint64), base, threads=threads))
    row: dict = {"usearch_build": {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                                   "memory_mb": round(index.memory_usage / 2**20)},
                 "usearch_kernels": str(index.hardware_acceleration)}  # the SIMD kernels usearch picked here
    keys = np.arange(n, dtype=np.uint64)

    def raw(q, b):
        index.expansion_search = b
        return np.asarray(index.search(q, 10, threads=1).keys)

    def as_store(q, b):
        return graph_search(index, keys, base, q, 10, b)[0]

    row["usearch_raw"] = sweep(raw, queries, truth, breadths)
    row["usearch_as_store"] = sweep(as_store, queries, truth, breadths)
    same = sum(np.array_equal(raw(q, 64), as_store(q, 64)) for q in queries[:200])
    row["store_top10_equals_raw_at_64"] = round(same / min(200, len(queries)), 3)
    return row


def faiss_rows(base, queries, truth, m: int, ef_add: int, breadths, threads: int) -> dict:
    import faiss

    flat = faiss.IndexHNSWFlat(base.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    flat.hnsw.efConstruction = ef_add
    faiss.omp_set_num_threads(threads or os.cpu_count() or 1)
    _, wall, cpu = timed(lambda: flat.add(base))
    faiss.omp_set_num_threads(1)

    def search(q, b):
        flat.hnsw.efSearch = b
        return flat.search(q[None, :], 10)[1][0]

    return {"faiss_build": {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)},
            "faiss_simd": faiss.SIMDConfig.get_level_name(),  # the SIMD level faiss dispatched to here
            "faiss": sweep(search, queries, truth, breadths)}


def one_size(base, queries, graphs, breadths, threads: int, out: dict, save, dtype: str) -> None:
    from bench_hnsw import exact_top

    from vectrixdb.store.vectors import GRAPH_DTYPE

    truth = exact_top(base, queries)
    out.update(vectors=len(base), graphs=[])
    for m, ef_add in graphs:
        row: dict = {"connectivity": m, "expansion_add": ef_add,
                     **usearch_rows(base, queries, truth, m, ef_add, breadths, threads, dtype),
                     **faiss_rows(base, queries, truth, m, ef_add, breadths, threads)}
        row["build_cpu_ratio_usearch_to_faiss"] = round(row["usearch_build"]["cpu_s"] / max(row["faiss_build"]["cpu_s"], 1e-9), 2)
        for lib in ("usearch_raw", "usearch_as_store", "faiss"):
            b = smallest(row[lib])
            row[f"{lib}_at_target"] = None if b is None else {"breadth": int(b), **row[lib][b]}
        if dtype == GRAPH_DTYPE:  # another precision than the store's graph is a probe, not the store
            add_check(row, len(base))
        out["graphs"].append(row)
        save()  # after each graph: a run cut short keeps what it measured
        print(json.dumps({"vectors": len(base), "M": m, "ef_add": ef_add, "usearch_build": row["usearch_build"],
                          "faiss_build": row["faiss_build"],
                          **{k: row[f"{k}_at_target"] for k in ("usearch_raw", "usearch_as_store", "faiss")}}), flush=True)


def limit_faiss(level: str | None) -> None:
    """Make faiss dispatch to `level` (e.g. "AVX2") instead of the best its CPU has."""
    if level:
        import faiss

        faiss.SIMDConfig.set_level(faiss.to_simd_level(level))
        if faiss.SIMDConfig.get_level_name() != level:
            raise SystemExit(f"faiss did not take SIMD level {level!r}: it runs {faiss.SIMDConfig.get_level_name()}")


def grid(folder: str, sizes: list[int], out: str, small: bool, threads: int,
         graphs: list[tuple[int, int]] | None = None, breadths: tuple[int, ...] = BREADTHS, dtype: str | None = None,
         faiss_simd: str | None = None) -> None:
    import numpy as np

    from bench_hnsw import derive

    from vectrixdb.store.vectors import GRAPH_DTYPE

    dtype = dtype or GRAPH_DTYPE
    limit_faiss(faiss_simd)
    docs, queries = np.load(Path(folder) / "docs.npy"), np.load(Path(folder) / "queries.npy")
    if small:
        docs, queries, sizes = docs[:50], queries[:10], [500]
    graphs_by_size = {s: ([(16, 128), (32, 128), (32, 256), (64, 256)] if s <= 200_000 else [(32, 128), (16, 128)])
                      for s in sizes}
    if small:
        graphs_by_size = {500: [(16, 64), (32, 128)]}
    if graphs:
        graphs_by_size = {s: graphs for s in graphs_by_size}
    result = {"what": __doc__.split("\n\n")[0].replace("\n", " "), "how": " ".join(__doc__.split("\n\n")[2].split()),
              "target": f"recall@10 >= {TARGET} against exact at the smallest breadth that gives it",
              "machine": {"cpu": machine_cpu().split(",")[0], "cpu_flags": machine_cpu(), "cores": os.cpu_count(), "build_threads": threads or os.cpu_count(),
                          "load_average_before": [round(x, 2) for x in os.getloadavg()],
                          "kernels_limited": {k: v for k, v in (("faiss_simd", faiss_simd),
                                              ("NK_MASK", os.environ.get("NK_MASK") if os.environ.get("LD_PRELOAD") else None),
                                              ("OPENBLAS_CORETYPE", os.environ.get("OPENBLAS_CORETYPE"))) if v}},
              "versions": {name: _version(name) for name in ("usearch", "faiss-cpu", "numpy")},
              "breadths": list(breadths), "usearch_dtype": dtype, "small": small, "sizes": []}
    for size in sizes:
        rng = np.random.default_rng(SEED)
        base = np.empty((size, docs.shape[1]), dtype=np.float32)
        base[: len(docs)] = docs
        base[len(docs):] = derive(docs, size - len(docs), rng)
        entry: dict = {}
        result["sizes"].append(entry)

        def save() -> None:
            result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
            write_atomic(out, result, indent=1)

        one_size(base, queries, graphs_by_size[size], breadths, threads, entry, save, dtype)


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def graph(text: str) -> tuple[int, int]:
    """"64:256" -> (64, 256): usearch's connectivity and expansion_add (faiss's M and efConstruction)."""
    try:
        m, ef_add = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected M:expansion_add, e.g. 64:256") from None
    return m, ef_add


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="verb", required=True)
    e = sub.add_parser("export")
    e.add_argument("folder")
    e.add_argument("out")
    g = sub.add_parser("grid")
    g.add_argument("vectors")
    g.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    g.add_argument("--out", default="benchmarks/hnsw_rule.json")
    g.add_argument("--threads", type=int, default=0, help="build threads (0: every core)")
    g.add_argument("--small", action="store_true")
    g.add_argument("--graphs", type=graph, nargs="+", help="M:expansion_add pairs, e.g. 64:256 (default: the grid)")
    g.add_argument("--breadths", type=int, nargs="+", default=list(BREADTHS))
    g.add_argument("--dtype", choices=("f32", "bf16", "f16", "i8"),
                   help="usearch's stored precision (default: the store's graph's; faiss's HNSWFlat stays f32)")
    g.add_argument("--faiss-simd", choices=("NONE", "AVX2", "AVX512"),
                   help="the SIMD level faiss runs at (default: the best this CPU has)")
    c = sub.add_parser("check", help="(re)write the store graph's verdict into a grid's file")
    c.add_argument("file")
    args = ap.parse_args()
    if args.verb == "export":
        export(args.folder, args.out)
    elif args.verb == "check":
        print(json.dumps([row.get("check") for size in check_file(args.file)["sizes"] for row in size["graphs"]], indent=1))
    else:
        grid(args.vectors, args.sizes, args.out, args.small, args.threads, args.graphs, tuple(sorted(args.breadths)),
             args.dtype, args.faiss_simd)


if __name__ == "__main__":
    main()
