"""Inputs are what they look like; reading never creates; one error family; where= is exact.

Real collections in temporary folders, with a deterministic stand-in model so each test is quick."""
import os
import sqlite3
from pathlib import Path

import pytest

from tests.test_policy import HashEmbedder
from vectrixdb import Vectrix
from vectrixdb.errors import BadInput, Corrupt, NotFound, Unsupported, VectrixError


@pytest.fixture
def col(tmp_path):
    return Vectrix("inputs", path=tmp_path, model=HashEmbedder())


def _nothing_created(col):
    assert not col.folder.exists()


# --- inputs are what they look like ------------------------------------------------------------

def test_a_folder_a_fifo_and_missing_files_are_errors_naming_them(col, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    monkeypatch.chdir(tmp_path)
    cases = [(str(folder), BadInput, "is a folder"), (folder, BadInput, "is a folder"),
             (str(fifo), BadInput, "FIFO"), ("report.docx", NotFound, "report.docx: no such file"),
             ("missing.md", NotFound, "missing.md: no such file"), ("data/sample", NotFound, "data/sample"),
             (str(tmp_path / "nothing"), NotFound, "no such file"), ("docs", BadInput, "docs: is a folder")]
    for source, error, words in cases:
        with pytest.raises(error, match=words):
            col.add_document(source)
    _nothing_created(col)


def test_an_existing_file_of_an_unsupported_type_is_refused(col, tmp_path):
    (tmp_path / "report.docx").write_bytes(b"PK\x03\x04 not text")
    with pytest.raises(Unsupported, match=r"report\.docx.*'\.docx'"):
        col.add_document(str(tmp_path / "report.docx"))
    _nothing_created(col)


def test_text_that_looks_like_a_path_can_be_added_as_text(col):
    assert col.add_documents([{"text": "report.docx", "doc_id": "r"}], progress=False) == ["r"]
    assert col.document("r").markdown == "report.docx"


def test_text_gets_an_id_from_its_content(col):
    a = col.add_document("Loans may be deferred after a flood.")
    b = col.add_document("Cards reported stolen are blocked at once.")
    assert a != b and a.startswith("text-") and len(col.documents()) == 2
    assert col.add_document("Loans may be deferred after a flood.") == a and len(col.documents()) == 2
    assert col.add_documents([b"bytes without a name"], progress=False)[0].startswith("text-")


@pytest.mark.parametrize("doc_id", ["", "   ", "a#page=2", "name\n", "tab\there", "nul\x00", " lead", "x" * 513,
                                    "sur\ud800"])
def test_bad_doc_ids_are_refused(col, doc_id):
    with pytest.raises(BadInput, match="doc_id"):
        col.add_document("Some text.", doc_id=doc_id)
    _nothing_created(col)
    col.add_document("Other text.", doc_id="fine")
    with pytest.raises(BadInput, match="doc_id"):
        col.add_document("Some text.", doc_id=doc_id)
    assert [d["doc_id"] for d in col.documents()] == ["fine"]


def test_a_lone_surrogate_in_text_or_a_query_is_a_clear_error(col):
    with pytest.raises(BadInput, match="lone surrogate"):
        col.add_document("bad \udc80 text", doc_id="s")
    col.add_document("good text", doc_id="g")
    for mode in ("dense", "keyword", "hybrid"):
        with pytest.raises(BadInput, match="lone surrogate"):
            col.search("bad \ud800 query", 3, mode=mode)
    with pytest.raises(BadInput, match="lone surrogate"):
        col.similar("\ud800", 3)


def test_the_size_cap_is_named_when_hit(col, tmp_path, monkeypatch):
    with pytest.raises(BadInput, match="max_chars"):
        col.add_document("x" * 101, doc_id="big", max_chars=100)
    assert col.add_document("x" * 100, doc_id="fits", max_chars=100) == "fits"
    big = tmp_path / "big.md"
    big.write_text("word " * 40)
    monkeypatch.setenv("VECTRIXDB_MAX_CHARS", "50")
    with pytest.raises(BadInput, match=r"big\.md.*VECTRIXDB_MAX_CHARS"):
        col.add_document(str(big))
    monkeypatch.setenv("VECTRIXDB_MAX_CHARS", "lots")
    with pytest.raises(BadInput, match="VECTRIXDB_MAX_CHARS"):
        col.add_document("short", doc_id="s")


def test_a_batch_item_with_unknown_keys_is_refused(col):
    with pytest.raises(BadInput, match="metadta"):
        col.add_documents([{"source": "text", "metadta": {"year": 1}}], progress=False)


# --- reading never creates ---------------------------------------------------------------------

def test_reads_on_a_missing_collection_say_so_and_create_nothing(tmp_path):
    Vectrix("other", path=tmp_path, model=HashEmbedder()).add_document("Some text.", doc_id="d")
    db = Vectrix("missing", path=tmp_path)
    reads = [db.info, db.documents, lambda: db.document("d"), lambda: db.search("text", 3),
             lambda: db.similar("text", 3), lambda: db.as_principal({"group": "x"}).search("text", 3),
             lambda: db.spaces]
    for read in reads:
        with pytest.raises(NotFound, match=rf"no collection 'missing' under {tmp_path}; existing: other"):
            read()
    assert not (tmp_path / "missing").exists() and "not created yet" in repr(db)
    assert isinstance(NotFound("x"), FileNotFoundError)


def test_the_first_write_creates_and_a_later_open_finds_it(tmp_path):
    db = Vectrix("new", path=tmp_path, model=HashEmbedder())
    assert not db.exists
    db.add_document("Some text.", doc_id="d")
    assert db.exists and Vectrix("new", path=tmp_path, model=HashEmbedder()).info()["documents"] == 1


def test_a_corrupt_catalog_is_an_error_naming_the_file(tmp_path):
    """A collection written by another process whose catalog then got garbage bytes."""
    from tests.conftest import run_python

    run_python("import sys; from vectrixdb import Vectrix; from tests.test_policy import HashEmbedder; "
               "Vectrix('hurt', path=sys.argv[1], model=HashEmbedder()).add_document('Some text.', doc_id='d')",
               str(tmp_path), env={"PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    folder = tmp_path / "hurt"
    for suffix in ("-wal", "-shm"):
        (folder / f"catalog.sqlite{suffix}").unlink(missing_ok=True)
    (folder / "catalog.sqlite").write_bytes(os.urandom(8192))
    with pytest.raises(Corrupt, match=r"catalog\.sqlite.*backup.*delete the folder") as raised:
        Vectrix("hurt", path=tmp_path).info()
    assert not isinstance(raised.value, sqlite3.Error) and isinstance(raised.value, VectrixError)


# --- where= is exact ---------------------------------------------------------------------------

@pytest.fixture
def tagged(col):
    col.add_documents([
        {"source": "flag on", "doc_id": "true", "metadata": {"flag": True, "year": 2021}},
        {"source": "flag one", "doc_id": "one", "metadata": {"flag": 1, "year": "2021"}},
        {"source": "flag zero", "doc_id": "zero", "metadata": {"flag": 0, "year": 2021.0}},
        {"source": "flag null", "doc_id": "null", "metadata": {"flag": None}},
        {"source": "flag none", "doc_id": "none"},
    ], progress=False)
    return col


def _ids(db, where):
    return sorted(h.doc_id for h in db.search("flag", 10, where=where))


def test_where_is_type_aware(tagged):
    assert _ids(tagged, {"flag": True}) == ["true"]
    assert _ids(tagged, {"flag": 1}) == ["one"]
    assert _ids(tagged, {"flag": False}) == []
    assert _ids(tagged, {"flag": 0}) == ["zero"]
    assert _ids(tagged, {"flag": [True, 0]}) == ["true", "zero"]
    assert _ids(tagged, {"year": 2021}) == ["true", "zero"]  # numbers by value; "2021" is text
    assert _ids(tagged, {"year": "2021"}) == ["one"]


def test_where_none_matches_a_missing_key_or_null(tagged):
    assert _ids(tagged, {"flag": None}) == ["none", "null"]
    assert _ids(tagged, {"year": None}) == ["none", "null"]


@pytest.mark.parametrize("where", [{"$or": [{"flag": 1}]}, {"year": {"$gt": 2020}}, {"$year": 2021}, ["flag"], {1: 2}])
def test_operators_and_malformed_filters_are_errors(tagged, where):
    for mode in ("dense", "keyword"):
        with pytest.raises(BadInput, match="where"):
            tagged.search("flag", 3, mode=mode, where=where)


def test_operators_are_refused_even_on_an_empty_filter_result(col):
    col.add_document("text", doc_id="d")
    with pytest.raises(BadInput, match=r"\$gt"):
        col.search("text", 3, where={"year": {"$gt": 1}})
