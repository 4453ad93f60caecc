"""Vector databases evaluated in place: a Chroma collection, a LanceDB table, a Qdrant collection or a
PostgreSQL table is searched where it lives (nothing is copied into vectrixdb) and each record it
returns is read as a Result that the report can judge.

A team builds one object around the store it already has and hands it to retrieval_report:

    ChromaRetriever(collection, embed=None)                    the collection's own embedding function,
                                                               or embed= (text -> vector, or an .encode)
    LanceRetriever(table, embed=..., vector_column="vector")
    QdrantRetriever(client, "chunks", embed=..., vector_name=None)
    PostgresRetriever(connection, "chunks", embed=..., vector_column="embedding")   (embed=None: full-text)

Every one of them reads the same fields, named by keyword (the README's table lists them):

    doc_field="source"   the record's field holding the document id the golden file names; a record
                         without it is refused (BadInput naming the record, its fields and doc_field)
    page_field="page"    the field holding the page: a number, a digit string, a list of them or
                         "3,4"; None when the store keeps no page
    page_base=1          1 when the first page is written 1; 0 when it is written 0 (LangChain's loaders)
    chunk_field          the field holding the chunk id; None reads the store's own record id
                         (Chroma and Qdrant ids); LanceDB and PostgreSQL default to a column "id"
    text_field="text"    the field holding the chunk's text (Chroma keeps it as the record's document)

A record whose page cannot be read (no such field, an empty or non-numeric value, a page before
the first) gives a Result with no pages and the reason in `Result.unread`; retrieval_report then
leaves page figures undefined with that reason rather than scoring the record as a miss.
Scores are the store's own, higher is better: Qdrant's score, the negated distance of Chroma and
LanceDB, the inner product (dense) or ts_rank (full-text) PostgreSQL computes.
Each class is the "adapters" member of its name (chroma, lancedb, qdrant, postgres); its stand-in
is the class around a small object answering as the store's client does, without the library.
A saved run records what it searched (describe(), report.meta["system"]): the store, the collection
or table by the store's own name for it, and the embedding model of the queries: embed='s name, or,
when the store embeds them itself (Chroma with embed=None), the embedding function's name as Chroma
reports it; PostgreSQL with embed=None records its full-text search instead.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from types import SimpleNamespace
from typing import Any, Callable, NamedTuple

import numpy as np

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.evaluation.golden.labels import Result
from vectrixdb.evaluation.retrieval.adapters import Adapter, model_name
from vectrixdb.extras import needs


class Row(NamedTuple):
    """One record as a store returned it: its own id, its fields, its text and score."""
    record_id: Any
    fields: dict
    text: str | None
    score: float | None


def read_pages(value: Any, field: str | None, base: int) -> tuple[tuple[int, ...], str]:
    """(pages, "") from a page field's value, or ((), why) when no page can be read from it."""
    if field is None:
        return (), "no page field is named (page_field=None)"
    if value is None or value == "" or value == []:
        return (), f"the record has no page field {field!r}"
    values = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    try:
        pages = tuple(int(str(v).strip()) - base + 1 for v in values if not isinstance(v, bool))
    except ValueError:
        return (), f"the page field {field!r} holds {value!r}, not page numbers"
    if len(pages) != len(values) or min(pages) < 1:
        return (), f"the page field {field!r} holds {value!r}, not page numbers from {base} (page_base={base})"
    return pages, ""


