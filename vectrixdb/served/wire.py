"""What the embedding and rerank routes share: the model string, the route, and one request sent by
ChatWriter's rules.

A served model is named by one string, what a collection records and a terminal's --model takes:

    http://127.0.0.1:8080/v1#nomic-embed-text        an OpenAI-style API's base URL, '#', the model
    azure:https://res.openai.azure.com#my-embedding  an Azure OpenAI endpoint, '#', the deployment

The full address of the call (…/v1/embeddings, …/v1/rerank) is taken too and read as its base. A key
never goes in the string (a URL holding one is refused): it is given as key=, or read from the
settings when a string is opened again (served.embedding and served.rerank say which).

The route is chat.routes' own: the "openai" builder makes the SDK client for the base URL (the key
as a bearer token or in a named header, no bearer at all without one, the query string kept on every
request), the "azure" builder the AzureOpenAI client of one deployment, signed by a key or by
azure-identity tokens (the managed identity on Azure). Only the route's name changes, to the address
really called, so every message and cache key names it.

`Service.send` is ChatWriter's rule for one request, with its own pieces: a slot of the limiter
(max_concurrency, rpm, tpm), then after any failure chat.reply.Attempts (408/409/429/5xx and
dropped connections tried again, Retry-After honoured up to 60 s, 429s past the retries slowing
every thread down, a quota used up, a key not taken, a missing model or deployment and nothing
listening refused at once). One addition: a 5xx whose words say the input is too long (llama.cpp's
"input is too large to process") is this request's error at once, since sending it again cannot
help. A reply that is not the shape asked for is this request's error too, not retried (chat's
rule for a body that is not a completion). ChatWriter turns such errors into an `error` outcome;
here there is no vector or score to stand for it, so the request raises Refused with the
service's words, and nothing partial is returned. Every request is counted in a usage ledger
(chat.cache.Ledger): requests sent with retries, tokens from the reply's usage, seconds, and
cost only from the price table the caller gave.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, TypeVar
from urllib.parse import urlsplit, urlunsplit

from vectrixdb.chat.cache import Ledger, UsageRow, price_of
from vectrixdb.chat.config import LimitConfig
from vectrixdb.chat.limits import Limiter
from vectrixdb.chat.parallel import check, pause
from vectrixdb.chat.reply import Attempts, began
from vectrixdb.chat.routes import AZURE_API_VERSION, Route, Verdict, build_route, said, shown_url
from vectrixdb.errors import BadInput, BadType, Refused

AZURE = "azure:"
T = TypeVar("T")
#: What servers say when an input is longer than the model reads (llama.cpp, OpenAI, vLLM, TEI).
TOO_LONG = re.compile(r"too large to process|too long|maximum context length|context_length_exceeded|"
                      r"exceeds the available context|larger than the max context|too many tokens", re.I)


@dataclass(frozen=True)
class Address:
    """Where a served model is: kind ("openai" or "azure"), the base URL or Azure endpoint, the model
    or deployment. str() is the model string (module doc)."""

    kind: str
    url: str
    model: str

    def __str__(self) -> str:
        return f"{AZURE if self.kind == 'azure' else ''}{self.url}#{self.model}"


def is_served(model: Any) -> bool:
    """True for a model string that names a served model (http://…, https://… or azure:…)."""
    return isinstance(model, str) and model.startswith(("http://", "https://", AZURE))


def address(text: str, call: str) -> Address:
    """The Address a model string names; `call` is the path the route calls ("/embeddings"),
    taken off a full address. BadInput for anything else, with the form it takes."""
    kind = "azure" if text.startswith(AZURE) else "openai"
    url, sep, model = text[len(AZURE):].partition("#") if kind == "azure" else text.partition("#")
    example = ("azure:https://my-resource.openai.azure.com#my-deployment" if kind == "azure"
               else "http://127.0.0.1:8080/v1#nomic-embed-text")
    if not sep or not model.strip():
        raise BadInput(f"{shown_url(url)[0]!r} names no model: a served model is its URL, '#', and the model's "
                       f"name, e.g. {example}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadInput(f"{shown_url(url)[0]!r} is not an http(s) address; e.g. {example}")
    if shown_url(url)[1]:
        raise BadInput(f"{shown_url(url)[0]!r} holds a key; pass it as key= or in the settings, never in the "
                       "URL (the URL is recorded with the collection)")
    path = parts.path.rstrip("/")
    if kind == "openai" and path.endswith(call):  # Azure's SDK builds /openai/deployments/<name>/... itself
        path = path[: -len(call)]
    return Address(kind, urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")), model.strip())


def build(where: Address, call: str, *, key: str | None, key_header: str | None, api_version: str | None,
          credential: Any, timeout: float) -> Route:
    """chat.routes' route for `where`, named by the address it calls (the base URL + `call`)."""
    if where.kind == "azure":
        route = build_route("azure", where.url, where.model, key, api_version or AZURE_API_VERSION,
                            credential=credential, timeout=timeout)
        name = route.name.replace("/chat/completions", call, 1)
    else:
        parts = urlsplit(where.url)
        chat = urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/chat/completions", parts.query, ""))
        route = build_route("openai", chat, key, key_header, timeout=timeout)
        name = shown_url(urlunsplit((parts.scheme, parts.netloc, parts.path + call, parts.query, "")))[0]
    return replace(route, name=name, errors=too_long)


def too_long(exc: BaseException) -> Verdict:
    """A 5xx saying the input is too long is this request's error, not tried again (a route's
    `errors` hook, chat.routes.Verdict); anything else is left to the usual rule."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 500 and TOO_LONG.search(said(exc)):
        return "failed"
    return None


class BadReply(ValueError):
    """A 2xx reply that is not the shape asked for."""


def reply_json(text: str, what: str) -> Any:
    """The JSON of a reply's body; BadReply with how it began when it is not JSON or is an error object."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise BadReply(f"the service answered but not with {what} (not JSON); the reply began {began(text)}") from None
    if isinstance(data, dict) and data.get("error") and not data.get("data") and not data.get("results"):
        inner = data["error"]
        words = inner.get("message") if isinstance(inner, dict) else inner
        raise BadReply(f"the service answered with an error object, not {what}: {str(words)[:300]}")
    return data


def tokens_of(data: Any) -> int | None:
    """Tokens a reply's usage counts (prompt_tokens, else total_tokens); None when it says none."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if isinstance(usage, dict):
        for name in ("prompt_tokens", "total_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
    return None


def served_model(data: Any) -> str | None:
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None


def number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Service:
    """One route's requests: the limiter, the retry rule, the usage ledger (module doc).

    max_concurrency: requests at once, all threads together; max_retries: tries again after a
    transient failure; limits: rpm, tpm, timeout and patience as ChatWriter's LimitConfig (its
    stop_after has no use here: the first request that fails raises); prices: {model: {"prompt": $}}
    per million tokens, as ChatWriter's."""

    def __init__(self, route: Route, model: str, *, max_concurrency: int, max_retries: int, limits: LimitConfig,
                 prices: dict | None):
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise BadInput(f"max_retries is a whole number from 0, not {max_retries!r}")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise BadInput(f"max_concurrency is a whole number from 1, not {max_concurrency!r}")
        if not isinstance(limits, LimitConfig):
            raise BadType(f"limits is a LimitConfig(rpm=..., timeout=..., ...), not {type(limits).__name__}")
        if prices is not None and not isinstance(prices, dict):
            raise BadType(f"prices is a dict {{model: {{'prompt': dollars per million tokens}}}}, not {type(prices).__name__}")
        self.route, self.model, self.prices = route, model, dict(prices or {})
        self.max_retries, self.patience = max_retries, limits.patience
        self.limiter = Limiter(max_concurrency, limits.rpm, limits.tpm)
        self.ledger = Ledger()
        self.unmetered = 0  # replies that said nothing of the tokens they cost
        self._lock = threading.Lock()

    def send(self, call: Callable[[], str], read: Callable[[str], tuple[T, int | None, str | None]], *,
             size: int, what: str) -> T:
        """One request: `call()` sends it and returns the reply's body, `read(body)` gives (value,
        tokens or None, the model that answered) or raises BadReply; `size` is its token estimate
        for the limiter, `what` names it in a refusal ("embed 64 texts")."""
        started, calls = time.perf_counter(), 0
        attempts = Attempts(self.route, self.max_retries, self.patience, self.limiter)
        while True:
            failed: str | None = None
            wait = 0.0
            with self.limiter.slot(size, check=check) as entry:  # check: no request for an abandoned batch
                calls += 1
                try:
                    body = call()
                except Exception as exc:  # noqa: BLE001 - sorted by Attempts.after; anything else is raised
                    self.limiter.settle(entry, 0)
                    try:
                        failed, wait = attempts.after(exc)
                    except Refused:
                        self._row("refused", calls, 0, started, None)
                        raise
                else:
                    try:
                        value, tokens, served = read(body)
                    except BadReply as exc:
                        self.limiter.settle(entry, size)
                        failed = self.route.scrub(exc)
                    else:
                        self.limiter.settle(entry, tokens or size)
                        self.limiter.succeeded()
                        self._row("ok", calls, tokens, started, served)
                        return value
            if failed is not None:
                self._row("error", calls, 0, started, None)
                raise Refused(f"{self.route.name} could not {what} (model {self.model}) after {calls} "
                              f"request{'s' * (calls != 1)}: {failed}", said=failed)
            if wait:
                pause(wait)  # wakes at once when the batch is abandoned (Ctrl-C)

    def _row(self, status: str, calls: int, tokens: int | None, started: float, served: str | None) -> None:
        if status == "ok" and tokens is None:
            with self._lock:
                self.unmetered += 1
        used = tokens or 0
        cost = price_of(self.prices, [self.model, served], used, 0) if status == "ok" else None
        self.ledger.add(UsageRow(time.time(), self.model, status, False, calls, int(status == "ok"), used, 0,
                                 round(time.perf_counter() - started, 4), cost))

    def totals(self) -> dict:
        """What this route spent: requests sent (retries included), replies, tokens (from the replies'
        usage; `unmetered` replies said none), seconds waiting, and cost (None without a price)."""
        rows = self.ledger.rows()
        costs = [r.cost for r in rows if r.cost is not None]
        return {"route": self.route.name, "model": self.model, "requests": sum(r.calls for r in rows),
                "replies": sum(r.answers for r in rows), "tokens": sum(r.prompt_tokens for r in rows),
                "unmetered": self.unmetered, "seconds": round(sum(r.seconds for r in rows), 3),
                "cost": round(sum(costs), 12) if costs else None}


class Served:
    """What an embedding and a rerank route share: the model at the address (`where`), the route
    its requests go through, and what it spent (`service`, a Service)."""
    where: Address
    service: Service

    @staticmethod
    def _locate(url: str, model: str | None, call: str) -> Address:
        """The address a route is given: a URL (with the model after '#', or `model`), checked."""
        if not isinstance(url, str):
            raise BadInput(f"url is the route's address as text, not {type(url).__name__}")
        return address(url if model is None else f"{url.split('#')[0]}#{model}", call)

    def _connect(self, where: Address, call: str, batch_size: int, *, limits: LimitConfig, max_concurrency: int,
                 max_retries: int, prices: dict | None, **route: Any) -> None:
        """Set where, name and batch_size, and the Service its requests go through (`route`: build's
        key, key_header, api_version, credential)."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise BadInput(f"batch_size is a whole number from 1, not {batch_size!r}")
        self.where, self.name, self.batch_size = where, str(where), batch_size
        self.service = Service(build(where, call, timeout=limits.timeout, **route), where.model,
                               max_concurrency=max_concurrency, max_retries=max_retries, limits=limits, prices=prices)

    @property
    def model(self) -> str:
        return self.where.model

    @property
    def route(self) -> Route:
        return self.service.route

    def describe(self) -> dict:
        """Where the route goes and how it signs requests, with any key masked."""
        return {"route": self.route.name, "model": self.model, "auth": self.route.auth, "kind": self.route.kind}

    def usage(self):
        """One row per request batch: when, model, status, calls, tokens, seconds, cost (a DataFrame)."""
        return self.service.ledger.frame()

