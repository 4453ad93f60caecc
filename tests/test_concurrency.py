"""Processes that share one collection: nothing committed is lost, and no search sees half a commit.

Real processes on one SQLite catalog and its usearch and bm25s files. The vectors come from the
stand-in embedder (what they say does not matter here: a document's own text finds it first).
Processes meet at chosen moments through marker files, so each race below happens every run.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, StandInEmbedder
from vectrixdb import Vectrix
from vectrixdb.errors import BadInput

MODES = ("dense", "keyword", "hybrid")

# What every process below shares: the collection, a document's text made from its id alone (so a
# searcher can ask for it), and waiting for another process's marker file.
COMMON = r"""
import json, os, random, sys, time
from pathlib import Path
from tests.conftest import StandInEmbedder
from vectrixdb import Vectrix

WORDS = ("loan deferment payment fraud card mortgage balance penalty customer disaster fee report "
         "stolen branch account interest rate transfer wire savings deposit credit limit").split()

def marker(doc_id):
    return "m" + doc_id.replace("-", "x")

def text_of(doc_id):
    words = random.Random(doc_id).choices(WORDS, k=24)
    return " ".join(words) + f" {marker(doc_id)}"

def open_db(root):
    return Vectrix("shared", path=root, model=StandInEmbedder())

def wait_for(path, seconds=120):
    end = time.time() + seconds
    while not Path(path).exists():
        if time.time() > end:
            raise SystemExit(f"gave up waiting for {path}")
        time.sleep(0.02)
