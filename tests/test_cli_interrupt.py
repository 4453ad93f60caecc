"""Ctrl-C during `vectrixdb add` (issue 44): a non-zero status and one line saying nothing was added,
the collection as it was, and the texts embedded before the interrupt cached for the next run."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from vectrixdb import Vectrix
from vectrixdb.embedding import FLOAT_MODEL, SentenceEmbedder

WORDS = ("loan deferment payment fraud card mortgage balance penalty customer disaster fee report stolen branch "
         "account interest rate transfer wire savings deposit credit limit").split()
BAR = re.compile(rb"(\d[\d,]*)/(\d[\d,]*) \[")


def test_ctrl_c_during_add_exits_130_adds_nothing_and_keeps_what_was_embedded(tmp_path):
    import random

    root = tmp_path / "cols"
    Vectrix("c", path=root, model=FLOAT_MODEL).add_documents([{"source": "An earlier note.", "doc_id": "note"}],
                                                             progress=False)
    files = []
    for i in range(600):  # one chunk each: enough texts that the bar shows progress long before the end
        words = random.Random(i).choices(WORDS, k=30)
        path = tmp_path / f"doc{i:03d}.txt"
        path.write_text(" ".join(words) + f" marker{i}.\n")
        files.append(str(path))
    env = {**os.environ, "VECTRIXDB_DEFAULT_MODEL": FLOAT_MODEL, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "vectrixdb.cli", "add", "c", *files, "--path", str(root)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen = b""
    deadline = time.time() + 300
    while time.time() < deadline:
        chunk = os.read(process.stderr.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
        bars = BAR.findall(seen[seen.rfind(b"embedding"):]) if b"embedding" in seen else []  # not the reading bar
        if bars and int(bars[-1][0].replace(b",", b"")) > 0:  # some texts embedded (and cached), not all
            assert int(bars[-1][0].replace(b",", b"")) < int(bars[-1][1].replace(b",", b"")), seen[-500:]
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    err = seen + err
    assert process.returncode == 130, (process.returncode, err[-2000:])
    assert b"interrupted: nothing was added to c (the batch is one transaction)" in err, err[-2000:]
    assert b"added" not in out
    db = Vectrix("c", path=root)
    assert db.info()["documents"] == 1 and [d["doc_id"] for d in db.documents()] == ["note"]
    embedder = SentenceEmbedder(FLOAT_MODEL)  # the same model and cache: the rerun embeds only what is missing
    again = Vectrix("c", path=root, model=embedder)
    again.add_documents([Path(p) for p in files], progress=False)
    assert again.info()["documents"] == 601
    assert 0 < embedder.reused and embedder.embedded < 600, (embedder.reused, embedder.embedded)
