"""Framework retrievers evaluated as they are (evaluation/retrieval/adapters.py): a LangChain retriever,
a LlamaIndex retriever and a Haystack pipeline and component, each the real library's objects over its
in-memory store, holding the first 12 pages of uber_2021.pdf as vectrixdb chunked and embedded them
(the documents' vectors are the collection's own; the query embedder is the collection's model behind
the framework's embedder interface; nothing reaches a network). Each must rank as vectrixdb's dense
mode does and give its figures exactly. Then plain functions, result dicts and the refusals."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests.test_stores import FIGURES
from vectrixdb.errors import BadType

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


def ranks_as_dense(uber, dense, target) -> None:
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.golden.labels import as_result
    from vectrixdb.evaluation.retrieval.adapters import search_of

    db, golden, _ = uber
    search = search_of(target)
    for q in questions_of(str(golden), None):
        ours = [h.chunk_id for h in db.search(q.question, 20, mode="dense")]
        got = [as_result(x, i + 1) for i, x in enumerate(search(q.question, 20))]
        assert [r.chunk_id for r in got][:20] == ours, q.question
    report = retrieval_report(target, golden, by="page")
    assert {f: report[f] for f in FIGURES} == {f: dense[f] for f in FIGURES}
    assert report["recall"][10] > 0 and not [w for w in report["warnings"] if "page" in w]


def query_vector(db, query: str) -> list[float]:
    return np.asarray(db.embedder().encode([query])[0], dtype=float).tolist()


# -- LangChain -----------------------------------------------------------------------------------------

def test_langchain_retriever_scores_as_dense_mode(uber, dense):
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    db, _, records = uber
    vectors = {r["text"]: np.asarray(r["vector"], dtype=float).tolist() for r in records}

    class Collections(Embeddings):  # the documents' vectors are the collection's; a query is embedded by its model
        def embed_documents(self, texts):
            return [vectors[t] for t in texts]

        def embed_query(self, text):
            return query_vector(db, text)

    store = InMemoryVectorStore(Collections())
    store.add_documents([Document(r["text"], metadata={"source": r["source"], "pages": r["pages"]}, id=r["id"])
                         for r in records])
    ranks_as_dense(uber, dense, store.as_retriever(search_kwargs={"k": 100}))


def test_langchain_pages_as_pypdfloader_writes_them():
    """PyPDFLoader writes a 0-based `page` and the page's label: the label when it is a number, else page + 1."""
    from langchain_core.documents import Document

    from vectrixdb.evaluation.golden.labels import as_result

    def read(**meta):
        return as_result(Document("text", metadata={"source": "uber_2021.pdf", **meta}), 1)

    assert read(page=6, page_label="7").pages == (7,)
    assert read(page=2, page_label="iii").pages == (3,)
    assert read(page=0).pages == (1,)
    missing = read(section="Risk factors")
    assert missing.pages == () and missing.unread.startswith("langchain: no page in the metadata")
    with pytest.raises(BadType, match=r"LangChain Document result names no document: its metadata holds \['page'\]"):
        as_result(Document("text", metadata={"page": 1}), 1)


# -- LlamaIndex ----------------------------------------------------------------------------------------

def test_llamaindex_retriever_scores_as_dense_mode(uber, dense):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.schema import TextNode

    db, _, records = uber

    class Collections(BaseEmbedding):
        def _get_query_embedding(self, query):
            return query_vector(db, query)

        async def _aget_query_embedding(self, query):
            return query_vector(db, query)

        def _get_text_embedding(self, text):
            raise AssertionError("every node comes with its vector")

    nodes = [TextNode(id_=r["id"], text=r["text"], metadata={"doc_id": r["source"], "pages": r["pages"]},
                      embedding=np.asarray(r["vector"], dtype=float).tolist()) for r in records]
    index = VectorStoreIndex(nodes, embed_model=Collections())
    ranks_as_dense(uber, dense, index.as_retriever(similarity_top_k=100))


# -- Haystack ------------------------------------------------------------------------------------------

def haystack_store(records):
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents([Document(id=r["id"], content=r["text"], meta={"source": r["source"], "pages": r["pages"]},
                                    embedding=np.asarray(r["vector"], dtype=float).tolist()) for r in records])
    return store


def test_haystack_pipeline_scores_as_dense_mode(uber, dense):
    from haystack import Pipeline, component
    from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever

    db, _, records = uber

    @component
    class QueryEmbedder:  # the collection's model as a Haystack text embedder
        @component.output_types(embedding=list[float])
        def run(self, text: str):
            return {"embedding": query_vector(db, text)}

    pipeline = Pipeline()
    pipeline.add_component("embedder", QueryEmbedder())
    pipeline.add_component("retriever", InMemoryEmbeddingRetriever(haystack_store(records), top_k=100))
    pipeline.connect("embedder.embedding", "retriever.query_embedding")
    ranks_as_dense(uber, dense, pipeline)


def test_haystack_retriever_component_and_what_is_refused(uber):
    from haystack import Pipeline
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever

    from vectrixdb.evaluation import retrieval_report

    _, golden, records = uber
    store = haystack_store(records)
    report = retrieval_report(InMemoryBM25Retriever(store, top_k=20), golden, by="page")
    assert report["recall"][10] > 0 and report["levels"]["page"] is not None
    two = Pipeline()
    two.add_component("a", InMemoryBM25Retriever(store))
    two.add_component("b", InMemoryBM25Retriever(store))
    with pytest.raises(BadType, match=r"found 2 component\(s\) with a `documents` output \(\['a', 'b'\]\); expected "
                                      "exactly one"):
        retrieval_report(two, golden, by="page")


# -- plain functions, dicts, and anything else ---------------------------------------------------------

def test_functions_take_query_or_query_and_k(uber, dense):
    db, _, _ = uber
    asked: list[int] = []

    def with_k(query, k):
        asked.append(k)
        return db.search(query, k, mode="dense")

    ranks_as_dense(uber, dense, with_k)
    assert asked and set(asked) == {20, 100}  # 20: ranks_as_dense's own look; 100: the report's depth
    ranks_as_dense(uber, dense, lambda query: db.search(query, 100, mode="dense"))
    as_dicts = lambda query: [{"chunk_id": h.chunk_id, "doc_id": h.doc_id, "pages": list(h.pages), "text": h.text,  # noqa: E731
                               "score": h.score} for h in db.search(query, 100, mode="dense")]
    ranks_as_dense(uber, dense, as_dicts)


def test_results_that_cannot_be_read_are_refused_before_scoring(uber):
    from vectrixdb.evaluation import retrieval_report

    _, golden, _ = uber
    with pytest.raises(BadType, match=r"a result dict names no document: it holds the keys \['file', 'page'\]; "
                                      "a result dict needs one of doc_id, id, document, chunk_id"):
        retrieval_report(lambda query: [{"file": "uber_2021.pdf", "page": 3}], golden, by="page")
    with pytest.raises(BadType, match=r"cannot read a retrieval result from float \(0.5\): expected an id string, "
                                      "a dict"):
        retrieval_report(lambda query: [0.5], golden, by="page")
    with pytest.raises(BadType, match="target must be a Vectrix or a callable"):
        retrieval_report(object(), golden, by="page")
