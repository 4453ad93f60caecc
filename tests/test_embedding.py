import numpy as np
import pytest

from vectrixdb.embedding import BUNDLED_MODEL, EmbeddingCache, SentenceEmbedder, bundled_model_path


def test_bundled_model_matches_plain_sentence_transformers(tmp_path):
    from sentence_transformers import SentenceTransformer

    texts = ["Payment deferment after a wildfire.", "Mean pooling of token vectors."]
    ours = SentenceEmbedder(cache=EmbeddingCache(tmp_path / "c.sqlite")).encode(texts)
    plain = SentenceTransformer(bundled_model_path(), device="cpu").encode(texts, normalize_embeddings=True)
    assert ours.shape == (2, 384) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, plain, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_the_same_text_is_never_embedded_twice(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    first = SentenceEmbedder(cache=cache)
    a = first.encode(["one", "two", "one", "three"])
    assert first.embedded == 3 and first.reused == 1
    second = SentenceEmbedder(cache=EmbeddingCache(tmp_path / "c.sqlite"))  # another instance, same file
    b = second.encode(["three", "two", "one"])
    assert second.embedded == 0 and second.reused == 3
    np.testing.assert_array_equal(a[[3, 1, 0]], b)
    assert second.name == BUNDLED_MODEL


@pytest.mark.slow
def test_cache_is_shared_across_processes(tmp_path):
    from tests.conftest import run_python

    code = """
import sys
from vectrixdb.embedding import EmbeddingCache, SentenceEmbedder
e = SentenceEmbedder(cache=EmbeddingCache(sys.argv[1]))
e.encode(["cached across processes"])
print(e.embedded)
"""
    assert run_python(code, str(tmp_path / "c.sqlite")).strip() == "1"
    assert run_python(code, str(tmp_path / "c.sqlite")).strip() == "0"


def test_unknown_model_offline_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="cannot load embedding model 'no-such-org/no-such-model'"):
        SentenceEmbedder("no-such-org/no-such-model", cache=EmbeddingCache(tmp_path / "c.sqlite")).encode(["x"])


def test_a_backend_is_named_in_the_model_string_and_checked():
    from vectrixdb.errors import Unsupported

    e = SentenceEmbedder("all-MiniLM-L6-v2@openvino-int8", cache=False)
    assert (e.name, e.backend, e.dim) == (f"{BUNDLED_MODEL}@openvino-int8", "openvino-int8", 384)
    assert SentenceEmbedder(e.name, cache=False).backend == "openvino-int8"  # what a collection records reopens
    assert SentenceEmbedder("bundled", backend="openvino", cache=False).name == f"{BUNDLED_MODEL}@openvino"
    assert SentenceEmbedder(cache=False).backend is None
    with pytest.raises(Unsupported, match=r"unknown embedding backend 'onnx-int4'; known: \['openvino'"):
        SentenceEmbedder("bundled@onnx-int4")
    with pytest.raises(Unsupported, match="for the bundled model .* only"):
        SentenceEmbedder("some-org/other-model@openvino-int8")



def scifact_texts(n: int) -> list[str]:
    from tests.conftest import SCIFACT, require
    from vectrixdb.evaluation.beir import load_beir

    return list(load_beir(require(SCIFACT)).documents.values())[:n]


@pytest.mark.slow
def test_openvino_backends_are_exported_once_and_never_share_the_float_cache(tmp_path, monkeypatch):
    from vectrixdb.errors import BadInput

    monkeypatch.setenv("VECTRIXDB_HOME", str(tmp_path / "home"))
    texts = scifact_texts(60)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    floats = SentenceEmbedder(cache=cache).encode(texts)
    with pytest.raises(BadInput, match="at least 32 distinct calibration texts"):
        SentenceEmbedder("bundled@openvino-int8", cache=cache).encode(texts[:5])
    keys = {SentenceEmbedder(cache=cache).cache_key}
    for backend, close in (("openvino", 1e-4), ("openvino-int8", 0.03)):
        first = SentenceEmbedder(f"bundled@{backend}", cache=cache)
        vecs = first.encode(texts)  # int8: exported now, calibrated on these texts (the corpus)
        assert first.embedded == len(texts) and first.reused == 0  # nothing taken from the float entries
        assert vecs.shape == (60, 384) and vecs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        assert float(np.min(np.sum(vecs * floats, axis=1))) > 1 - close
        assert not np.array_equal(vecs, floats) or backend == "openvino"
        keys.add(first.cache_key)
        again = SentenceEmbedder(first.name, cache=cache)  # another instance: the export on disk, the cache
        np.testing.assert_array_equal(again.encode(texts), vecs)
        assert again.embedded == 0 and again.cache_key == first.cache_key
    assert len(keys) == 3 and all("+openvino" in k for k in keys - {SentenceEmbedder(cache=cache).cache_key})
    assert {p.name for p in (tmp_path / "home" / "models").glob("*/*.xml")} == {"fp32.xml", "int8.xml"}


@pytest.mark.slow
def test_a_collection_records_its_backend_and_refuses_the_float_model(tmp_path, monkeypatch):
    from vectrixdb import Vectrix

    monkeypatch.setenv("VECTRIXDB_HOME", str(tmp_path / "home"))
    db = Vectrix("ov", path=tmp_path, model="all-MiniLM-L6-v2@openvino")
    db.add_documents([{"source": t, "doc_id": str(i)} for i, t in enumerate(scifact_texts(20))], progress=False)
    assert db.spaces["default"]["model"] == f"{BUNDLED_MODEL}@openvino"
    reopened = Vectrix("ov", path=tmp_path)  # no model=: searched with the backend it was built with
    assert reopened.embedder().name == f"{BUNDLED_MODEL}@openvino"
    assert reopened.search(scifact_texts(3)[2], 1, mode="dense")[0].doc_id == "2"
    with pytest.raises(Exception, match="was built with model"):
        Vectrix("ov", path=tmp_path, model="bundled").search("anything", 1)
