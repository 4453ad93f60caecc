"""EmbeddingRoute: an embedding model served over HTTP, as a collection's model or a second vector space.

    EmbeddingRoute("http://127.0.0.1:8080/v1", model="nomic-embed-text")      # OpenAI, Ollama, vLLM, TEI, llama.cpp
    EmbeddingRoute("http://127.0.0.1:8080/v1#nomic-embed-text")               # the same, as one model string
    EmbeddingRoute.azure_openai("https://res.openai.azure.com", "my-embedding")  # a key, or the managed identity
    EmbeddingRoute.from_environment()                                          # what the settings name

Any of these is an Embedder: `Vectrix(name, model=...)`, `db.add_vectors("azure", ...)`, and the model
string wherever a model name is taken (`get_embedder`, the terminal's --model). The collection
records the model string and the dimension, never a key; opening it again builds the route from
that string with the key from the settings (ENVIRONMENT: VECTRIXDB_EMBEDDER_KEY, and for Azure
AZURE_OPENAI_KEY or, without one, the managed identity), so nothing is handed in again. A
dimension other than the one recorded is refused naming both.

The settings VECTRIXDB_EMBEDDER_URL and VECTRIXDB_EMBEDDER_MODEL (with VECTRIXDB_EMBEDDER_KEY and
VECTRIXDB_EMBEDDER_KEY_HEADER), or AZURE_OPENAI_EMBEDDING_DEPLOYMENT with AZURE_OPENAI_ENDPOINT, name
the default model (`environment_model`; embedding.default_model reads it after VECTRIXDB_DEFAULT_MODEL).

Every text is embedded once: vectors go into the embedding cache (embedding_cache.EmbeddingCache)
under the model string (route and model) and the text's SHA-256, a batch at a time as the replies
come, so a sweep, a comparison or an interrupted run never pays twice. The texts not cached go in
batches of `batch_size`, up to `max_concurrency` requests at once, each by the rule of served.wire
(ChatWriter's retries and refusals). Rows come back unit length (a service's vectors are normalised
here if it does not). `totals()` is what the route spent: requests, tokens from the replies' usage,
cost from `prices` only.
"""
from __future__ import annotations

import base64
import os
import threading
from typing import Any, Sequence

import numpy as np

from vectrixdb import registry
from vectrixdb.chat.config import DEFAULT_LIMITS, LimitConfig
from vectrixdb.chat.parallel import concurrently
from vectrixdb.chat.routes import AZURE_API_VERSION
from vectrixdb.embedding_cache import EmbeddingCache, text_hash
from vectrixdb.errors import BadInput
from vectrixdb.served.wire import (AZURE, Address, BadReply, Served, address, is_served, number,
                                   reply_json, served_model, tokens_of)

CALL = "/embeddings"
PROBE = "vectrixdb"  # embedded once (then cached) to learn a route's dimension before any other text
ENVIRONMENT = ("VECTRIXDB_EMBEDDER_URL", "VECTRIXDB_EMBEDDER_MODEL", "VECTRIXDB_EMBEDDER_KEY",
               "VECTRIXDB_EMBEDDER_KEY_HEADER", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "AZURE_OPENAI_ENDPOINT",
               "AZURE_OPENAI_KEY", "AZURE_OPENAI_API_VERSION")


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


