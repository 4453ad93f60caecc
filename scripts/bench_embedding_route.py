"""The embedding route against the local model on the whole of SciFact: same model, same texts, one
collection, two vector spaces.

usage: python scripts/bench_embedding_route.py [--scifact ../shared/data/scifact] [--size 1000] [--seed 0]
       [--out benchmarks/embedding_route.json] [--slots 2] [--threads 1] [--no-uncut] [--small]

The bundled all-MiniLM-L6-v2 runs twice: locally (torch, float32: the "default" space) and behind
llama.cpp's own server (xllamacpp, --embedding) as a float32 GGUF converted from the same weights
(tests/embedding_server.py), reached through vectrixdb's EmbeddingRoute by its model string and put
into a second space with add_vectors("served", "http://127.0.0.1:PORT/v1#minilm"). Every abstract
is cut, at the end of a word, to the 256 tokens the model reads (embedding_server.fit), because the
server refuses a longer input where the local model cuts it; so both embed the very same tokens.
The corpus: every abstract judged for the 300 test queries plus a seeded random sample of the
others (numpy default_rng(seed), without replacement) up to `size` abstracts (0: all 5,183), as
scripts/bench_embedders.py samples it: llama.cpp's float32 BERT kernels on this 2-core AVX2 machine
take about 0.4 s an abstract, the whole corpus most of an hour. The server runs 2 slots of one
thread each: with 2 threads a slot, on this busy 2-core machine, llama.cpp's threads waited on each
other and an abstract took several seconds (a first run, stopped). Both spaces are scored by
retrieval_report(mode="dense", vectors=space) on the 300 judged test queries, by document, k = 10
and 100. Recorded: nDCG@10, recall@10 and @100 of each, the paired
difference of nDCG@10 (served - local) with its 95% percentile-bootstrap interval over questions
(2,000 resamples, seed 0), how many questions score exactly alike, the largest difference between the
two spaces' vectors of one abstract and their smallest cosine, the tokens the server's replies
counted, and the seconds each space took to embed. With --uncut (the default) a third figure: the
local model on the abstracts as published (it cuts them itself), what test_scifact.py measures,
showing what cutting at a word's end changes. The home is a fresh temporary folder, so nothing
comes from an earlier run's cache. --small: 20 questions and 100 abstracts (those judged for them first), a check
that it runs (written to embedding_route.small.json).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import keep_before, machine_cpu, versions, write_json  # noqa: E402


def figures(report) -> dict:
    return {"ndcg@10": round(report["ndcg"][10], 4), "recall@10": round(report["recall"][10], 4),
            "recall@100": round(report["recall"][100], 4)}


def paired_interval(diff) -> list[float]:
    """The 95% percentile-bootstrap interval of a mean of paired differences (questions resampled)."""
    import numpy as np

    values = np.asarray(diff, dtype=float)
    rng = np.random.default_rng(0)
    means = values[rng.integers(0, len(values), (2000, len(values)))].mean(axis=1)
    return [round(float(x), 6) for x in np.percentile(means, [2.5, 97.5])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scifact", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "embedding_route.json"))
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-uncut", action="store_true")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args(argv)
    if args.small and args.out.endswith("embedding_route.json"):
        args.out = args.out.replace(".json", ".small.json")
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="vectrixdb-route-bench-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from tests.embedding_server import MAX_TOKENS, fit, minilm_gguf, start_embedding_server
    from vectrixdb import Vectrix
    from vectrixdb.embedding import FLOAT_MODEL
    from vectrixdb.evaluation import load_beir, retrieval_report

    import numpy as np

    data = load_beir(args.scifact)
    questions, ids = data.questions, list(data.documents)
    if args.small:  # the first 20 questions, every abstract judged for them, the corpus in order up to 100
        questions = questions[:20]
        judged = sorted({d for q in questions for d in q.expected})
        ids = judged + [d for d in ids if d not in set(judged)][: 100 - len(judged)]
    elif args.size:
        judged = sorted({d for q in questions for d in q.expected})
        others = [d for d in ids if d not in set(judged)]
        pick = np.random.default_rng(args.seed).choice(len(others), max(args.size - len(judged), 0), replace=False)
        ids = judged + [others[i] for i in sorted(pick)]
    load_before = [round(x, 2) for x in os.getloadavg()]
    home = Path(os.environ["VECTRIXDB_HOME"])
    proc, base = start_embedding_server(home / "server.log", slots=args.slots, threads=args.threads)
    try:
        texts = fit([data.documents[d] for d in ids])
        db = Vectrix("scifact", path=home, model=FLOAT_MODEL)
        started = time.perf_counter()
        db.add_documents([{"text": t, "doc_id": d} for d, t in zip(ids, texts)], chunk="fixed", chunk_size=20000,
                         progress=True)
        local_s = time.perf_counter() - started
        model = f"{base}#minilm"
        started = time.perf_counter()
        db.add_vectors("served", model, progress=True)
        served_s = time.perf_counter() - started
        route = db.embedder("served")
        ingest_spent = route.totals()
        local = retrieval_report(db, questions, k=(10, 100), mode="dense")
        served = retrieval_report(db, questions, k=(10, 100), mode="dense", vectors="served")
        keys, a = db.catalog.vectors("default")
        keys_b, b = db.catalog.vectors("served")
        assert list(keys) == list(keys_b)
        diff = served.frame["ndcg@10"] - local.frame["ndcg@10"]
        out = {
            "what": f"SciFact's judged test queries against {len(ids)} abstracts (every judged one, the others a "
                    "seeded sample), dense search: the bundled all-MiniLM-L6-v2 run locally (torch float32) and served by llama.cpp's server (xllamacpp --embedding, the same "
                    f"weights as a float32 GGUF) through EmbeddingRoute; abstracts cut at a word's end to the "
                    f"{MAX_TOKENS} tokens the model reads, so both embed the same tokens",
            "small": args.small, "size": args.size, "seed": args.seed, "abstracts": len(ids), "cut": sum(t != data.documents[d] for d, t in zip(ids, texts)),
            "questions": local["questions"], "local": figures(local), "served": figures(served),
            "ndcg@10_served_minus_local": {"mean": round(float(diff.mean()), 6), "ci95": paired_interval(diff),
                                           "questions_alike": int((diff.abs() <= 1e-9).sum())},
            "vectors": {"max_abs_difference": float(np.abs(a - b).max()),
                        "min_cosine": float((a * b).sum(axis=1).min()),
                        "mean_cosine": float((a * b).sum(axis=1).mean())},
            "served_route": {"model_string": model.replace(base, "http://127.0.0.1:PORT/v1"),
                             "gguf": minilm_gguf().name, "slots": args.slots, "threads": args.threads,
                             "requests": ingest_spent["requests"], "tokens": ingest_spent["tokens"],
                             "queries_spent": served.get("model_usage")},
            "embedding_seconds": {"local": round(local_s, 1), "served": round(served_s, 1)},
        }
        if not args.no_uncut:
            whole = Vectrix("scifact-uncut", path=home, model=FLOAT_MODEL)
            whole.add_documents([{"text": data.documents[d], "doc_id": d} for d in ids], chunk="fixed",
                                chunk_size=20000, progress=True)
            out["local_uncut"] = figures(retrieval_report(whole, questions, k=(10, 100), mode="dense"))
    finally:
        proc.terminate()
        proc.wait(10)
    out.update({"machine": machine_cpu(), "load_average_before": load_before,
                "versions": versions("vectrixdb", "xllamacpp", "gguf", "torch", "sentence-transformers", "openai")})
    write_json(args.out, out if args.small else keep_before(args.out, out))
    print({k: out[k] for k in ("local", "served", "ndcg@10_served_minus_local", "vectors")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
