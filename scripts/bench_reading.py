"""Reading and chunking speed on the two 10-K PDFs.

usage: python scripts/bench_reading.py ../shared/data/pdfs [--out benchmarks/reading.json] [--small]

pages/s: pypdf reading each PDF into paged Markdown (layout pass + font pass), best of 2.
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
from _bench import versions  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/reading.json")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="bench-reading-")
    from vectrixdb.chunking import chunk_document
    from vectrixdb.embedding import get_embedder
    from vectrixdb.reading import read

    reading, docs = {}, {}
    for name in ("uber_2021.pdf",) if args.small else ("uber_2021.pdf", "lyft_2021.pdf"):
        best = None
        for _ in range(1 if args.small else 2):
            start = time.perf_counter()
            doc = read(str(Path(args.folder) / name))
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        docs[name] = doc
        reading[name] = {"pages": len(doc.pages), "seconds": best, "pages_per_s": len(doc.pages) / best,
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
              "reading": reading, "chunking_uber_2021_at_1000": chunking, "small": args.small,
              "versions": versions("vectrixdb", "pypdf", "sentence-transformers"), "measured": time.strftime("%Y-%m-%d")}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
