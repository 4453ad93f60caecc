"""Vector databases evaluated in place (evaluation/retrieval/stores.py), each against the real library
or server: the first 12 pages of uber_2021.pdf read and chunked by vectrixdb, its chunks and their
vectors (the collection's own, read from its catalog) loaded into Chroma, LanceDB, Qdrant (local mode)
and PostgreSQL 15 (a server this file starts with initdb on a unix socket). Each store, searched
exactly, must give the same rankings as vectrixdb's dense mode and so the same figures, compared
exactly (the rankings are equal; float sums may differ in the last bits, which no figure reads)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import PDFS, ROOT, require
from vectrixdb.errors import BadInput

FIGURES = ("recall", "precision", "f1", "ndcg", "hit_rate", "mrr", "levels")
PG_BIN = Path("/usr/lib/postgresql/15/bin")


def uber_cut(folder: Path):
    """(db, golden, records): the 12-page cut in a collection, the golden rows those pages answer, and
    each chunk as a store keeps it (id, source, pages, text, vector)."""
    from pypdf import PdfReader, PdfWriter

    from vectrixdb import Vectrix

    writer = PdfWriter()
    for page in PdfReader(str(require(PDFS / "uber_2021.pdf"))).pages[:12]:
        writer.add_page(page)
    with open(folder / "uber_2021.pdf", "wb") as fh:
        writer.write(fh)
    golden = folder / "uber_first_12_pages.jsonl"
    rows = [line for line in (ROOT / "data" / "golden" / "uber_2021.jsonl").read_text().splitlines()
            if "#page=" in line and all(int(p) <= 12 for p in re.findall(r"#page=(\d+)", line))]
    golden.write_text("\n".join(rows) + "\n")
    db = Vectrix("uber12", path=folder / "db")
    db.add_documents([str(folder / "uber_2021.pdf")], progress=False)
    keys, vectors = db.catalog.vectors("default")
    chunks = db.catalog.chunk_rows(keys)
    records = [{"id": chunks[int(k)]["chunk_id"], "source": chunks[int(k)]["doc_id"],
                "pages": list(chunks[int(k)]["pages"]), "text": chunks[int(k)]["text"], "vector": v}
               for k, v in zip(keys, vectors)]
    assert len(records) > 20 and all(r["pages"] for r in records)
    return db, golden, records


def dense_report(uber):
    """vectrixdb's own dense mode on the cut: the figures every store and framework must give."""
    from vectrixdb.evaluation import retrieval_report

    db, golden, _ = uber
    return retrieval_report(db, golden, by="page", mode="dense")


def embed_of(db):
    return lambda query: db.embedder().encode([query])[0]


def same_as_dense(uber, dense, retriever) -> None:
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.golden.files import questions_of

    db, golden, _ = uber
    for q in questions_of(str(golden), None):
        ours = [h.chunk_id for h in db.search(q.question, 20, mode="dense")]
        assert [r.chunk_id for r in retriever.search(q.question, 20)] == ours, q.question
    got = retrieval_report(retriever, golden, by="page")
    assert {f: got[f] for f in FIGURES} == {f: dense[f] for f in FIGURES}
    assert got["recall"][10] > 0 and not [w for w in got["warnings"] if "page" in w]


# -- Chroma ------------------------------------------------------------------------------------------

def chroma_collection(records, name, *, pages=True, space="cosine", embedding_function=None, client=None):
    """The records in a Chroma collection `name` of `client` (an in-memory one when None)."""
    import chromadb

    client = client if client is not None else chromadb.EphemeralClient()
    collection = client.create_collection(name, configuration={"hnsw": {"space": space, "ef_search": 500,
                                                                         "ef_construction": 500}},
                                          embedding_function=embedding_function)
    collection.add(ids=[r["id"] for r in records], embeddings=[r["vector"] for r in records],
                   documents=[r["text"] for r in records],
                   metadatas=[{"source": r["source"], **({"page": ",".join(map(str, r["pages"]))} if pages else {})}
                              for r in records])
    return collection


def test_chroma_scores_as_dense_mode(uber, dense):
    from vectrixdb.evaluation.retrieval.stores import ChromaRetriever

    db, _, records = uber
    same_as_dense(uber, dense, ChromaRetriever(chroma_collection(records, "uber"), embed=embed_of(db)))


@pytest.mark.filterwarnings("ignore:The class Ours does not implement get_config")  # a persisted one would need it
def test_chroma_with_its_own_embedding_function_scores_as_dense_mode(uber, dense):
    """embed=None: Chroma embeds the query with the collection's embedding function (here the
    collection's model behind Chroma's EmbeddingFunction interface)."""
    from chromadb import EmbeddingFunction

    from vectrixdb.evaluation.retrieval.stores import ChromaRetriever

    db, _, records = uber

    class Ours(EmbeddingFunction):
        def __init__(self):
            pass

        @staticmethod
        def name():
            return "vectrixdb-collection-model"

        def __call__(self, input):  # Chroma's name for it
            return [np.asarray(v, np.float32) for v in db.embedder().encode(list(input))]

    retriever = ChromaRetriever(chroma_collection(records, "own", embedding_function=Ours()))
    same_as_dense(uber, dense, retriever)
    # a saved run records the model as Chroma reports it: its embedding function's name
    assert retriever.describe() == {"store": "chroma", "collection": "own", "embedding_model": "vectrixdb-collection-model"}