class StoreRetriever(ABC):
    """What the four stores share: the field names (the module docstring) and reading a Row as a Result."""
    store = "store"

    def __init__(self, *, embed: Any, doc_field: str, page_field: str | None, page_base: int,
                 chunk_field: str | None, text_field: str):
        if page_base not in (0, 1):
            raise BadInput(f"page_base is 1 (the first page is written 1) or 0 (written 0), not {page_base!r}")
        self.embed, self.doc_field, self.page_field, self.page_base = embed, doc_field, page_field, page_base
        self.chunk_field, self.text_field = chunk_field, text_field

    def __repr__(self) -> str:
        return f"{type(self).__name__}(doc_field={self.doc_field!r}, page_field={self.page_field!r})"

    def search(self, query: str, n: int) -> list[Result]:
        return [self.result(row, rank) for rank, row in enumerate(self.rows(query, n), start=1)]

    def describe(self) -> dict[str, Any]:
        """What a saved run records of this store (the module docstring): store, collection or table,
        embedding model."""
        return {"store": self.store, **self.searched(), "embedding_model": model_name(self.embed) or self.own_model()}

    def searched(self) -> dict[str, Any]:
        """{"collection": name} or {"table": name}, as the store names what is searched."""
        return {}

    def own_model(self) -> str | None:
        """The model the store embeds queries with itself, when embed= is None."""
        return None

    @abstractmethod
    def rows(self, query: str, n: int) -> list[Row]:
        """The store's best `n` records for `query`, best first."""

    def vector(self, query: str) -> np.ndarray:
        """The query's vector: embed.encode([query])[0] for an embedder, else embed(query)."""
        encode: Callable | None = getattr(self.embed, "encode", None)
        got = encode([query])[0] if encode is not None else self.embed(query)
        return np.asarray(got, dtype=np.float32).reshape(-1)

    def result(self, row: Row, rank: int) -> Result:
        fields = row.fields or {}
        doc = fields.get(self.doc_field)
        if doc is None or doc == "":
            raise BadInput(f"{self.store}: record {row.record_id!r} has no document id field {self.doc_field!r} "
                           f"(its fields: {sorted(fields)}); name the field holding it with doc_field=")
        chunk = fields.get(self.chunk_field) if self.chunk_field else row.record_id
        pages, why = read_pages(fields.get(self.page_field) if self.page_field else None, self.page_field,
                                self.page_base)
        return Result(str(chunk if chunk is not None else f"{doc}@{rank}"), str(doc), pages, row.text or "",
                      None if row.score is None else float(row.score), f"{self.store}: {why}" if why else "")


class ChromaRetriever(StoreRetriever):
    """A Chroma collection: `collection.query` with the query's vector (embed=) or its text (embed=None:
    the collection's own embedding function); ids are Chroma's, text its documents, score -distance."""
    store = "chroma"

    def __init__(self, collection: Any, *, embed: Any = None, doc_field: str = "source", page_field: str | None = "page",
                 page_base: int = 1, chunk_field: str | None = None, where: dict | None = None):
        super().__init__(embed=embed, doc_field=doc_field, page_field=page_field, page_base=page_base,
                         chunk_field=chunk_field, text_field="documents")
        self.collection, self.where = collection, where

    def searched(self) -> dict[str, Any]:
        return {"collection": _str(getattr(self.collection, "name", None))}

    def own_model(self) -> str | None:
        function = getattr(self.collection, "_embedding_function", None)  # what Chroma embeds query_texts with
        name = getattr(function, "name", None)
        try:
            return str(name()) if callable(name) else model_name(function)
        except Exception:  # noqa: BLE001 - an embedding function that cannot say its name
            return model_name(function)

    def rows(self, query: str, n: int) -> list[Row]:
        asked: dict[str, Any] = ({"query_embeddings": [self.vector(query)]} if self.embed is not None
                                 else {"query_texts": [query]})
        if self.where:
            asked["where"] = self.where
        got = self.collection.query(**asked, n_results=n, include=["metadatas", "documents", "distances"])
        return [Row(i, m or {}, d, -float(s)) for i, m, d, s in
                zip(got["ids"][0], got["metadatas"][0], got["documents"][0], got["distances"][0])]


