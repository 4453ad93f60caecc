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
