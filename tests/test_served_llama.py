"""The embedding route against a real embedding server: llama.cpp's own server (xllamacpp) with
--embedding, serving the bundled all-MiniLM-L6-v2 converted to GGUF here (tests/embedding_server.py).

The server's vectors must be the local float model's to within TOLERANCE on every component (and a
cosine of at least MIN_COSINE) for the same text: measured on SciFact abstracts and queries, the
largest difference was 4.7e-4 and the smallest cosine 0.999995 (llama.cpp's kernels, same float32
weights). Texts are cut to the 256 tokens the model reads (embedding_server.fit), since the server
refuses a longer one where the local model cuts it. The whole SciFact corpus is compared by
scripts/bench_embedding_route.py (benchmarks/embedding_route.json)."""
import numpy as np
import pytest

from tests.conftest import SCIFACT, require
from tests.embedding_server import fit, start_embedding_server
from tests.llama_server import AzureFront, IdentityEndpoint
from vectrixdb import Vectrix
from vectrixdb.embedding import FLOAT_MODEL, EmbeddingCache, SentenceEmbedder
from vectrixdb.errors import Refused
from vectrixdb.evaluation import load_beir, retrieval_report
from vectrixdb.served import EmbeddingRoute

TOLERANCE = 1e-3
MIN_COSINE = 0.9999


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """llama.cpp's embedding server on loopback, 2 slots of 256 tokens; yields its base URL (…/v1)."""
    log = tmp_path_factory.mktemp("embedding-server") / "server.log"
    try:
        proc, base = start_embedding_server(log)
    except Exception as exc:  # noqa: BLE001 - any reason it did not start is a failure to report
        pytest.fail(f"the embedding server did not start: {exc}")
    yield base
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def scifact():
    return load_beir(require(SCIFACT))


def test_served_vectors_equal_the_local_models(served, scifact):
    from transformers import AutoTokenizer

    from vectrixdb.embedding import bundled_model_path

    docs = fit(list(scifact.documents.values())[:48])
    texts = docs + [q.question for q in scifact.questions[:16]]
    route = EmbeddingRoute(f"{served}#minilm", cache=False, batch_size=16)
    got = route.encode(texts)
    local = SentenceEmbedder(FLOAT_MODEL, cache=False).encode(texts)
    assert got.shape == local.shape == (64, 384) and route.dim == 384
    assert float(np.abs(got - local).max()) <= TOLERANCE
    assert float((got * local).sum(axis=1).min()) >= MIN_COSINE
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    spent = route.totals()
    assert spent["requests"] == 4 and spent["unmetered"] == 0
    assert spent["tokens"] == sum(len(tokenizer(t)["input_ids"]) for t in texts)  # the reply's usage: [CLS] ... [SEP]


def test_an_input_longer_than_the_model_reads_is_refused_at_once(served):
    route = EmbeddingRoute(f"{served}#minilm", cache=False)
    with pytest.raises(Refused, match="after 1 request: .*(too large|larger than the max context)"):
        route.encode(["word " * 400])
    assert route.totals()["requests"] == 1


def test_azure_managed_identity_in_front_of_the_real_server(served, monkeypatch, tmp_path):
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "MSI_ENDPOINT", "AZURE_OPENAI_KEY"):
        monkeypatch.delenv(name, raising=False)
    endpoint = IdentityEndpoint("s3cret", "good-token")
    front = AzureFront(served, {"minilm"}, token="good-token", call="embeddings")
    try:
        monkeypatch.setenv("IDENTITY_ENDPOINT", endpoint.url)
        monkeypatch.setenv("IDENTITY_HEADER", "s3cret")
        texts = ["Vitamin D deficiency is linked to depression.", "Aspirin lowers the risk of heart attack."]
        azure = EmbeddingRoute.azure_openai(front.endpoint, "minilm", cache=EmbeddingCache(tmp_path / "c.sqlite"))
        direct = EmbeddingRoute(f"{served}#minilm", cache=False)
        assert np.allclose(azure.encode(texts), direct.encode(texts), atol=1e-6)
        assert front.seen[-1]["headers"]["authorization"] == "Bearer good-token" and endpoint.asked
    finally:
        front.close()
        endpoint.close()


@pytest.mark.slow
def test_a_served_space_scores_scifact_as_the_local_model_does(served, scifact, tmp_path):
    """A collection of 400 SciFact abstracts (every one judged for the first 60 test queries, then
    the corpus in order) embedded locally into "default" and by the server into "served": dense
    nDCG@10 and recall@10 of the two spaces agree to 0.005, question by question almost always."""
    questions = scifact.questions[:60]
    judged = {d for q in questions for d in q.expected}
    ids = sorted(judged) + [d for d in scifact.documents if d not in judged][: 400 - len(judged)]
    db = Vectrix("scifact-served", path=tmp_path, model=FLOAT_MODEL)
    texts = fit([scifact.documents[d] for d in ids])
    db.add_documents([{"text": t, "doc_id": d} for d, t in zip(ids, texts)], chunk="fixed", chunk_size=20000,
                     progress=False)
    assert db.add_vectors("served", f"{served}#minilm", progress=False) == len(ids)
    local = retrieval_report(db, questions, k=10, mode="dense")
    over_http = retrieval_report(db, questions, k=10, mode="dense", vectors="served")
    assert abs(local["ndcg"][10] - over_http["ndcg"][10]) <= 0.005
    assert abs(local["recall"][10] - over_http["recall"][10]) <= 0.005
    same = (local.frame["ndcg@10"] - over_http.frame["ndcg@10"]).abs() <= 1e-6
    assert same.mean() >= 0.95
    assert over_http["model_usage"][0]["route"] == f"{served}/embeddings"
    assert over_http["model_usage"][0]["requests"] >= 1 and over_http["model_usage"][0]["tokens"] > 0