class LanceRetriever(StoreRetriever):
    """A LanceDB table: a nearest-neighbour search on `vector_column` by `metric` (cosine by default);
    exact=True bypasses any vector index (a flat scan); score -_distance."""
    store = "lancedb"

    def __init__(self, table: Any, *, embed: Any, vector_column: str = "vector", metric: str = "cosine",
                 exact: bool = True, doc_field: str = "source", page_field: str | None = "page", page_base: int = 1,
                 chunk_field: str | None = "id", text_field: str = "text"):
        super().__init__(embed=embed, doc_field=doc_field, page_field=page_field, page_base=page_base,
                         chunk_field=chunk_field, text_field=text_field)
        self.table, self.vector_column, self.metric, self.exact = table, vector_column, metric, exact

    def searched(self) -> dict[str, Any]:
        return {"table": _str(getattr(self.table, "name", None))}

    def rows(self, query: str, n: int) -> list[Row]:
        asked = self.table.search(self.vector(query), vector_column_name=self.vector_column)
        asked = asked.distance_type(self.metric).limit(n)
        if self.exact:
            asked = asked.bypass_vector_index()
        out = []
        for i, got in enumerate(asked.to_list()):
            fields = {k: v for k, v in got.items() if k != self.vector_column}
            out.append(Row(i, fields, fields.get(self.text_field), -float(fields.get("_distance", 0.0))))
        return out


class QdrantRetriever(StoreRetriever):
    """A Qdrant collection: `client.query_points` with the query's vector (`vector_name` for a named
    vector), exact=True asking for exact search; fields are the point's payload, score Qdrant's."""
    store = "qdrant"

    def __init__(self, client: Any, collection_name: str, *, embed: Any, vector_name: str | None = None,
                 exact: bool = True, doc_field: str = "source", page_field: str | None = "page", page_base: int = 1,
                 chunk_field: str | None = None, text_field: str = "text"):
        super().__init__(embed=embed, doc_field=doc_field, page_field=page_field, page_base=page_base,
                         chunk_field=chunk_field, text_field=text_field)
        self.client, self.collection_name, self.vector_name, self.exact = client, collection_name, vector_name, exact

    def searched(self) -> dict[str, Any]:
        return {"collection": self.collection_name, **({"vector_name": self.vector_name} if self.vector_name else {})}

    def rows(self, query: str, n: int) -> list[Row]:
        options: dict[str, Any] = {}
        if self.exact:
            with needs("qdrant"):
                from qdrant_client import models

            options["search_params"] = models.SearchParams(exact=True)
        got = self.client.query_points(self.collection_name, query=self.vector(query).tolist(), using=self.vector_name,
                                       limit=n, with_payload=True, **options)
        return [Row(p.id, p.payload or {}, (p.payload or {}).get(self.text_field), p.score) for p in got.points]