def environment_model() -> str | None:
    """The model string the settings name (module doc), or None when they name none."""
    url, model = _env("VECTRIXDB_EMBEDDER_URL"), _env("VECTRIXDB_EMBEDDER_MODEL")
    if url:
        if "#" not in url and not model:
            raise BadInput("VECTRIXDB_EMBEDDER_URL is set but VECTRIXDB_EMBEDDER_MODEL, the model's name, is not")
        return str(address(url if "#" in url else f"{url}#{model}", CALL))
    deployment = _env("AZURE_OPENAI_EMBEDDING_DEPLOYMENT")
    if deployment:
        endpoint = _env("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise BadInput("AZURE_OPENAI_EMBEDDING_DEPLOYMENT is set but AZURE_OPENAI_ENDPOINT is not")
        return str(address(f"{AZURE}{endpoint}#{deployment}", CALL))
    return None


class EmbeddingRoute(Served):
    """An embedding model behind an OpenAI-style /embeddings route or an Azure OpenAI deployment.

    url: the API's base URL (…/v1; the full …/v1/embeddings address is taken too), or a whole model
    string (`base#model`, `azure:endpoint#deployment`); model: the model's name (None when the string
    holds it); key: sent as a bearer token, or in `key_header` (an Azure key: in api-key).
    api_version, credential: Azure's (credential: an azure-identity credential, DefaultAzureCredential
    unless given). cache: an EmbeddingCache, None or True for the default one, False for none.
    prices: {model: {"prompt": $}} per million tokens. batch_size: texts per request (64).
    max_concurrency: requests at once (4). max_retries: tries again per request (4). limits: rpm, tpm,
    timeout, patience (chat's LimitConfig). dim: the dimension expected (a reply of another is refused).
    """

    def __init__(self, url: str, model: str | None = None, key: str | None = None, key_header: str | None = None,
                 *, api_version: str = AZURE_API_VERSION, credential: Any = None,
                 cache: EmbeddingCache | bool | None = None, prices: dict | None = None, batch_size: int = 64,
                 max_concurrency: int = 4, max_retries: int = 4, limits: LimitConfig = DEFAULT_LIMITS,
                 dim: int | None = None):
        self._connect(self._locate(url, model, CALL), CALL, batch_size, limits=limits, max_concurrency=max_concurrency,
                      max_retries=max_retries, prices=prices, key=key, key_header=key_header, api_version=api_version,
                      credential=credential)
        self.cache: EmbeddingCache | None = EmbeddingCache() if cache is None or cache is True else (cache or None)
        self._dim: int | None = None
        self._dim_from = ""  # what set the dimension, for the message when a reply has another
        self._lock = threading.Lock()
        if dim is not None:
            self.expect(int(dim), "dim=")
        self.embedded = 0  # texts sent to the service
        self.reused = 0  # texts served from the cache

    @classmethod
    def azure_openai(cls, endpoint: str, deployment: str, key: str | None = None,
                     api_version: str = AZURE_API_VERSION, *, credential: Any = None, **options: Any) -> "EmbeddingRoute":
        """An Azure OpenAI embedding deployment; without a key, tokens from azure-identity (`credential`,
        DefaultAzureCredential unless given: the managed identity on Azure). Options as the class's."""
        return cls(f"{AZURE}{endpoint}#{deployment}", key=key, api_version=api_version, credential=credential,
                   **options)

    @classmethod
    def from_string(cls, text: str, **options: Any) -> "EmbeddingRoute":
        """The route a model string names (a collection's record), its key from the settings:
        VECTRIXDB_EMBEDDER_KEY (in VECTRIXDB_EMBEDDER_KEY_HEADER when set), or for Azure
        AZURE_OPENAI_KEY (none: the managed identity) and AZURE_OPENAI_API_VERSION."""
        if text.startswith(AZURE):
            return cls(text, key=_env("AZURE_OPENAI_KEY"),
                       api_version=_env("AZURE_OPENAI_API_VERSION") or AZURE_API_VERSION, **options)
        return cls(text, key=_env("VECTRIXDB_EMBEDDER_KEY"), key_header=_env("VECTRIXDB_EMBEDDER_KEY_HEADER"), **options)

    @classmethod
    def from_environment(cls, **options: Any) -> "EmbeddingRoute":
        """The route the settings name (module doc); BadInput naming them when none is set."""
        named = environment_model()
        if named is None:
            raise BadInput("no embedding route is configured: set VECTRIXDB_EMBEDDER_URL and VECTRIXDB_EMBEDDER_MODEL "
                           "(with VECTRIXDB_EMBEDDER_KEY if it needs a key), or AZURE_OPENAI_EMBEDDING_DEPLOYMENT and "
                           "AZURE_OPENAI_ENDPOINT (with AZURE_OPENAI_KEY, or none for the managed identity)")
        return cls.from_string(named, **options)

    def __repr__(self) -> str:
        return f"EmbeddingRoute({self.route.name!r}, model={self.model!r}, auth={self.route.auth!r})"

    # -- the dimension --------------------------------------------------------------------------

    def expect(self, dim: int, where: str) -> None:
        """Hold the route to `dim` numbers a vector (`where` says who records it, for the message)."""
        self._check(dim, where)

    def _check(self, dim: int, where: str) -> None:
        with self._lock:
            if self._dim is None:
                self._dim, self._dim_from = dim, where
            elif dim != self._dim:
                raise BadInput(f"{self.name}: vectors of {dim} numbers ({where}) against {self._dim} "
                               f"({self._dim_from}): the model behind the route changed. Serve the model the "
                               "vectors were made with, or build a new collection or vector space for this one.")

    @property
    def dim(self) -> int:
        """The vectors' length: as expected, else learnt from the first reply (one short text, cached)."""
        if self._dim is None:
            self.encode([PROBE])
        assert self._dim is not None  # a reply has set it
        return self._dim

    # -- embedding ------------------------------------------------------------------------------

    def encode(self, texts: Sequence[str], *, progress: bool | str = False) -> np.ndarray:
        """Unit-length float32 rows, one per text; cached and repeated texts are not sent again
        (module doc). `progress`: True, or the bar's label, shows a bar as batches come back."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get(self.name, list(set(hashes)), self._dim) if self.cache else {}
        for vec in list(known.values())[:1]:
            self._check(len(vec), "the embedding cache")
        todo: dict[bytes, str] = {}
        for h, t in zip(hashes, texts):
            if h not in known:
                todo.setdefault(h, t)
        if todo:
            order = list(todo)
            batches = [order[i: i + self.batch_size] for i in range(0, len(order), self.batch_size)]
            bar = None
            if progress:
                from tqdm.auto import tqdm

                desc = progress if isinstance(progress, str) else f"embedding {len(order):,} texts"
                bar = tqdm(total=len(order), desc=desc, unit="text", mininterval=1.0)

            def one(batch: list[bytes]) -> np.ndarray:
                vecs = self._embed([todo[h] for h in batch])
                if self.cache:
                    self.cache.put(self.name, dict(zip(batch, vecs)))
                if bar is not None:
                    bar.update(len(batch))
                return vecs

            try:
                for batch, vecs in zip(batches, concurrently(one, batches, workers=self.service.limiter.max_concurrency)):
                    known.update(zip(batch, vecs))
            finally:
                if bar is not None:
                    bar.close()
        self.embedded += len(todo)
        self.reused += len(texts) - len(todo)
        return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)

    def _embed(self, texts: list[str]) -> np.ndarray:
        route = self.route

        def call() -> str:
            return route.send("embeddings", {"model": self.model, "input": texts, "encoding_format": "float"})

        vecs = self.service.send(call, lambda body: read_embeddings(body, len(texts)),
                                 size=sum(len(t) for t in texts) // 4 + 1, what=f"embed {len(texts)} texts")
        self._check(vecs.shape[1], f"its reply to {len(texts)} texts")
        return vecs

    def totals(self) -> dict:
        """What the route spent (served.wire.Service.totals) and the texts it embedded and reused."""
        return {**self.service.totals(), "texts": self.embedded, "cached": self.reused}


def read_embeddings(text: str, count: int) -> tuple[np.ndarray, int | None, str | None]:
    """(unit-length float32 rows in input order, tokens, model) from an OpenAI-style embeddings reply
    to `count` texts: {"data": [{"index", "embedding"}], "usage", "model"}; an embedding may be a list
    of numbers or base64 float32 (encoding_format="base64"). BadReply saying what is wrong otherwise."""
    data = reply_json(text, "embeddings")
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        got = f"{len(items)} embeddings" if isinstance(items, list) else "no `data` list"
        raise BadReply(f"the service answered {count} texts with {got}")
    rows: list[Any] = [None] * count
    for at, item in enumerate(items):
        index = item.get("index", at) if isinstance(item, dict) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
            raise BadReply(f"data[{at}] is not an embedding of one of the {count} texts (index {index!r})")
        rows[index] = _vector(item.get("embedding"), at)
    if len({len(r) for r in rows}) != 1:
        raise BadReply(f"the embeddings are of different lengths: {sorted({len(r) for r in rows})}")
    vecs = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise BadReply("an embedding is all zeros or not finite")
    return vecs / norms, tokens_of(data), served_model(data)


def _vector(value: Any, at: int) -> list[float]:
    if isinstance(value, str):
        try:
            return np.frombuffer(base64.b64decode(value, validate=True), dtype=np.float32).tolist()
        except ValueError:
            raise BadReply(f"data[{at}].embedding is text but not base64 float32 numbers") from None
    if isinstance(value, list) and value and all(number(v) for v in value):
        return value
    raise BadReply(f"data[{at}].embedding is not a list of numbers ({type(value).__name__})")


def openai_embedder(model: str | None = None, **options: Any) -> EmbeddingRoute:
    """The registry's "openai" embedder: an OpenAI-style /v1/embeddings route by its model string
    (`http://127.0.0.1:8080/v1#nomic-embed-text`), its key from the settings (from_string)."""
    if not model:
        raise BadInput("the 'openai' embedder needs its model string: the API's base URL, '#', the model, "
                       "e.g. http://127.0.0.1:8080/v1#nomic-embed-text")
    return EmbeddingRoute.from_string(model, **options)


def azure_embedder(model: str | None = None, **options: Any) -> EmbeddingRoute:
    """The registry's "azure-openai" embedder: `https://res.openai.azure.com#deployment` (the azure:
    prefix may be left out), a key from AZURE_OPENAI_KEY or the managed identity (from_string)."""
    if not model:
        raise BadInput("the 'azure-openai' embedder needs the endpoint, '#', the deployment, e.g. "
                       "https://my-resource.openai.azure.com#text-embedding-3-small")
    return EmbeddingRoute.from_string(model if model.startswith(AZURE) else AZURE + model, **options)


registry.register("embedders", "openai", openai_embedder)
registry.register("embedders", "azure-openai", azure_embedder)

__all__ = ["EmbeddingRoute", "environment_model", "read_embeddings", "is_served", "Address"]
