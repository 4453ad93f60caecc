"""Replies of embedding and rerank services for tests/llama_server.py's `Scripted` server.

`Scripted` answers whatever path it is asked with the next step of its script (or `respond(json)`);
these build the steps an /embeddings or /rerank route answers with, so the same loopback server
scripts every fault of the served routes (vectrixdb/served) as it scripts the chat writer's.

- `vector_of(text, dim)`: a fixed unit vector per text (a hash's random numbers), so a test can
  say which vector a text must get back.
- `embeddings(texts)` / `embed_reply(request)`: an OpenAI embeddings body for texts (the latter a
  `respond` for Scripted, answering each request from its own input).
- `ranking(scores)` / `rank_reply(request)`: a /rerank body (the latter scores each document by
  the words it shares with the query).
"""
from __future__ import annotations

import hashlib

import numpy as np

from tests.llama_server import Scripted

DIM = 8


def base_of(server: Scripted) -> str:
    """The scripted server's base URL (…/v1) for an embedding or rerank route."""
    return server.url.removesuffix("/chat/completions")


def vector_of(text: str, dim: int = DIM) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return (vec / np.linalg.norm(vec)).tolist()


def embeddings(texts: list[str], *, dim: int = DIM, tokens: int | None = 3, model: str = "scripted-embed") -> dict:
    """An OpenAI embeddings body for `texts` (`tokens` a text in usage; None: no usage at all)."""
    body: dict = {"object": "list", "model": model,
                  "data": [{"object": "embedding", "index": i, "embedding": vector_of(t, dim)} for i, t in enumerate(texts)]}
    if tokens is not None:
        body["usage"] = {"prompt_tokens": tokens * len(texts), "total_tokens": tokens * len(texts)}
    return body


def embed_reply(request: dict, *, dim: int = DIM) -> tuple[int, dict, dict]:
    """A `respond` for Scripted: the embeddings of the request's own input."""
    texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
    return 200, embeddings(texts, dim=dim), {}


def ranking(scores: list[float], *, tokens: int = 5) -> dict:
    """A /rerank body giving `scores[i]` to document i, best first (as the services order them)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return {"model": "scripted-rerank", "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            "results": [{"index": i, "relevance_score": scores[i]} for i in order]}


def overlap(query: str, text: str) -> float:
    return float(len(set(query.lower().split()) & set(text.lower().split())))


def rank_reply(request: dict) -> tuple[int, dict, dict]:
    """A `respond` for Scripted: each document scored by the words it shares with the query."""
    return 200, ranking([overlap(request["query"], d) for d in request["documents"]]), {}
