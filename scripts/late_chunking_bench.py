"""Late chunking against naive chunking on SciFact (test), with the bundled all-MiniLM-L6-v2.

usage: python scripts/late_chunking_bench.py ../shared/data/scifact [--chunk-chars 450] [--others N] [--out benchmarks/late_chunking_scifact.json]
       [--small]

--others N keeps the test queries' judged abstracts and the first N others (all 5,183 when left
out); the file says which corpus was used,
and the figures of a smaller corpus are higher than the full corpus's for all three ways alike.
--small: 5 queries, their judged abstracts and 10 others, to check that the script runs.

Every abstract (title + " " + text, as MTEB embeds it) is cut by the sentence chunker into chunks of
at most --chunk-chars characters (450 characters is about 64-128 tokens of this model's tokenizer;
the file records the measured token counts). A document is scored by its best chunk (cosine with
the query). Naive: each chunk embedded alone (the usual pooling of sentence-transformers). Late:
each chunk's vector is the mean of its tokens read in the whole abstract (vectrixdb.late). Beside
them, the whole abstract as one vector (no chunking: MTEB's 0.6451). nDCG@10 over the 300 judged
queries, metric_table (checked against ir_measures in the tests).

Jina's published protocol (Günther et al. 2024, jina-embeddings-v2-small, 256-token chunks,
SciFact nDCG@10 64.20 naive -> 66.10 late) differs: another model (8k context, mean pooling), longer
chunks, and their own evaluation harness. This measures the same idea with the bundled model; it
is not a reproduction of their number.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import peak_rss_mb, versions, write_json  # noqa: E402


HOW = ("each abstract (title + ' ' + text) cut by the sentence chunker at --chunk-chars; a document scored by its best "
       "chunk's cosine with the query; naive: each chunk embedded alone; late: the mean of its tokens read in the whole "
       "abstract (vectrixdb.late); no chunking: the whole abstract; nDCG@10 and R@100 over the 300 judged test queries "
       "with metric_table; a cold embedding cache; windows batched 32 at a time; 2 CPU cores")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--chunk-chars", type=int, default=450)
    parser.add_argument("--others", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/late_chunking_scifact.json")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="late-bench-")  # a cold embedding cache: seconds are real
    from vectrixdb.chunking import chunk_document
    from vectrixdb.embedding import get_embedder
    from vectrixdb.evaluation import load_beir, metric_table
    from vectrixdb.late import late_vectors_many
    from vectrixdb.reading import join_pages

    data = load_beir(args.folder)
    if args.small:
        data.questions[:] = data.questions[:5]
        args.others = 10
    emb = get_embedder("all-MiniLM-L6-v2@fp32")  # late chunking reads the torch model's token embeddings
    tokenizer = emb.model[0].tokenizer
    ids = list(data.documents)
    if args.others is not None:
        judged = {d for q in data.questions for d in q.expected}
        ids = [d for d in ids if d in judged] + [d for d in ids if d not in judged][: args.others]
    started = time.perf_counter()
    chunks = {d: chunk_document(join_pages(d, [data.documents[d]], None), "sentence", chunk_size=args.chunk_chars,
                                overlap=0) for d in ids}
    owners = [d for d in ids for _ in chunks[d]]
    texts = [c.text for d in ids for c in chunks[d]]
    tokens = np.array([len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts])
    t0 = time.perf_counter()
    naive = emb.encode(texts, progress=True)
    naive_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    late = np.vstack(late_vectors_many(emb, [(data.documents[d], [(c.start, c.end) for c in chunks[d]]) for d in ids],
                                       progress=True))
    late_s = time.perf_counter() - t0
    whole = emb.encode([data.documents[d] for d in ids], progress=True)
    queries = emb.encode([q.question for q in data.questions])
    position = {d: i for i, d in enumerate(ids)}
    owner_index = np.array([position[o] for o in owners])

    def run(vectors: np.ndarray, per_chunk: bool) -> dict:
        out = {}
        for q, qv in zip(data.questions, queries):
            sims = vectors @ qv
            if per_chunk:  # a document's score is its best chunk's
                best = np.full(len(ids), -np.inf)
                np.maximum.at(best, owner_index, sims)
                sims = best
            top = np.argsort(-sims)[:100]
            out[q.id] = {ids[i]: float(sims[i]) for i in top}
        return out

    qrels = {q.id: dict(q.graded()) for q in data.questions}
    results = {}
    for name, vectors, per_chunk in (("no_chunking", whole, False), ("naive_chunks", naive, True),
                                     ("late_chunks", late, True)):
        table = metric_table(run(vectors, per_chunk), qrels, ["ndcg@10", "recall@100"])
        results[name] = {"ndcg@10": float(table["ndcg@10"].mean()), "recall@100": float(table["recall@100"].mean())}
    corpus = (f"{len(ids):,} abstracts: the judged ones and {args.others:,} others" if args.others is not None
              else f"all {len(ids):,} abstracts")
    report = {"what": f"SciFact test (300 queries; {corpus}): naive vs late chunking, a document scored by its "
                      "best chunk, bundled all-MiniLM-L6-v2 (mean pooling, 256-token windows)",
              "corpus": {"documents": len(ids), "full_corpus": args.others is None}, "small": args.small,
              "how": HOW,
              "chunks": {"count": len(texts), "per_document_mean": len(texts) / len(ids),
                         "tokens_p10_p50_p90": [int(x) for x in np.percentile(tokens, [10, 50, 90])],
                         "chunk_chars_max": args.chunk_chars},
              "results": results,
              "late_minus_naive_ndcg@10": results["late_chunks"]["ndcg@10"] - results["naive_chunks"]["ndcg@10"],
              "published_for_comparison": {"MTEB all-MiniLM-L6-v2 no chunking": 0.6451,
                                           "Jina late chunking paper, jina-embeddings-v2-small, 256-token chunks":
                                               {"naive": 0.6420, "late": 0.6610}},
              "seconds": {"naive_embedding": naive_s, "late_embedding": late_s,
                          "total": time.perf_counter() - started},
              "peak_rss_mb": peak_rss_mb(), "versions": versions("vectrixdb", "torch", "sentence-transformers",
                                                                 "transformers"),
              "measured": time.strftime("%Y-%m-%d")}
    write_json(args.out, report, indent=2)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
