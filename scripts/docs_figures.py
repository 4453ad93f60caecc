"""The documentation site's table of published figures (docs/figures.md), generated from benchmarks/*.json.

usage: python scripts/docs_figures.py            # print the table
       python scripts/docs_figures.py --write    # put it in docs/figures.md between the figures markers

The rows are scripts/figures_table.py's (each names its file; a file that is missing, or lacks a
figure, is an error, not a blank cell), with one more column: the machine the file says it was
measured on (its `cpu` or `machine` field), or "not recorded" where the file does not say, and
for a file that read PDFs the reader it read them with (its `pdf_reader` field).
tests/test_docs_site.py checks that docs/figures.md holds exactly what this prints.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "figures.md"
START, END = "<!-- figures:start (scripts/docs_figures.py writes this table) -->", "<!-- figures:end -->"


def _figures_table():
    spec = importlib.util.spec_from_file_location("figures_table", ROOT / "scripts" / "figures_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def machine(name: str, folder: Path = ROOT / "benchmarks") -> str:
    """The machine a benchmark file records, in words; "not recorded" when it records none."""
    d = json.loads((folder / name).read_text())
    found = d.get("cpu") or d.get("machine")
    if isinstance(found, dict):
        cpu, cores = found.get("cpu"), found.get("cores")
        found = found.get("cpu_flags") or (f"{cpu}, {cores} cores" if cpu and cores else cpu)
    said = " ".join(str(found).split()).replace("|", "/") if found else "not recorded"
    return f"{said}; PDFs read by {d['pdf_reader']}" if d.get("pdf_reader") else said


def table() -> str:
    lines = ["| what | figure | file | machine |", "|---|---|---|---|"]
    last = None
    for what, figure, file in _figures_table().rows():
        last = last if file == "same" else file
        lines.append(f"| {what} | {figure} | {file} | {machine(last)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true")
    text = table()
    if not parser.parse_args().write:
        print(text)
        return 0
    head, rest = PAGE.read_text().split(START, 1)
    _, tail = rest.split(END, 1)
    PAGE.write_text(f"{head}{START}\n{text}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
