"""ChatWriter: the one door every model call goes through (drafting, judging, LLM cuts, notes).

    writer = ChatWriter("http://localhost:11434/v1/chat/completions", model="phi4-mini", cache="answers.db")
    outcome = writer.ask([{"role": "user", "content": "..."}], Draft)   # Draft: a pydantic model
    outcome.status, outcome.value, writer.totals()

`ask` returns an `Outcome` and never makes a score up: its status is `ok` (value validated against
the schema), `parse_failed` (bad JSON twice: once more with the parse error, then given up),
`truncated` (the reply hit max_tokens), `refused` (the service's content filter declined this one
request) or `error` (a failure that concerns this request only: a 500 after retries, a dropped
connection after retries, a 200 reply that is not a chat completion); callers count each status.

A refusal of the whole run raises `Refused` with what the service said, and nothing is cached for
it: a key not taken, a missing model or deployment, nothing listening, a quota used up (a 429 with
insufficient_quota), a wait asked for longer than 60 s, 429s past every retry and slow-down, the
model's own refusal, and the stop rule: `stop_after` asks in a row (LimitConfig, 5) that ended in
`error`, each after all its retries, with no answer between them, stop the run with the service's
last words rather than spending the rest of its budget on a service that does not answer.

The writer retries by itself (the SDK's own retries are off): 408, 409, 429 and 5xx replies and
dropped or timed-out connections are tried again up to max_retries times, waiting what the service
asks (at most 60 s) or backing off (chat.reply). Every HTTP request sent is counted, retries
included (`Outcome.calls`, `totals()["requests"]`), beside the completions received (`answers`).

Independent asks go at the same time: `ask_many([(messages, schema), ...])` and `map(work, items)`
send up to max_concurrency at once and give the results in input order (chat.parallel). The
limiter, the cache and the ledger are shared and locked, so a batch makes the same requests and
writes the same answers as the same asks one by one: two asks of one prompt at once are asked once
(the second reads the cache), and while response_format="auto" is unsettled one request at a time
finds out which form the server takes. A refusal stops the batch with what the service said; the
asks already in flight finish and are cached. Ctrl-C stops a batch at once: no request is sent
after it, no retry waited for (a request already on the wire may still come back and be cached).
Ledger rows are in the order the asks finished, and the stop rule counts errors in that order.

Routes and their clients are in chat.routes (a registry by name: `ChatWriter.through(name, ...)`), reading replies and waits in chat.reply, the cache and
the usage ledger in chat.cache, the rate limiter in chat.limits, passages and shapes in chat.prompt.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, cast

from vectrixdb.chat.cache import CACHED_STATUSES, AnswerCache, Ledger, Stored, UsageRow, cache_key, price_of
from vectrixdb.chat.config import DEFAULT_LIMITS, DEFAULT_REQUEST, MOVED, LimitConfig, RequestConfig
from vectrixdb.chat.limits import Limiter
from vectrixdb.chat.parallel import KeyLocks, check, concurrently, pause
from vectrixdb.chat.prompt import DATA_NOTE, Shape, inert, passage
from vectrixdb.chat.reply import Attempts, NotACompletion, read_completion
from vectrixdb.chat.routes import AZURE_API_VERSION, Route, build_route, rejects_json_schema, shown_url
from vectrixdb.errors import BadInput, BadType, Refused
from vectrixdb.settings import moved

__all__ = ["ChatWriter", "Outcome", "RequestConfig", "LimitConfig", "passage", "inert", "DATA_NOTE", "concurrently"]

Status = Literal["ok", "refused", "parse_failed", "truncated", "error"]
_NO_LOCK = contextlib.nullcontext()
ENVIRONMENT = ("VECTRIXDB_WRITER_URL", "VECTRIXDB_WRITER_MODEL", "VECTRIXDB_WRITER_KEY", "VECTRIXDB_WRITER_KEY_HEADER",
               "AZURE_OPENAI_WRITER_DEPLOYMENT", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_KEY")


#: ChatWriter's keyword options and their defaults (azure_openai and from_environment take the same).
OPTIONS = {"cache": None, "prices": None, "max_concurrency": 4, "max_retries": 4, "request": DEFAULT_REQUEST,
           "limits": DEFAULT_LIMITS}


def _configs(request: Any, limits: Any) -> None:
    """request= and limits= are the config values, not dicts or numbers (BadType naming which)."""
    if not isinstance(request, RequestConfig):
        raise BadType(f"request is a RequestConfig(temperature=..., max_tokens=..., ...), not {type(request).__name__}")
    if not isinstance(limits, LimitConfig):
        raise BadType(f"limits is a LimitConfig(rpm=..., timeout=..., ...), not {type(limits).__name__}")


@dataclass(frozen=True)
class Outcome:
    """What one `ask` came to. value is the validated answer (a pydantic object, or a dict for a
    JSON-schema dict, or the text when no schema was given) and is None unless status is ok.
    Tokens, seconds and calls (HTTP requests sent, retries included) cover every request the ask
    made; answers counts the chat completions that came back; cost is None without a price."""

    status: Status
    value: Any = None
    raw: str | None = None
    reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    cost: float | None = None
    calls: int = 0
    answers: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ChatWriter:
    """A chat model behind any OpenAI-style chat completions URL, or an Azure OpenAI deployment.

    url: the full chat completions address; model: the model name the server knows; key: sent as a
    bearer token, or in `key_header` when the service wants another header (Foundry: `api-key`).
    cache: a SQLite file of answers; prices: {model or deployment: {"prompt": $, "completion": $}}
    per million tokens. max_concurrency: requests at once for all calls of this writer together (4).
    max_retries: tries again per request after a transient failure (4).
    request: what each request asks for (RequestConfig: temperature, max_tokens, seed, extra_body,
    response_format, strict); limits: rpm, tpm, timeout, patience and stop_after (LimitConfig; the
    module doc says what each does). A keyword that moved there is refused with where it went.
    """

    @moved("ChatWriter", MOVED)
    def __init__(self, url: str, model: str | None = None, key: str | None = None, key_header: str | None = None,
                 *, cache: str | os.PathLike | None = None, prices: dict | None = None, max_concurrency: int = 4,
                 max_retries: int = 4, request: RequestConfig = DEFAULT_REQUEST, limits: LimitConfig = DEFAULT_LIMITS):
        if not model:
            raise BadInput(f"model= names the model the server at {shown_url(url)[0]} should use (e.g. model='phi4-mini')")
        _configs(request, limits)
        route = build_route("openai", url, key, key_header, timeout=limits.timeout)
        self._setup(route, model, cache=cache, prices=prices, max_concurrency=max_concurrency,
                    max_retries=max_retries, request=request, limits=limits)

    @classmethod
    @moved("ChatWriter.through", MOVED)
    def through(cls, route: str, *where: Any, model: str, **options: Any) -> "ChatWriter":
        """A writer on any registered model route by its name (chat.routes.ROUTES): `where` and the
        keywords that are not ChatWriter's options go to the route's builder, the options (cache,
        prices, max_concurrency, max_retries, request, limits) to the writer, as ChatWriter's."""
        if not model:
            raise BadInput(f"model= names the model the {route!r} route should use")
        given = {**OPTIONS, **{k: v for k, v in options.items() if k in OPTIONS}}
        _configs(given["request"], given["limits"])
        built = build_route(route, *where, timeout=given["limits"].timeout,
                            **{k: v for k, v in options.items() if k not in OPTIONS})
        writer = cls.__new__(cls)
        writer._setup(built, model, **given)
        return writer

    def _setup(self, route: Route, model: str, *, cache: str | os.PathLike | None, prices: dict | None,
               max_concurrency: int, max_retries: int, request: RequestConfig, limits: LimitConfig) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise BadInput(f"max_retries is a whole number from 0, not {max_retries!r}")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise BadInput(f"max_concurrency is a whole number from 1, not {max_concurrency!r}")
        self.request, self.limits = request, limits
        self.max_retries, self.stop_after, self.patience = max_retries, limits.stop_after, limits.patience
        self._failing, self._failing_lock = 0, threading.Lock()
        self._keys, self._probing = KeyLocks(), threading.Lock()
        self.route, self.model, self.prices = route, model, dict(prices or {})
        self.sampling = request.sampling()
        self.response_format, self.strict = request.response_format, request.strict
        self.cache = AnswerCache(cache) if cache is not None else None
        self.limiter = Limiter(max_concurrency, limits.rpm, limits.tpm)
        self.ledger = Ledger()

    @classmethod
    @moved("ChatWriter.azure_openai", MOVED)
    def azure_openai(cls, endpoint: str, deployment: str, key: str | None = None,
                     api_version: str = AZURE_API_VERSION, *, credential: Any = None, **options: Any) -> "ChatWriter":
        """An Azure OpenAI deployment; without a key, tokens come from azure-identity (`credential`,
        DefaultAzureCredential unless given: the managed identity on Azure). Options as ChatWriter's
        (cache, prices, max_concurrency, max_retries, request, limits)."""
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise BadType(f"unknown option(s) {sorted(unknown)}; known: {sorted(OPTIONS)}")
        return cls.through("azure", endpoint, deployment, key, api_version, credential=credential, model=deployment,
                           **options)

    @classmethod
    @moved("ChatWriter.from_environment", MOVED)
    def from_environment(cls, **options: Any) -> "ChatWriter":
        """The writer the settings name: VECTRIXDB_WRITER_URL (+ _MODEL, _KEY, _KEY_HEADER), or
        AZURE_OPENAI_WRITER_DEPLOYMENT with AZURE_OPENAI_ENDPOINT (+ AZURE_OPENAI_KEY, else the managed
        identity). Options as ChatWriter's."""
        env = {name: os.environ.get(name) or None for name in ENVIRONMENT}
        if env["VECTRIXDB_WRITER_URL"]:
            if not env["VECTRIXDB_WRITER_MODEL"]:
                raise BadInput("VECTRIXDB_WRITER_URL is set but VECTRIXDB_WRITER_MODEL, the model's name, is not")
            return cls(env["VECTRIXDB_WRITER_URL"], model=env["VECTRIXDB_WRITER_MODEL"], key=env["VECTRIXDB_WRITER_KEY"],
                       key_header=env["VECTRIXDB_WRITER_KEY_HEADER"], **options)
        if env["AZURE_OPENAI_WRITER_DEPLOYMENT"]:
            if not env["AZURE_OPENAI_ENDPOINT"]:
                raise BadInput("AZURE_OPENAI_WRITER_DEPLOYMENT is set but AZURE_OPENAI_ENDPOINT is not")
            version = os.environ.get("AZURE_OPENAI_API_VERSION") or AZURE_API_VERSION
            return cls.azure_openai(env["AZURE_OPENAI_ENDPOINT"], env["AZURE_OPENAI_WRITER_DEPLOYMENT"],
                                    key=env["AZURE_OPENAI_KEY"], api_version=version, **options)
        raise BadInput("no chat model is configured: set VECTRIXDB_WRITER_URL and VECTRIXDB_WRITER_MODEL "
                       "(with VECTRIXDB_WRITER_KEY and VECTRIXDB_WRITER_KEY_HEADER if it needs a key), or "
                       "AZURE_OPENAI_WRITER_DEPLOYMENT and AZURE_OPENAI_ENDPOINT (with AZURE_OPENAI_KEY, or "
                       "none for the managed identity)")

    def describe(self) -> dict:
        """Where the writer goes and how it signs requests, with any key masked (in the URL too)."""
        return {"route": self.route.name, "model": self.model, "auth": self.route.auth, "kind": self.route.kind}

    def __repr__(self) -> str:
        return f"ChatWriter({self.route.name!r}, model={self.model!r}, auth={self.route.auth!r})"

    # -- asking -------------------------------------------------------------------------------

    def ask(self, messages: str | list[dict], schema: Any = None, *, max_tokens: int | None = None) -> Outcome:
        """One answer: from the cache when it holds it, else from the model (see the module doc)."""
        messages = [{"role": "user", "content": messages}] if isinstance(messages, str) else [dict(m) for m in messages]
        shape = Shape(schema) if schema is not None else None
        sampling = {**self.sampling, **({"max_tokens": max_tokens} if max_tokens else {})}
        key = cache_key(route=self.route.name, model=self.model, messages=messages,
                        schema=shape.schema if shape else None, sampling=sampling)
        started = time.perf_counter()
        with self._keys.hold(key) if self.cache is not None else _NO_LOCK:  # one prompt asked once at a time
            stored = self.cache.get(key) if self.cache is not None else None
            outcome = self._reread(stored, shape, time.perf_counter() - started) if stored is not None else None
            if outcome is None:
                tally = {"requests": 0, "answers": 0}
                try:
                    outcome, stored = self._ask_model(messages, shape, sampling, tally)
                except Refused:  # the requests it took are counted all the same
                    self.ledger.add(UsageRow(time.time(), self.model, "refused", False, tally["requests"],
                                             tally["answers"], 0, 0, round(time.perf_counter() - started, 4), None))
                    raise
                if self.cache is not None and stored is not None:
                    self.cache.put(key, stored)
        self.ledger.add(UsageRow(time.time(), self.model, outcome.status, outcome.cached, outcome.calls,
                                 outcome.answers, outcome.prompt_tokens, outcome.completion_tokens,
                                 round(outcome.seconds, 4), outcome.cost))
        if not outcome.cached:
            self._stop_rule(outcome)
        return outcome

    def _stop_rule(self, outcome: Outcome) -> None:
        """`stop_after` asks in a row that ended in error (no answer between them) raise Refused."""
        with self._failing_lock:
            self._failing = self._failing + 1 if outcome.status == "error" else 0
            failing = self._failing
        if outcome.status == "error" and failing >= self.stop_after:
            raise Refused(f"{self.route.name} failed {failing} asks in a row, each after its retries, with no answer "
                          f"between them (a writer stops after stop_after={self.stop_after}); the last: "
                          f"{outcome.reason}", said=outcome.reason)

    def ask_many(self, items: Iterable[tuple[Any, Any]], *, max_tokens: int | None = None) -> list[Outcome]:
        """`ask` for each (messages, schema), up to max_concurrency at once; the outcomes in input
        order. A refusal stops the batch: nothing not yet started is asked, and it is raised."""
        return self.map(lambda item: self.ask(item[0], item[1], max_tokens=max_tokens), items)

    def map(self, work: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        """[work(item) for item in items] with up to max_concurrency items at once, for work that asks
        this writer (one ask or several: an answer, then its verdict); results in input order, the
        first failure in input order raised (chat.parallel.concurrently)."""
        return concurrently(work, items, workers=self.limiter.max_concurrency)

    def _reread(self, stored: Stored, shape: Shape | None, seconds: float) -> Outcome | None:
        """A cached answer as an Outcome; None when it no longer validates (the model is asked again)."""
        value = None
        if stored.status == "ok":
            try:
                value = shape.parse(stored.raw or "") if shape else stored.raw  # no raw text: asked again
            except ValueError:
                return None
        cost = price_of(self.prices, [self.model, stored.model], 0, 0)
        return Outcome(cast(Status, stored.status), value, stored.raw, stored.reason, stored.prompt_tokens, stored.completion_tokens,
                       seconds, cached=True, cost=cost, calls=0)

    def _ask_model(self, messages: list[dict], shape: Shape | None, sampling: dict,
                   tally: dict) -> tuple[Outcome, Stored | None]:
        """Ask, once more with the parse error when the JSON is bad; the Stored answer to cache or None."""
        started, prompt, completion, served = time.perf_counter(), 0, 0, None
        convo = list(messages)

        def done(status: Status, raw: str | None = None, reason: str | None = None, value: Any = None):
            seconds = time.perf_counter() - started
            cost = price_of(self.prices, [self.model, served], prompt, completion)
            outcome = Outcome(status, value, raw, reason, prompt, completion, seconds, False, cost, tally["requests"],
                              tally["answers"])
            keep = Stored(status, raw, reason, served, prompt, completion, seconds) if status in CACHED_STATUSES else None
            return outcome, keep

        for attempt in (1, 2):
            reply = self._request(convo, shape, sampling, tally)
            if isinstance(reply, str):
                return done("error", reason=reply)
            prompt, completion, served = prompt + reply["prompt"], completion + reply["completion"], reply["model"]
            text, finish = reply["text"], reply["finish"]
            if finish == "length":
                return done("truncated", text, f"the reply reached max_tokens={sampling.get('max_tokens')}")
            if finish == "content_filter":
                return done("refused", text, "the service's content filter declined this request")
            if shape is None:
                return done("ok", text, value=text)
            try:
                return done("ok", text, value=shape.parse(text))
            except ValueError as exc:
                if attempt == 2:
                    return done("parse_failed", text, f"the reply, asked twice, {exc}")
                convo += [{"role": "assistant", "content": inert(text)},  # the model's words go back inert too
                          {"role": "user", "content": f"That reply {exc}. Answer again with only the JSON object "
                                                      f"the schema describes, nothing else."}]
        raise AssertionError("unreachable")

    def _payload(self, convo: list[dict], shape: Shape | None, sampling: dict, form: str) -> dict:
        body = {k: v for k, v in sampling.items() if k != "extra_body"}
        body.update(model=self.model, messages=convo, extra_body=sampling.get("extra_body"))
        if shape is not None and form == "json_object":
            body["response_format"] = {"type": "json_object", "schema": shape.schema}
        elif shape is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": shape.name, "schema": shape.schema, "strict": self.strict}}
        return body

    def _request(self, convo: list[dict], shape: Shape | None, sampling: dict, tally: dict) -> dict | str:
        """One completion through the limiter and the retry rule (module doc): a dict of the reply, or
        a string saying why not. tally counts every HTTP request sent and every completion received.

        With response_format="auto" a server that rejects json_schema (llama-cpp-python answers 422
        or 500) switches this writer to json_object at once; one that takes it settles the format.
        Until it is settled, structured requests go one at a time, so a batch probes once, as a
        serial run does."""
        if shape is not None and self.response_format == "auto":
            with self._probing:
                if self.response_format == "auto":
                    return self._send(convo, shape, sampling, tally)
        return self._send(convo, shape, sampling, tally)

    def _send(self, convo: list[dict], shape: Shape | None, sampling: dict, tally: dict) -> dict | str:
        estimate = sum(len(str(m.get("content", ""))) for m in convo) // 4 + int(sampling.get("max_tokens") or 0)
        attempts = Attempts(self.route, self.max_retries, self.patience, self.limiter)
        result: dict | str | None  # the reply, why it failed, or None to try again
        while True:
            form = "json_schema" if self.response_format == "auto" else self.response_format
            with self.limiter.slot(estimate, check=check) as entry:  # check: no request for an abandoned batch
                tally["requests"] += 1
                try:
                    text = self.route.send("chat/completions", self._payload(convo, shape, sampling, form))
                except Exception as exc:  # noqa: BLE001 - sorted by Attempts.after; anything else is raised
                    self.limiter.settle(entry, 0)
                    if (shape is not None and self.response_format == "auto" and form == "json_schema"
                            and rejects_json_schema(exc)):
                        self.response_format = "json_object"  # asked again at once in the form it takes
                        continue
                    result, wait = attempts.after(exc)
                else:
                    result, wait = self._read(text, shape, tally), 0.0
                    self.limiter.settle(entry, result["prompt"] + result["completion"] if isinstance(result, dict)
                                        else estimate)
            if wait:
                pause(wait)  # wakes at once when the batch is abandoned (Ctrl-C)
            if isinstance(result, dict):
                self.limiter.succeeded()
                if result["refusal"]:
                    raise Refused(f"the model at {self.route.name} refused: {result['refusal']}", said=result["refusal"])
            if result is not None:
                return result

    def _read(self, text: str, shape: Shape | None, tally: dict) -> dict | str:
        try:
            reply = read_completion(text)
        except NotACompletion as exc:
            return self.route.scrub(exc)
        tally["answers"] += 1
        if shape is not None and self.response_format == "auto":
            self.response_format = "json_schema"
        return reply

    # -- what it cost ---------------------------------------------------------------------------

    def usage(self):
        """One row per ask: when, model, status, cached, calls, tokens, seconds, cost (a DataFrame)."""
        return self.ledger.frame()

    def totals(self) -> dict:
        """What this writer spent (requests really made; cached answers cost nothing again)."""
        return self.ledger.totals()
