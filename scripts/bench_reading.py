"""Reading and chunking speed on the two 10-K PDFs.

usage: python scripts/bench_reading.py ../shared/data/pdfs [--out benchmarks/reading.json] [--small] [--fast-only]

pages/s, wall, best of 3 taken in turn (a busy neighbour slows all alike): the default reader
(pdfium) as `read` reads, and pypdf's reader ($VECTRIXDB_PDF_READER=pypdf) read as `read` does (one
process per core for a long PDF) and in one process ($VECTRIXDB_READ_PROCESSES=1); pypdf's two
Documents are compared.
fast readers, in one process, CPU seconds (time.process_time; pdftotext's from its child rusage),
best of 3 taken in turn: the pdfium reader, pypdfium2's plain get_text_range() over every page (no
layout, no Markdown: the floor the pdfium reader is measured against, cpu_ratio) and
`pdftotext -layout` when it is on PATH.
chunks/s per technique at chunk_size 1000 over uber_2021.pdf's Markdown (the default reader's);
semantic includes embedding every sentence with the bundled model (cold cache, reported separately).
--small: uber_2021.pdf alone, read once each way, and no semantic chunking, to check that the script runs.
--fast-only: the fast readers alone (best of 5), printed, nothing written.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, versions, write_json  # noqa: E402


def _plain_pypdfium2(data: bytes) -> None:
    """Every page's plain text with pypdfium2, nothing more."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    for i in range(len(pdf)):
        page = pdf[i]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    pdf.close()


def _pdftotext(path: Path) -> int:
    """pdftotext -layout's characters for the file (lyft_2021.pdf: a few hundred, it cannot read its fonts)."""
    done = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True)
    return len(done.stdout.decode(errors="replace"))


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def fast_readers(path: Path, repeats: int) -> dict:
    """CPU seconds of the pdfium reader (called directly, whatever the default), pypdfium2's plain
    text and pdftotext on one PDF, best of `repeats` taken in turn (a busy neighbour slows all
    alike), in this process."""
    from vectrixdb.reading.pdfium import read_pdf as read_pdfium

    data = path.read_bytes()
    ways = {"pdfium_reader": lambda: read_pdfium(data, doc_id=path.name),
            "pypdfium2_plain_text": lambda: _plain_pypdfium2(data)}
    if shutil.which("pdftotext"):
        ways["pdftotext_layout"] = lambda: _pdftotext(path)
    first = ways["pdfium_reader"]()  # imports and first use, not timed; its size is recorded
    cpu: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(repeats):
        for way, run in ways.items():
            start = time.process_time() + _children_cpu()
            run()
            cpu[way].append(time.process_time() + _children_cpu() - start)
    best = {way: min(times) for way, times in cpu.items()}
    out = {"cpu_seconds": best, "cpu_ratio_to_plain_text": best["pdfium_reader"] / best["pypdfium2_plain_text"],
           "pdfium_reader_characters": len(first.markdown), "repeats": repeats}
    if "pdftotext_layout" in ways:
        out["pdftotext_characters"] = ways["pdftotext_layout"]()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--out", default="benchmarks/reading.json")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--fast-only", action="store_true",
                        help="time only the fast readers (pdfium reader, pypdfium2, pdftotext); print, write nothing")
    args = parser.parse_args()
    names = ("uber_2021.pdf",) if args.small else ("uber_2021.pdf", "lyft_2021.pdf")
    load_before = [round(x, 2) for x in os.getloadavg()]
    if args.fast_only:
        fast = {name: fast_readers(Path(args.folder) / name, 1 if args.small else 5) for name in names}
        print(json.dumps({"fast_readers": fast, "cpu": machine_cpu(),
                          "load_average_after": [round(x, 2) for x in os.getloadavg()]}, indent=2))
        return 0
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="bench-reading-")
    from vectrixdb.chunking import chunk_document
    from vectrixdb.embedding import get_embedder
    from vectrixdb.reading import Document, read
    from vectrixdb.reading.pdf import READ_PROCESSES_ENV, READER_ENV, READERS, read_processes

    default = READERS[0]
    ways = {default: (default, ""), "pypdf_one_per_core": ("pypdf", ""), "pypdf_one_process": ("pypdf", "1")}
    reading, docs = {}, {}
    for name in names:
        seconds: dict[str, list[float]] = {way: [] for way in ways}
        read_by: dict[str, Document] = {}
        for _ in range(1 if args.small else 3):
            for way, (reader, processes) in ways.items():  # in turn, so a busy neighbour slows all alike
                os.environ[READER_ENV], os.environ[READ_PROCESSES_ENV] = reader, processes
                start = time.perf_counter()
                read_by[way] = read(str(Path(args.folder) / name))
                seconds[way].append(time.perf_counter() - start)
        for variable in (READER_ENV, READ_PROCESSES_ENV):
            os.environ.pop(variable, None)
        docs[name] = doc = read_by[default]
        one, many = read_by["pypdf_one_process"], read_by["pypdf_one_per_core"]
        best = {way: min(times) for way, times in seconds.items()}
        pages = len(doc.pages)
        reading[name] = {"reader": default, "pages": pages, "seconds": best[default], "pages_per_s": pages / best[default],
                         "characters": len(doc.markdown), "flagged_pages": sum(1 for p in doc.pages if p.flags),
                         "pypdf": {"pages": len(many.pages), "seconds": best["pypdf_one_per_core"],
                                   "pages_per_s": len(many.pages) / best["pypdf_one_per_core"],
                                   "processes": read_processes(len(many.pages)),
                                   "one_process_seconds": best["pypdf_one_process"],
                                   "one_process_pages_per_s": len(many.pages) / best["pypdf_one_process"],
                                   "speedup": best["pypdf_one_process"] / best["pypdf_one_per_core"],
                                   "same_document": one.markdown == many.markdown and one.pages == many.pages,
                                   "characters": len(many.markdown)},
                         "pypdf_per_core_over_default": best["pypdf_one_per_core"] / best[default],
                         "fast_readers": fast_readers(Path(args.folder) / name, 1 if args.small else 3)}
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
    report = {"what": "reading the 10-Ks: the default pdfium reader, pypdf's reader (one process per core and one "
                      "process), the fast readers' CPU; chunking uber_2021.pdf at 1000 characters",
              "reader": READERS[0], "reading": reading, "chunking_uber_2021_at_1000": chunking, "small": args.small,
              "load_average_before": load_before,
              "versions": versions("vectrixdb", "pypdf", "pypdfium2", "sentence-transformers"), "measured": time.strftime("%Y-%m-%d")}
    write_json(args.out, report, indent=2)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
