"""Reading and chunking speed on the two 10-K PDFs.

usage: python scripts/bench_reading.py ../shared/data/pdfs [--out benchmarks/reading.json] [--small]

pages/s: pypdf reading each PDF into paged Markdown (layout pass + font pass), best of 2, read as
`read` does (one process per core for a long PDF) and in one process ($VECTRIXDB_READ_PROCESSES=1),
in turn; the two Documents are compared.
chunks/s per technique at chunk_size 1000 over uber_2021.pdf's Markdown; semantic includes
embedding every sentence with the bundled model (cold cache, reported separately).
--small: uber_2021.pdf alone, read once, and no semantic chunking, to check that the script runs.
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
from _bench import machine_cpu, versions  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/reading.json")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="bench-reading-")
    from vectrixdb.chunking import chunk_document
    from vectrixdb.embedding import get_embedder
    from vectrixdb.reading import Document, read
    from vectrixdb.reading.pdf import READ_PROCESSES_ENV, read_processes

    reading, docs = {}, {}
    for name in ("uber_2021.pdf",) if args.small else ("uber_2021.pdf", "lyft_2021.pdf"):
        seconds: dict[str, list[float]] = {"one_process": [], "one_per_core": []}
        read_by: dict[str, Document] = {}
        for _ in range(1 if args.small else 2):
            for way in seconds:  # in turn, so a busy neighbour slows both alike
                os.environ[READ_PROCESSES_ENV] = "1" if way == "one_process" else ""
                start = time.perf_counter()
                read_by[way] = doc = read(str(Path(args.folder) / name))
                seconds[way].append(time.perf_counter() - start)
        os.environ.pop(READ_PROCESSES_ENV, None)
        docs[name] = doc
        one, many = read_by["one_process"], read_by["one_per_core"]
        best = {way: min(times) for way, times in seconds.items()}
        reading[name] = {"pages": len(doc.pages), "seconds": best["one_per_core"],
                         "pages_per_s": len(doc.pages) / best["one_per_core"],
                         "processes": read_processes(len(doc.pages)),
                         "one_process_seconds": best["one_process"],
                         "one_process_pages_per_s": len(doc.pages) / best["one_process"],
                         "speedup": best["one_process"] / best["one_per_core"],
                         "same_document": one.markdown == many.markdown and one.pages == many.pages,
                         "characters": len(doc.markdown), "flagged_pages": sum(1 for p in doc.pages if p.flags)}
    embedder = get_embedder()
    embedder.encode(["warm the model up"])
    chunking = {}
    techniques = ("structure", "parent_child", "recursive", "sentence", "semantic", "fixed")
    for technique in (t for t in techniques if not (args.small and t == "semantic")):
        start = time.perf_counter()
        chunks = chunk_document(docs["uber_2021.pdf"], technique, chunk_size=1000, embedder=embedder)
        elapsed = time.perf_counter() - start
        chunking[technique] = {"chunks": len(chunks), "seconds": elapsed, "chunks_per_s": len(chunks) / elapsed}
    if "semantic" in chunking:
        chunking["semantic"]["note"] = f"includes embedding {embedder.embedded - 1} sentences with the bundled model on CPU"
    report = {"what": "pypdf (layout mode + font pass) reading the 10-Ks; chunking uber_2021.pdf at 1000 characters",
              "reading": reading, "chunking_uber_2021_at_1000": chunking, "small": args.small, "cpu": machine_cpu(),
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "versions": versions("vectrixdb", "pypdf", "sentence-transformers"), "measured": time.strftime("%Y-%m-%d")}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
