"""Cells are keyed by the code that computes them (executors.code_digest): a chunker edited in a
copy of the package recomputes its builds instead of handing back what the old code kept in
cells.sqlite. Each step runs in a fresh process whose PYTHONPATH puts the copy first."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

from tests.conftest import ROOT

BUILD = """
import json, vectrixdb
from vectrixdb.evaluation.chunking.compare import make_builds
from vectrixdb.executors import code_digest
from vectrixdb.reading import Document, Page
text = " ".join(f"word{i}" for i in range(400))
doc = Document("d.md", text, (Page(1, 0, len(text)),))
(build,) = make_builds({"c": [doc]}, [("fixed", 300, False)], None)
print(json.dumps({"package": vectrixdb.__file__, "code": code_digest(), "chunks": build.chunks,
                  "spans": build.spans["c"]}))
"""


def build(copy, home) -> dict:
    env = {**os.environ, "PYTHONPATH": str(copy), "VECTRIXDB_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", BUILD], env=env, cwd=copy, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def kept(home) -> int:
    with sqlite3.connect(home / "cells.sqlite") as conn:
        return conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0]


def test_an_edited_chunker_in_a_copy_of_the_package_recomputes_its_builds(tmp_path):
    copy, home = tmp_path / "copy", tmp_path / "home"
    shutil.copytree(ROOT / "vectrixdb", copy / "vectrixdb", ignore=shutil.ignore_patterns("__pycache__"))
    first = build(copy, home)
    assert first["package"].startswith(str(copy)) and first["chunks"] > 1 and kept(home) == 1
    again = build(copy, home)
    assert again == first and kept(home) == 1  # same code, same key: read back, nothing new kept
    fixed = copy / "vectrixdb" / "chunking" / "fixed.py"
    source = fixed.read_text()
    body = "    text, n = doc.markdown, len(doc.markdown)\n"
    assert source.count(body) == 1
    fixed.write_text(source.replace(body, "    chunk_size = chunk_size // 2  # the edit\n" + body))
    edited = build(copy, home)
    assert edited["code"] != first["code"] and kept(home) == 2  # a new key, computed and kept beside the old
    assert edited["chunks"] > first["chunks"]  # the edited chunker's windows, not the kept builds
    assert max(e - s for _, s, e in edited["spans"]) <= 150 < max(e - s for _, s, e in first["spans"])
