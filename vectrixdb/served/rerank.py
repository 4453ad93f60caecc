"""RerankRoute: a reranker served over the /rerank route that Cohere, Jina, vLLM and llama.cpp's server share.

    rerank = RerankRoute("http://127.0.0.1:8080/v1", model="bge-reranker-v2-m3")
    db.search("...", rerank=rerank)                       # or rerank="http://127.0.0.1:8080/v1#bge-reranker-v2-m3"
    answer_cutoff(db, questions, rerank=rerank, measure="relevance")

It is a function (query, texts) -> one relevance score per text, in the texts' order, so it goes
wherever `rerank=` is taken (search.get_reranker); its model string does too. A request sends
{"model", "query", "documents", "top_n"} (top_n: every document, so each gets a score) to the base
URL + /rerank (the full …/rerank address is taken too) and reads {"results": [{"index",
"relevance_score"}]} (a bare list of {"index", "score"}, as TEI answers, is read as well; TEI's own
request names the texts `texts`, so TEI is reached through its Jina-compatible route). The texts
go in batches of `batch_size`, up to `max_concurrency` requests at once, each by the rule of
served.wire (ChatWriter's retries and refusals); tokens come from the reply's usage when it gives
them, cost from `prices` only. A model string opened again takes its key from
VECTRIXDB_RERANKER_KEY (in VECTRIXDB_RERANKER_KEY_HEADER when set).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Sequence, cast

import numpy as np

from vectrixdb import registry
from vectrixdb.chat.config import DEFAULT_LIMITS, LimitConfig
from vectrixdb.chat.parallel import concurrently
from vectrixdb.errors import BadInput, Unsupported
from vectrixdb.served.wire import BadReply, Served, number, reply_json, served_model, tokens_of

CALL = "/rerank"
_NAMED: dict[tuple, "RerankRoute"] = {}  # one route per model string and key in a process (named())
_NAMED_LOCK = threading.Lock()


class RerankRoute(Served):
    """A reranker behind a /rerank route (module doc).

    url: the API's base URL (…/v1), the full …/rerank address, or a model string `base#model`;
    model: the model's name (None when the string holds it); key: a bearer token, or sent in
    `key_header`. prices: {model: {"prompt": $}} per million tokens. batch_size: texts per request
    (50, search's rerank depth). max_concurrency: requests at once (4). max_retries: tries again
    per request (4). limits: rpm, tpm, timeout, patience (chat's LimitConfig)."""

    def __init__(self, url: str, model: str | None = None, key: str | None = None, key_header: str | None = None,
                 *, prices: dict | None = None, batch_size: int = 50, max_concurrency: int = 4, max_retries: int = 4,
                 limits: LimitConfig = DEFAULT_LIMITS):
        where = self._locate(url, model, CALL)
        if where.kind != "openai":
            raise Unsupported(f"{where}: Azure OpenAI serves no rerank route; give the /rerank route's URL")
        self._connect(where, CALL, batch_size, limits=limits, max_concurrency=max_concurrency, max_retries=max_retries,
                      prices=prices, key=key, key_header=key_header, api_version=None, credential=None)
        self.scored = 0  # texts scored

    @classmethod
    def from_string(cls, text: str, **options: Any) -> "RerankRoute":
        """The route a model string names, its key from VECTRIXDB_RERANKER_KEY (and _KEY_HEADER)."""
        return cls(text, key=os.environ.get("VECTRIXDB_RERANKER_KEY") or None,
                   key_header=os.environ.get("VECTRIXDB_RERANKER_KEY_HEADER") or None, **options)

    @classmethod
    def named(cls, text: str) -> "RerankRoute":
        """One route per model string (and key) in a process, so a report reads what the searches spent."""
        key = (text, os.environ.get("VECTRIXDB_RERANKER_KEY"), os.environ.get("VECTRIXDB_RERANKER_KEY_HEADER"))
        with _NAMED_LOCK:
            if key not in _NAMED:
                _NAMED[key] = cls.from_string(text)
            return _NAMED[key]

    def __str__(self) -> str:  # what a report's search settings record: the model string, never a key
        return self.name

    def __repr__(self) -> str:
        return f"RerankRoute({self.route.name!r}, model={self.model!r}, auth={self.route.auth!r})"

    def __call__(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance score per text, in the texts' order (higher: more relevant)."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=float)
        batches = [texts[i: i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        parts = concurrently(lambda batch: self._score(query, batch), batches,
                             workers=self.service.limiter.max_concurrency)
        self.scored += len(texts)
        return np.concatenate(parts)

    def _score(self, query: str, texts: list[str]) -> np.ndarray:
        route = self.route
        body = {"model": self.model, "query": query, "documents": texts, "top_n": len(texts)}

        def call() -> str:
            return route.send(CALL.lstrip("/"), body)

        return self.service.send(call, lambda reply: read_ranking(reply, len(texts)),
                                 size=(len(query) * len(texts) + sum(len(t) for t in texts)) // 4 + 1,
                                 what=f"rerank {len(texts)} texts")

    def totals(self) -> dict:
        """What the route spent (served.wire.Service.totals) and the texts it scored."""
        return {**self.service.totals(), "texts": self.scored}


def read_ranking(text: str, count: int) -> tuple[np.ndarray, int | None, str | None]:
    """(a score per text in input order, tokens, model) from a rerank reply to `count` texts:
    {"results": [{"index", "relevance_score"}]}, or a bare list of {"index", "score"}. Every index
    must come once; BadReply saying what is wrong otherwise."""
    data = reply_json(text, "a ranking")
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise BadReply("the reply holds no `results` list")
    scores: list[float | None] = [None] * count
    for at, item in enumerate(items):
        index = item.get("index") if isinstance(item, dict) else None
        score = (item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise BadReply(f"results[{at}] names no document of the {count} sent (index {index!r})")
        if not number(score):
            raise BadReply(f"results[{at}] has no relevance_score that is a number ({score!r})")
        if scores[index] is not None:
            raise BadReply(f"document {index} is scored twice")
        scores[index] = float(cast(float, score))
    missing = [i for i, s in enumerate(scores) if s is None]
    if missing:
        raise BadReply(f"{len(missing)} of the {count} documents got no score (the first: {missing[0]})")
    return np.asarray(scores, dtype=float), tokens_of(data), served_model(data)


def rerank_route(model: str | None = None) -> RerankRoute:
    """The registry's "rerank-route" reranker: a /rerank route by its model string
    (`http://127.0.0.1:8080/v1#bge-reranker-v2-m3`; the string alone reaches it too)."""
    if not model:
        raise BadInput("the 'rerank-route' reranker needs its model string: the API's base URL, '#', the model, "
                       "e.g. http://127.0.0.1:8080/v1#bge-reranker-v2-m3")
    return RerankRoute.named(model)


registry.register("rerankers", "rerank-route", rerank_route)

__all__ = ["RerankRoute", "read_ranking"]