"""


def start(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", COMMON + code, *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: int = 300) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out


def text_of(doc_id: str) -> str:
    """The same text the processes make (COMMON's text_of), for this process's own checks."""
    namespace: dict = {}
    exec(COMMON, namespace)  # noqa: S102 - the tests' own code, shared with the processes
    return namespace["text_of"](doc_id)


# 1. a failed first batch removes only what nobody else used -------------------------------------

FAILING_FIRST = r"""
import vectrixdb.ingest as ingest
root, created, committed = sys.argv[1:4]
real = ingest.prepare

def slow(*args, **kwargs):  # the folder and catalog are made: let the other process in, then fail
    Path(created).touch()
    wait_for(committed)
    return real(*args, **kwargs)

ingest.prepare = slow
try:
    open_db(root).add_documents([{"source": "x" * 100, "doc_id": "too-long"}], max_chars=10, progress=False)
except ValueError as exc:
    print("refused:", exc)
"""

SECOND_WRITER = r"""
root, created, committed = sys.argv[1:4]
wait_for(created)
db = open_db(root)
db.add_documents([{"source": text_of(f"b-{i}"), "doc_id": f"b-{i}"} for i in range(4)], progress=False)
Path(committed).touch()
"""


@pytest.mark.slow
def test_a_failed_first_batch_leaves_what_another_process_committed(tmp_path):
    """The repro: the first batch's process made the collection, another committed four documents
    to it, then the first batch failed; its clean-up removed the folder with them."""
    created, committed = tmp_path / "created", tmp_path / "committed"
    first = start(FAILING_FIRST, tmp_path, created, committed)
    second = start(SECOND_WRITER, tmp_path, created, committed)
    assert "refused" in finish(first)
    finish(second)
    db = Vectrix("shared", path=tmp_path, model=StandInEmbedder())
    assert [d["doc_id"] for d in db.documents()] == [f"b-{i}" for i in range(4)]
    assert db.check() == []
    assert db.search(text_of("b-2"), 1)[0].doc_id == "b-2"


FAILING_AFTER_OPEN = r"""
import vectrixdb.ingest as ingest
root, created, opened = sys.argv[1:4]
real = ingest.prepare

def fail(*args, **kwargs):
    Path(created).touch()
    wait_for(opened)  # the other process holds the new catalog open, with nothing committed yet
    raise ValueError("this first batch fails")

ingest.prepare = fail
try:
    open_db(root).add_documents([text_of("a-0")], progress=False)
except ValueError:
    print("failed, as planned")
print("folder left:", Path(root, "shared").exists())
"""

OPENED_THEN_WRITES = r"""
root, created, opened, first_done = sys.argv[1:5]
wait_for(created)
db = open_db(root)
assert db.exists
Path(opened).touch()
wait_for(first_done)  # the first process has removed the collection it made
db.add_documents([{"source": text_of(f"b-{i}"), "doc_id": f"b-{i}"} for i in range(3)], progress=False)
"""


@pytest.mark.slow
def test_a_process_holding_a_removed_new_collection_open_still_commits(tmp_path):
    """The first batch failed with nothing committed, so its folder went; a process that had
    opened the collection meanwhile commits later: its documents must land in a collection on
    disk, not in the removed file its connection still held."""
    created, opened, first_done = (tmp_path / n for n in ("created", "opened", "first-done"))
    first = start(FAILING_AFTER_OPEN, tmp_path, created, opened)
    second = start(OPENED_THEN_WRITES, tmp_path, created, opened, first_done)
    said = finish(first)
    assert "failed, as planned" in said and "folder left: False" in said
    first_done.touch()
    finish(second)
    db = Vectrix("shared", path=tmp_path, model=StandInEmbedder())
    assert [d["doc_id"] for d in db.documents()] == ["b-0", "b-1", "b-2"]
    assert db.check() == []


def test_a_refused_first_batch_in_one_process_still_leaves_no_folder(tmp_path, fake_embedder):
    db = Vectrix("alone", path=tmp_path, model=fake_embedder)
    with pytest.raises(BadInput, match="over the size cap"):
        db.add_documents([{"source": "x" * 100, "doc_id": "big"}], max_chars=10, progress=False)
    assert not (tmp_path / "alone").exists()
    assert db.add_document("now it works", doc_id="ok") == "ok"
    assert db.check() == []


# 2. a search reads its index and its rows at one committed state -------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_a_search_never_sees_half_a_commit(tmp_path, fake_embedder, monkeypatch, mode):
    """Another connection (another process, as far as SQLite knows) replaces the document between
    the search's read of its index and its read of the rows; the index held the old keys, which are
    gone from the rows, and the document vanished from the results."""
    reader = Vectrix("s", path=tmp_path, model=fake_embedder)
    docs = {d: text_of(d) for d in ("a-0", "a-1", "a-2")}
    reader.add_documents([{"source": t, "doc_id": d} for d, t in docs.items()], progress=False)
    writer = Vectrix("s", path=tmp_path, model=fake_embedder)
    real = reader.catalog.chunk_rows
    replaced = []

    def commit_first(keys):
        if not replaced:  # once: the document is replaced by the same text (new chunk keys)
            replaced.append(writer.add_document(docs["a-1"], doc_id="a-1"))
        return real(keys)

    monkeypatch.setattr(reader.catalog, "chunk_rows", commit_first)
    query = docs["a-1"] if mode != "keyword" else docs["a-1"].split()[-1]
    hits = reader.search(query, 3, mode=mode)
    assert replaced and hits[0].doc_id == "a-1"
    assert hits[0].chunk_id in {c["chunk_id"] for c in writer.chunks()}


def test_similar_and_chunks_read_one_committed_state(tmp_path, fake_embedder, monkeypatch):
    reader = Vectrix("s", path=tmp_path, model=fake_embedder)
    docs = {d: text_of(d) for d in ("a-0", "a-1")}
    reader.add_documents([{"source": t, "doc_id": d} for d, t in docs.items()], progress=False)
    writer = Vectrix("s", path=tmp_path, model=fake_embedder)
    real = reader.catalog.chunk_rows
    commits = iter([lambda: writer.add_document(docs["a-1"], doc_id="a-1")])

    def commit_first(keys):
        next(commits, lambda: None)()
        return real(keys)

    monkeypatch.setattr(reader.catalog, "chunk_rows", commit_first)
    assert reader.similar(docs["a-1"], 2)[0].doc_id == "a-1"
    real_markdown = reader.catalog.markdown
    longer = docs["a-0"] + " and a longer tail that moves every offset"
    edits = iter([lambda: writer.add_document(longer, doc_id="a-0")])

    def commit_between(doc_id):  # the rows were read; the Markdown is read after a replacement
        next(edits, lambda: None)()
        return real_markdown(doc_id)

    monkeypatch.setattr(reader.catalog, "markdown", commit_between)
    chunk = next(c for c in reader.chunks() if c["doc_id"] == "a-0")
    assert chunk["text"] == longer  # the new rows with the new text, never old offsets into new text


def test_delete_document(tmp_path, fake_embedder):
    db = Vectrix("s", path=tmp_path, model=fake_embedder)
    db.add_documents([{"source": text_of(d), "doc_id": d} for d in ("a-0", "a-1", "a-2")], progress=False)
    assert db.delete_document("a-1") is True
    assert db.delete_document("a-1") is False
    for mode in MODES:
        assert "a-1" not in {h.doc_id for h in db.search(text_of("a-1"), 10, mode=mode)}
    assert [d["doc_id"] for d in db.documents()] == ["a-0", "a-2"]
    assert db.check() == []
    again = Vectrix("s", path=tmp_path, model=fake_embedder)  # another process's view: the saved indexes agree
    assert {h.doc_id for h in again.search(text_of("a-1"), 10, mode="hybrid")} == {"a-0", "a-2"}
    assert db.delete_documents(["a-0", "nope", "a-0"]) == ["a-0"]
    with pytest.raises(BadInput, match="list of ids"):
        db.delete_documents("a-2")
    with pytest.raises(FileNotFoundError, match="no collection 'other'"):
        Vectrix("other", path=tmp_path).delete_document("a-0")
    assert not (tmp_path / "other").exists()


# 3. many processes at once, for a bounded time --------------------------------------------------

WRITER = r"""
root, name, seed, seconds, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
db, rnd, out = open_db(root), random.Random(seed), open(log, "a", buffering=1)
note = lambda **row: out.write(json.dumps(row) + "\n")
live, made, end = [], 0, time.time() + seconds
while time.time() < end:
    r = rnd.random()
    if r < 0.4 or len(live) < 3:  # add one or a few new documents in one batch
        ids = [f"{name}-{made + i}" for i in range(rnd.choice((1, 1, 3)))]
        made += len(ids)
        db.add_documents([{"source": text_of(d), "doc_id": d} for d in ids], progress=False)
        live += ids
        note(op="added", docs=ids)
    elif r < 0.75:  # replace a document by its own text: new chunk keys, the same answers
        doc = rnd.choice(live)
        db.add_document(text_of(doc), doc_id=doc)
        note(op="replaced", docs=[doc])
    else:
        doc = live.pop(rnd.randrange(len(live)))
        note(op="deleting", docs=[doc])  # before: a search after this line may miss it
        assert db.delete_document(doc)
        note(op="deleted", docs=[doc])
"""

SEARCHER = r"""
root, seed, seconds, logs, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
db, rnd, end = open_db(root), random.Random(seed), time.time() + seconds
searches, misses = 0, []

def committed():  # added (the commit returned) and no delete started
    added, deleting = set(), set()
    for log in Path(logs).glob("writer-*.jsonl"):
        for line in log.read_text().splitlines():
            row = json.loads(line)
            (added if row["op"] == "added" else deleting if row["op"] == "deleting" else set()).update(row["docs"])
    return added - deleting

while time.time() < end:
    expected = sorted(committed())  # read before the searches start: each was committed before them
    asked = []
    for doc in rnd.sample(expected, min(8, len(expected))):
        mode = rnd.choice(("dense", "keyword", "hybrid"))
        query = marker(doc) if mode == "keyword" else text_of(doc)
        found = [h.doc_id for h in db.search(query, 5, mode=mode)]
        searches += 1
        asked.append((doc, mode, found))
    deleted_meanwhile = set(expected) - committed()  # a delete started during the searches: not judged
    misses += [(d, m, f) for d, m, f in asked if d not in f and d not in deleted_meanwhile]
Path(out).write_text(json.dumps({"searches": searches, "misses": misses}))
"""


@pytest.mark.slow
def test_processes_adding_replacing_deleting_and_searching_at_once(tmp_path):
    """Three writers (adding batches, replacing, deleting) and two searchers (every mode) on one
    collection for a bounded time. Every search must find each document committed before it started
    and not being deleted; afterwards the collection holds exactly what the writers' logs say, every
    document is found, and the store's own check finds nothing wrong."""
    seconds, logs = 12, tmp_path / "logs"
    logs.mkdir()
    root = tmp_path / "db"
    seed_db = Vectrix("shared", path=root, model=StandInEmbedder())
    seed_db.add_documents([{"source": text_of(f"seed-{i}"), "doc_id": f"seed-{i}"} for i in range(5)], progress=False)
    writers = [start(WRITER, root, f"w{i}", i, seconds, logs / f"writer-{i}.jsonl") for i in range(3)]
    searchers = [start(SEARCHER, root, 100 + i, seconds, logs, logs / f"searcher-{i}.json") for i in range(2)]
    for proc in writers + searchers:
        finish(proc, timeout=600)
    found = [json.loads((logs / f"searcher-{i}.json").read_text()) for i in range(2)]
    assert all(f["searches"] > 20 for f in found), found  # the searchers really searched meanwhile
    assert [m for f in found for m in f["misses"]] == []
    rows = [json.loads(line) for log in sorted(logs.glob("writer-*.jsonl")) for line in log.read_text().splitlines()]
    ops = {op: sum(len(r["docs"]) for r in rows if r["op"] == op) for op in ("added", "replaced", "deleted")}
    assert all(ops.values()), ops  # each kind of write happened
    expected = {f"seed-{i}" for i in range(5)}
    for row in rows:
        if row["op"] == "added":
            expected |= set(row["docs"])
        elif row["op"] == "deleted":
            expected -= set(row["docs"])
    db = Vectrix("shared", path=root, model=StandInEmbedder())
    assert {d["doc_id"] for d in db.documents()} == expected
    assert db.check() == []
    for doc in random.Random(0).sample(sorted(expected), min(40, len(expected))):
        assert db.search(text_of(doc), 3)[0].doc_id == doc
        assert doc in {h.doc_id for h in db.search(text_of(doc).split()[-1], 3, mode="keyword")}
