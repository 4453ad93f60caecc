"""Cells run here or on a real local Ray cluster with the same results; finished cells are kept."""
import os
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT
from vectrixdb.evaluation import CompareConfig, Question, compare_chunking, run_evaluation, sweep
from vectrixdb.executors import Cell, CellStore, embed_corpus, run_cells

SAMPLE = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir())
GOLDEN = str(ROOT / "data" / "golden" / "sample.jsonl")
TIMED = ["build_s", "median_search_ms"]
CALLS = []


def count(settings, x):
    CALLS.append(x)
    return {"double": 2 * x, **settings}


def test_finished_cells_are_kept_and_never_run_twice(tmp_path):
    store = CellStore(tmp_path / "cells.sqlite")
    cells = [Cell(count, {"n": i}, (i,), (str(i),)) for i in range(4)]
    assert run_cells(cells + cells[:1], store=store) == [{"double": 2 * i, "n": i} for i in [0, 1, 2, 3, 0]]
    assert CALLS == [0, 1, 2, 3]  # the repeated cell ran once
    more = cells + [Cell(count, {"n": 9}, (9,), ("9",))]
    assert run_cells(more, store=store)[-1] == {"double": 18, "n": 9}
    assert CALLS == [0, 1, 2, 3, 9]  # a run that stopped redoes only what it had not finished
    assert Cell(count, {"n": 1}, (1,), ("1",)).key != Cell(count, {"n": 1}, (1,), ("other input",)).key


def test_without_ray_the_message_says_how_to_install_it(monkeypatch):
    from vectrixdb.errors import MissingExtra

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtra, match=r"'ray' extra .*pip install 'vectrixdb\[ray\]'"):
        run_cells([Cell(count, {}, (1,), ("1",))], "ray")
    with pytest.raises(ValueError, match="executor is 'local', 'ray'"):
        run_cells([], "spark")


def _rows(report):
    frame = report.frame.drop(columns=[c for c in TIMED if c in report.frame])
    return frame.sort_values(list(frame.columns[:4])).reset_index(drop=True)


@pytest.mark.slow
def test_sweep_comparison_evaluation_and_embedding_on_ray_match_local(tmp_path, monkeypatch):
    local_home, ray_home = tmp_path / "local", tmp_path / "ray"
    runs = {}
    for home, executor in ((local_home, "local"), (ray_home, "ray")):
        monkeypatch.setenv("VECTRIXDB_HOME", str(home))  # separate cell stores and caches: both compute
        runs[executor] = {
            "sweep": sweep(SAMPLE, GOLDEN, chunk=["recursive", "fixed"], chunk_size=[300, 600], executor=executor,
                           progress=False),
            "compare": compare_chunking(SAMPLE, GOLDEN, budget=400, techniques=["recursive", "sentence", "fixed"],
                                        sizes=[300], config=CompareConfig(executor=executor), progress=False),
        }
    pd.testing.assert_frame_equal(_rows(runs["local"]["sweep"]), _rows(runs["ray"]["sweep"]))
    local, remote = runs["local"]["compare"], runs["ray"]["compare"]
    pd.testing.assert_frame_equal(local.outcomes, remote.outcomes)  # every per-question outcome
    assert local["techniques"] == remote["techniques"] and local["pairs"] == remote["pairs"]
    assert remote["cost"]["texts_embedded"] == local["cost"]["texts_embedded"] > 0

    texts = [f"text number {i} about loans" for i in range(30)]
    here = embed_corpus(texts)
    there = embed_corpus(texts + ["one more text"], executor="ray", shard_size=8)
    assert np.allclose(here, there[:30], atol=1e-5)

    from vectrixdb import Vectrix

    db = Vectrix("ray-ingest", path=tmp_path / "collections")
    db.add_documents([{"text": f"Policy {i}: loans can be deferred for {i} months.", "doc_id": f"p{i}"}
                      for i in range(12)], executor="ray", progress=False)  # vectors from the workers, one transaction
    # dense: the workers' vectors are what is checked (keyword search ties these twelve texts but for a number)
    assert db.info()["chunks"] == 12 and db.search("deferred for 7 months", 1, mode="dense")[0].doc_id == "p7"

    driver = os.getpid()
    judged_in = set()

    def judge(metric, question, reference, answer, sources):
        judged_in.add(os.getpid())
        return 1.0

    qs = [Question(f"q{i}?", "r", [f"d{i}"], f"q{i}") for i in range(4)]
    system = lambda q: ([f"d{q[1]}", "x"], "an answer")  # noqa: E731
    a = run_evaluation(system, qs, judge=judge)
    b = run_evaluation(system, qs, judge=judge, executor="ray")
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert judged_in == {driver}  # model calls never leave the driver: one limiter, one cache


@pytest.mark.slow
def test_a_ray_sweep_equals_the_local_one_row_for_row_after_a_worker_was_killed(tmp_path, monkeypatch):
    """The first Ray worker to embed kills itself (SIGKILL, as the OOM killer would); Ray runs its
    build again on another worker, and the rows come out equal and in the same order as here."""
    import signal

    from vectrixdb.embedding import get_embedder

    driver, marker = os.getpid(), tmp_path / "killed"

    class DiesOnceInAWorker:
        """The bundled model, loaded where it runs; in a Ray worker its first encode kills the worker."""

        name, dim = "sentence-transformers/all-MiniLM-L6-v2", 384

        def __init__(self):
            self.inner = None

        def __getstate__(self):
            return {"inner": None}

        def encode(self, texts, *, progress=False):
            if os.getpid() != driver and not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
            self.inner = self.inner or get_embedder(None)
            return self.inner.encode(texts)

    runs = {}
    for executor in ("local", "ray"):
        monkeypatch.setenv("VECTRIXDB_HOME", str(tmp_path / executor))  # separate cell stores: both compute
        runs[executor] = sweep(SAMPLE, GOLDEN, chunk=["recursive", "fixed"], chunk_size=[300, 600],
                               embed_heading=[False, True], model=DiesOnceInAWorker(), executor=executor,
                               progress=False)
    assert marker.exists() and int(marker.read_text()) != driver  # a worker really died mid-sweep
    local, remote = (runs[e].frame.drop(columns=TIMED) for e in ("local", "ray"))
    pd.testing.assert_frame_equal(local, remote)  # row for row, in order
    assert {k: v for k, v in runs["local"]["best"].items() if k not in TIMED} == \
        {k: v for k, v in runs["ray"]["best"].items() if k not in TIMED}
