"""A full or read-only filesystem: what was there stays whole, and the error names the path.

Each test mounts a small tmpfs of its own (root only; skipped with the reason otherwise) and fills
it with a file, so SQLite, usearch, bm25s and the run writers meet a real ENOSPC or EROFS.
"""
from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from vectrixdb import Vectrix
from vectrixdb.errors import IOFailure

DOCS = {f"d{i}": f"loan deferment payment number {i} for customers in disaster areas" for i in range(6)}


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def fill(where: Path) -> Path:
    """Take every free block of the filesystem at `where` with one file (removed to free them)."""
    filler = where / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def snapshot(db: Vectrix) -> tuple:
    return ([d["doc_id"] for d in db.documents()],
            [(h.chunk_id, round(h.score, 5)) for m in ("dense", "keyword", "hybrid") for h in db.search("loan 3", 3, mode=m)])


def test_an_add_on_a_full_disk_keeps_the_collection_and_names_the_catalog(small_disk, fake_embedder):
    db = Vectrix("c", path=small_disk, model=fake_embedder)
    db.add_documents([{"source": t, "doc_id": d} for d, t in DOCS.items()], progress=False)
    before = snapshot(db)
    filler = fill(small_disk)
    big = [{"source": f"new text {i} " * 2000, "doc_id": f"new{i}"} for i in range(5)]
    with pytest.raises(IOFailure, match=str(small_disk / "c")):
        db.add_documents(big, progress=False)
    assert snapshot(db) == before
    assert snapshot(Vectrix("c", path=small_disk, model=fake_embedder)) == before  # another process's view
    assert db.check() == []
    filler.unlink()  # space again: the same batch goes in
    db.add_documents(big, progress=False)
    assert len(db.documents()) == len(DOCS) + 5 and db.check() == []


def test_a_new_collection_on_a_full_disk_says_so_and_leaves_nothing(small_disk, fake_embedder):
    fill(small_disk)
    db = Vectrix("fresh", path=small_disk, model=fake_embedder)
    with pytest.raises(IOFailure, match=str(small_disk / "fresh")):
        db.add_documents([{"source": t, "doc_id": d} for d, t in DOCS.items()], progress=False)
    assert not (small_disk / "fresh").exists()


def test_a_read_only_collection_is_searched_and_a_write_names_the_folder(small_disk, fake_embedder):
    db = Vectrix("c", path=small_disk, model=fake_embedder)
    db.add_documents([{"source": t, "doc_id": d} for d, t in DOCS.items()], progress=False)
    before = snapshot(db)
    db._forget()  # its connection closes, so the WAL's files are folded back and removed, as after any run
    read_only(small_disk)
    db = Vectrix("c", path=small_disk, model=fake_embedder)
    assert snapshot(db) == before and db.check() == []
    with pytest.raises(IOFailure, match=str(small_disk / "c")):
        db.add_document("one more", doc_id="more")
    with pytest.raises(IOFailure, match=str(small_disk / "c")):
        db.delete_document("d1")
    assert snapshot(db) == before


def test_a_run_saved_onto_a_full_disk_leaves_nothing_and_names_the_file(small_disk):
    from vectrixdb.evaluation import Question, retrieval_report

    questions = [Question(f"question {i}?", None, [f"d{i}"], f"q{i}") for i in range(40)]
    retriever = lambda q: [f"d{i}" for i in range(30)]  # noqa: E731
    kept = retrieval_report(retriever, questions, save_to=str(small_disk / "runs"))["run_id"]
    before = sorted(p.relative_to(small_disk) for p in small_disk.rglob("*"))
    fill(small_disk)
    with pytest.raises(IOFailure, match=str(small_disk / "runs")):
        retrieval_report(retriever, questions, save_to=str(small_disk / "runs"))
    assert sorted(p.relative_to(small_disk) for p in small_disk.rglob("*") if p.name != "filler") == before
    from vectrixdb.evaluation import load_run

    assert load_run(str(small_disk / "runs"), kept)["questions"] == 40  # the earlier run is whole


def test_an_export_onto_a_full_disk_leaves_no_file_and_names_it(small_disk, tmp_path):
    from vectrixdb.evaluation import Question, retrieval_report
    from vectrixdb.export.files import export_run

    questions = [Question(f"question {i}?", None, [f"d{i}"], f"q{i}") for i in range(5)]
    run = retrieval_report(lambda q: ["d1", "d2", "d3"], questions, save_to=str(tmp_path / "runs"))["run_id"]
    fill(small_disk)
    for option in ("pdf", "html"):
        target = small_disk / f"certificate.{option}"
        with pytest.raises(IOFailure, match=str(target)):
            export_run(run, str(tmp_path / "runs"), **{option: str(target)})
        assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]