def quoted(name: str) -> str:
    """A table or column name as an SQL identifier ("schema.table" is two)."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in name.split("."))


class PostgresRetriever(StoreRetriever):
    """A PostgreSQL table through a DB-API connection whose execute(sql, params) returns a cursor (psycopg 3).
    With embed=: exact dense search, the inner product of the query's vector with `vector_column` (an
    array of numbers), computed by the server over every row. With embed=None: full-text search,
    ts_rank of the text against the question's words joined by OR (`language`'s stemming)."""
    store = "postgres"

    def __init__(self, connection: Any, table: str, *, embed: Any = None, vector_column: str = "embedding",
                 language: str = "english", doc_field: str = "source", page_field: str | None = "page",
                 page_base: int = 1, chunk_field: str = "id", text_field: str = "text"):
        super().__init__(embed=embed, doc_field=doc_field, page_field=page_field, page_base=page_base,
                         chunk_field=chunk_field, text_field=text_field)
        self.connection, self.table, self.vector_column, self.language = connection, table, vector_column, language

    def searched(self) -> dict[str, Any]:
        return {"table": self.table}

    def own_model(self) -> str | None:
        return f"none: full-text search ({self.language})"

    def rows(self, query: str, n: int) -> list[Row]:
        names = [self.chunk_field or "id", self.doc_field, self.text_field] + ([self.page_field] if self.page_field else [])
        columns = ", ".join(quoted(c) for c in names)
        if self.embed is not None:
            sql = (f"SELECT {columns}, (SELECT sum(a * b) FROM unnest({quoted(self.vector_column)}::float8[], "
                   f"%s::float8[]) AS u(a, b)) AS score FROM {quoted(self.table)} ORDER BY score DESC LIMIT %s")
            params: tuple = (self.vector(query).astype(float).tolist(), n)
        else:
            text = f"to_tsvector(%s::regconfig, {quoted(self.text_field)})"
            sql = (f"SELECT {columns}, ts_rank({text}, w.q) AS score FROM {quoted(self.table)}, "
                   "(SELECT replace(plainto_tsquery(%s::regconfig, %s)::text, '&', '|')::tsquery AS q) AS w "
                   f"WHERE {text} @@ w.q ORDER BY score DESC LIMIT %s")
            params = (self.language, self.language, query, self.language, n)
        out = []
        for got in self.connection.execute(sql, params).fetchall():
            fields = dict(zip(names, got[:-1]))
            out.append(Row(fields[names[0]], fields, fields[self.text_field], got[-1]))
        return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- the adapters, each with a stand-in answering as the store's client does ------------------------

def _calls(kind: type[StoreRetriever]) -> Callable[[Any], Any]:
    return lambda target: target.search if isinstance(target, kind) else None


def _meta(r: Result) -> dict:
    return {"source": r.doc_id, "page": ",".join(str(p) for p in r.pages), "chunk": r.chunk_id}


def _chroma_stand_in(results: list[Result]) -> Any:
    got = {"ids": [[r.chunk_id for r in results]], "metadatas": [[_meta(r) for r in results]],
           "documents": [[r.text for r in results]], "distances": [[-(r.score or 0.0) for r in results]]}
    return ChromaRetriever(SimpleNamespace(query=lambda **asked: got), embed=lambda q: [1.0])


def _lance_stand_in(results: list[Result]) -> Any:
    rows = [{"id": r.chunk_id, "text": r.text, "vector": [1.0], "_distance": -(r.score or 0.0), **_meta(r)}
            for r in results]
    asked = SimpleNamespace(to_list=lambda: [dict(row) for row in rows])
    asked.distance_type = asked.limit = lambda *a: asked
    asked.bypass_vector_index = lambda: asked
    return LanceRetriever(SimpleNamespace(search=lambda *a, **k: asked), embed=lambda q: [1.0])


def _qdrant_stand_in(results: list[Result]) -> Any:
    points = [SimpleNamespace(id=r.chunk_id, score=r.score, payload={"text": r.text, **_meta(r)}) for r in results]
    client = SimpleNamespace(query_points=lambda *a, **k: SimpleNamespace(points=points))
    return QdrantRetriever(client, "chunks", embed=lambda q: [1.0], exact=False)


def _postgres_stand_in(results: list[Result]) -> Any:
    rows = [(r.chunk_id, r.doc_id, r.text, _meta(r)["page"], r.score) for r in results]
    return PostgresRetriever(SimpleNamespace(execute=lambda sql, params: SimpleNamespace(fetchall=lambda: rows)),
                             "chunks", embed=lambda q: [1.0])


def _describe(target: Any) -> dict:
    return target.describe()


registry.register("adapters", "chroma", Adapter(calls=_calls(ChromaRetriever), stand_in=_chroma_stand_in,
                                                describes=_describe))
registry.register("adapters", "lancedb", Adapter(calls=_calls(LanceRetriever), stand_in=_lance_stand_in,
                                                 describes=_describe))
registry.register("adapters", "qdrant", Adapter(calls=_calls(QdrantRetriever), stand_in=_qdrant_stand_in,
                                                describes=_describe))
registry.register("adapters", "postgres", Adapter(calls=_calls(PostgresRetriever), stand_in=_postgres_stand_in,
                                                  describes=_describe))
