"""Models served over HTTP that are not chat models: embedding routes and rerank routes.

    wire.py       what both share: the model string (`http://host:8080/v1#model`, `azure:endpoint#deployment`),
                  chat.routes' route for it, and one request sent by ChatWriter's retry and refusal rules
    embedding.py  EmbeddingRoute: /v1/embeddings (OpenAI, Ollama, vLLM, TEI, llama.cpp) and Azure OpenAI
                  deployments, an Embedder behind the persistent embedding cache
    rerank.py     RerankRoute: the /rerank route (Cohere, Jina, vLLM, llama.cpp), a (query, texts) -> scores
                  function for rerank=

Why a package of its own: the two routes share one request rule and one model-string form, and both
sit between chat/ (the rules they reuse) and the layers that take them (embedding.get_embedder,
search.get_reranker). The embedding cache is in embedding_cache.py, below both, so that
embedding.get_embedder can build an EmbeddingRoute from a model string without an import circle.

Both are in vectrixdb/registry.py under names: the embedders "openai" and "azure-openai", the
reranker "rerank-route" (registered at the bottom of their modules). They are not the registry's
"routes" kind, which holds chat model routes (chat/routes.py); these reuse two of those.

`spending(target, search)` lets a report record what the served models it used spent during its run.
"""
from __future__ import annotations

from typing import Any, Callable

from vectrixdb.served.embedding import EmbeddingRoute
from vectrixdb.served.rerank import RerankRoute
from vectrixdb.served.wire import is_served

__all__ = ["EmbeddingRoute", "RerankRoute", "is_served", "spending"]


def spending(target: Any, search: dict) -> Callable[[], list[dict]]:
    """A function that gives what each served model a run uses (the target's embedding route for the
    space searched, a rerank route in `search`) has spent since this call: one dict per route with
    its role, route, model, requests, tokens and cost (None without a price); [] when none is served."""
    parts: list[tuple[str, Any]] = []
    embedder = getattr(target, "embedder", None)
    if callable(embedder) and search.get("mode") != "keyword":
        try:
            got = embedder(search.get("vectors") or "default")
        except Exception:  # noqa: BLE001 - an unknown space is the search's error to give, with its message
            got = None
        if isinstance(got, EmbeddingRoute):
            parts.append(("embedding", got))
    rerank = search.get("rerank")
    if isinstance(rerank, str) and is_served(rerank):
        rerank = RerankRoute.named(rerank)
    if isinstance(rerank, RerankRoute):
        parts.append(("rerank", rerank))
    before = [part.totals() for _, part in parts]

    def spent() -> list[dict]:
        out = []
        for (role, part), was in zip(parts, before):
            now = part.totals()
            cost = None if now["cost"] is None else round(now["cost"] - (was["cost"] or 0.0), 12)
            out.append({"role": role, "route": now["route"], "model": now["model"],
                        "requests": now["requests"] - was["requests"], "tokens": now["tokens"] - was["tokens"],
                        "unmetered": now["unmetered"] - was["unmetered"], "cost": cost})
        return out

    return spent