def test_chroma_without_pages_leaves_page_figures_undefined(uber):
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.retrieval.stores import ChromaRetriever

    db, golden, records = uber
    got = retrieval_report(ChromaRetriever(chroma_collection(records, "nopages", pages=False), embed=embed_of(db)),
                           golden, by="page")
    assert got["recall"] is None and got["ndcg"] is None and got["mrr"] is None
    assert "chroma: the record has no page field 'page'" in got["reason"] and "undefined, not 0" in got["reason"]
    by_doc = retrieval_report(ChromaRetriever(chroma_collection(records, "nopages2", pages=False),
                                              embed=embed_of(db)), golden, by="doc")
    assert by_doc["recall"][1] == 1.0 and by_doc["levels"]["page"] is None
    assert any("could not be read" in w for w in by_doc["warnings"])


def test_chroma_refuses_a_record_without_its_document_field(uber):
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.retrieval.stores import ChromaRetriever

    db, golden, records = uber
    retriever = ChromaRetriever(chroma_collection(records, "nodoc"), embed=embed_of(db), doc_field="file")
    with pytest.raises(BadInput, match=r"no document id field 'file' \(its fields: \['page', 'source'\]\)"):
        retrieval_report(retriever, golden, by="page")


# -- LanceDB -----------------------------------------------------------------------------------------

def test_lancedb_scores_as_dense_mode(uber, dense, tmp_path):
    import lancedb

    from vectrixdb.evaluation.retrieval.stores import LanceRetriever

    db, _, records = uber
    table = lancedb.connect(str(tmp_path / "lance")).create_table(
        "chunks", [{**r, "vector": np.asarray(r["vector"], np.float32).tolist(), "page": r["pages"]} for r in records])
    same_as_dense(uber, dense, LanceRetriever(table, embed=db.embedder()))


# -- Qdrant (qdrant-client's local mode) -------------------------------------------------------------

def qdrant_collection(client, records, name: str = "chunks"):
    """`client` with a cosine collection `name` of the records (payload: chunk_id, source, page, text)."""
    from qdrant_client import models

    client.create_collection(name, vectors_config=models.VectorParams(size=len(records[0]["vector"]),
                                                                      distance=models.Distance.COSINE))
    client.upsert(name, [models.PointStruct(id=i, vector=np.asarray(r["vector"]).tolist(),
                                            payload={"chunk_id": r["id"], "source": r["source"],
                                                     "page": r["pages"], "text": r["text"]})
                         for i, r in enumerate(records)])
    return client


@pytest.mark.filterwarnings("ignore:Local mode performs exact")  # local mode is always exact; exact=True is sent all the same
def test_qdrant_scores_as_dense_mode(uber, dense):
    from qdrant_client import QdrantClient

    from vectrixdb.evaluation.retrieval.stores import QdrantRetriever

    db, _, records = uber
    client = qdrant_collection(QdrantClient(":memory:"), records)
    same_as_dense(uber, dense, QdrantRetriever(client, "chunks", embed=embed_of(db), chunk_field="chunk_id"))


# -- PostgreSQL 15 (no pgvector: Debian 12 packages none; vectors as float8[], full-text search) -------

@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL 15 server of its own: initdb in a temporary folder, listening on a unix socket
    there only; stopped and removed at the end. Run as the `postgres` user where the tests run as root
    (initdb refuses root)."""
    import psycopg

    if not (PG_BIN / "initdb").exists():
        pytest.fail(f"PostgreSQL 15's server is missing ({PG_BIN}/initdb): apt-get install postgresql-15 "
                    "(`make test` installs it)")
    folder = Path(tempfile.mkdtemp(prefix="vx-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    subprocess.run([*as_user, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "vx", "--no-sync"],
                   check=True, capture_output=True)
    port = "5439"
    subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-w", "-l", str(folder / "log"), "-o",
                    f"-k {folder} -c listen_addresses='' -p {port} -c fsync=off", "start"], check=True,
                   capture_output=True)
    try:
        connection = psycopg.connect(host=str(folder), port=port, user="vx", dbname="postgres", autocommit=True)
        yield connection
        connection.close()
    finally:
        subprocess.run([*as_user, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        time.sleep(0.1)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def chunks_table(uber, postgres):
    _, _, records = uber
    postgres.execute("CREATE TABLE chunks (id text PRIMARY KEY, source text, page int[], text text, embedding float8[])")
    with postgres.cursor() as cursor:
        cursor.executemany("INSERT INTO chunks VALUES (%s, %s, %s, %s, %s)",
                           [(r["id"], r["source"], r["pages"], r["text"], np.asarray(r["vector"], float).tolist())
                            for r in records])
    return "chunks"


def test_postgres_dense_scores_as_dense_mode(uber, dense, postgres, chunks_table):
    from vectrixdb.evaluation.retrieval.stores import PostgresRetriever

    db, _, _ = uber
    same_as_dense(uber, dense, PostgresRetriever(postgres, chunks_table, embed=embed_of(db)))


def test_postgres_full_text_search_reads_ids_and_pages(uber, postgres, chunks_table):
    from vectrixdb.evaluation import retrieval_report
    from vectrixdb.evaluation.retrieval.stores import PostgresRetriever

    _, golden, records = uber
    retriever = PostgresRetriever(postgres, chunks_table)
    found = retriever.search("How many employees did Uber have at the end of 2021?", 10)
    pages = {r["id"]: tuple(r["pages"]) for r in records}
    assert found and all(r.pages == pages[r.chunk_id] and r.doc_id == "uber_2021.pdf" for r in found)
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    got = retrieval_report(retriever, golden, by="page", name="postgres full text")
    assert got["recall"][10] > 0 and got["levels"]["page"] is not None
    assert got.meta["name"] == "postgres full text" and got.meta["system"] == {
        "adapter": "postgres", "store": "postgres", "table": "chunks", "embedding_model": "none: full-text search (english)"}
