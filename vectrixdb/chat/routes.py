"""How ChatWriter reaches a model: building a route's client (the `openai` SDK's for the built-ins), and
reading its errors.

Routes are built by name from one registry, ROUTES (`register_route(name, builder)`, `build_route`):
a builder takes where the model is (positional: a URL; an endpoint and a deployment), its own
keywords (keys, versions) and `timeout=` seconds, and returns a `Route`. `ChatWriter.through(name,
*where, model=...)` reaches any registered route; `ChatWriter(url, ...)` is the "openai" route and
`ChatWriter.azure_openai(...)` the "azure" one. A new route (another service's wire) is one builder
function and one `register_route` line; nothing in the writer changes (what the writer calls on a
route's client, and what it must return, is in `Route`'s docstring).

Two routes are built in. Any OpenAI-style chat completions URL (Ollama, vLLM, llama.cpp, OpenAI, Azure AI
Foundry) gets the SDK's `OpenAI` client, its base URL being the given URL less `/chat/completions`
and its query string kept for every request (Foundry's `?api-version=`). An Azure OpenAI deployment
gets the SDK's `AzureOpenAI` client, with a key or, without one, a bearer-token provider from
azure-identity with the Cognitive Services scope (a managed identity on Azure, `az login` on a
laptop). The SDK does the wire (timeouts, Azure's URLs) with its own retries off: ChatWriter retries
itself (chat.reply), so that every HTTP request is counted and every reply is read by one rule.

A route's `name` is its URL as shown to people (`describe()`, `repr`, report.json, every message):
any secret in it is masked where the URL is built (`shown_url`), a key in the query string
(`?subscription-key=`, `?api-key=`, `?code=`, `?sig=`, ...) as much as a key in a header, and
`Route.scrub` masks the route's secrets in any text that comes back from the service or the SDK.

`refusal` turns what the SDK raises into `Refused` when the service says no to the whole run (a key
it will not take, a model or deployment that is not there, a quota used up, nothing listening),
keeping its words.

A route whose client is not the SDK's (another service's wire) raises its own errors; `verdict`
sorts them by one rule (its `Route.errors` hook first, then the default): an HTTP library's
transport errors (httpx's TransportError and anything of that name, any OSError: refused, reset,
timed out, no such host) are retried like the SDK's connection errors and, after the retries,
are `Refused` naming the route when nothing ever accepted the connection, else that request's
error; an httpx HTTPStatusError is read by its status as the SDK's are (401/403/404 refuse the run,
408/409/429/5xx are retried, other 4xx are the request's error). Anything else propagates as it is
(a bug in the route, shown as one).

Where a new route's `register_route` line lives: at the bottom of its own module (as the two
built-ins' are at the bottom of this one). Routes are the "routes" kind of vectrixdb/registry.py
(ROUTES is its table): `build_route` looks a name up there, which loads this module's routes and
the entry points in the group `vectrixdb.routes`; a module outside the package is imported by the
code that uses it (`import mypkg.my_route`) or named by such an entry point. An unknown name is
refused with the registered ones.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Union
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from vectrixdb import registry
from vectrixdb.errors import BadInput, BadType, Refused
from vectrixdb.extras import needs

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
AZURE_API_VERSION = "2024-10-21"
_SUFFIX = "/chat/completions"
#: A query parameter whose name holds one of these words carries a secret (matched without case,
#: `-` and `_`): Azure's subscription-key, Foundry's api-key, Azure Functions' code, SAS sig, tokens.
SECRET_NAMES = re.compile(r"key|token|secret|passw|pwd|sig|code|auth|credential|session", re.I)


#: What a route's `errors` hook says of an exception its client raised: "transient" (try again, as a
#: dropped connection), "failed" (this request's error, not retried), a Refused to raise (the run
#: stops), or None (not its call: the default rule, `verdict`, decides).
Verdict = Union[Literal["transient", "failed"], Refused, None]


@dataclass(frozen=True)
class Route:
    """A built client and how to name it: `name` is the URL (part of every cache key), `auth` says
    how requests are signed with any key masked.

    Every caller makes one call, `route.send(path, payload)`: POST the JSON `payload` to `path`
    below the route's base URL and return the reply's body as text. The paths are OpenAI's:
    "chat/completions" (the writer: `model`, `messages` as [{"role", "content"}], the sampling
    keywords when set, `response_format` for a shaped answer ({"type": "json_schema", "json_schema":
    {"name", "schema", "strict"}} or {"type": "json_object", "schema"}) and `extra_body`; the body
    must be an OpenAI chat completion, checked by chat/reply.read_completion), "embeddings"
    (served.embedding: `model`, `input`, `encoding_format`) and "rerank" (served.rerank: `model`,
    `query`, `documents`, `top_n`).

    `client` is what sends it: the openai SDK's client (the built-in routes' own; `send` drives its
    raw-response calls with this route's `headers`), or any object with that one method,
    `client.send(path, payload) -> str`, for another service's wire (it takes what it needs from the
    payload and ignores the rest). Anything it raises is sorted by `verdict` (the module doc): the
    SDK's errors by their type, others by `errors` and the default."""

    client: Any
    name: str
    auth: str
    kind: str  # the name its builder was registered under ("openai", "azure", or a new route's)
    headers: dict = field(default_factory=dict)  # passed as extra_headers on each request (the openai route's
    # {"Authorization": Omit()}: the SDK's only way to send no bearer token when there is no key)
    secrets: tuple = ()  # every key this route sends, so that no message shows one
    errors: Callable[[BaseException], Verdict] | None = None  # its own exceptions sorted first (see Verdict)

    def send(self, path: str, payload: dict) -> str:
        """POST `payload` to `path` ("chat/completions", "embeddings", "rerank") through the client;
        the reply's body as text (see the class doc)."""
        if not _is_sdk(self.client):
            own = getattr(self.client, "send", None)
            if not callable(own):
                raise BadType(f"route {self.kind!r}'s client is a {type(self.client).__name__}: a route's client is "
                              "the openai SDK's or an object with send(path, payload) -> the reply's body as text")
            return own(path, payload)
        headers = self.headers or None
        if path == "chat/completions":
            return self.client.chat.completions.with_raw_response.create(**payload, extra_headers=headers).http_response.text
        if path == "embeddings":
            return self.client.embeddings.with_raw_response.create(**payload, extra_headers=headers).http_response.text
        return self.client.post(f"/{path}", cast_to=str, body=payload, options={"headers": self.headers})

    def scrub(self, text: Any) -> str:
        """`text` with each of this route's secrets masked (also percent-encoded, as a URL holds it)."""
        text = str(text)
        for secret in (s for s in self.secrets if len(s) >= 4):  # shorter ones would mask ordinary words
            for form in {secret, quote(secret, safe=""), quote_plus(secret, safe="")}:
                text = text.replace(form, mask(secret))
        return text


def _is_sdk(client: Any) -> bool:
    """Whether a route's client is the openai SDK's (told by its module, so nothing is imported)."""
    return type(client).__module__.split(".")[0] == "openai"


def mask(key: str | None) -> str:
    """A key shown without giving it away: its first three and last two characters at most."""
    if not key:
        return "(none)"
    return f"{key[:3]}…{key[-2:]}" if len(key) >= 12 else "…" * 3


def shown_url(url: str) -> tuple[str, tuple[str, ...]]:
    """(the URL with every secret masked, the secrets found): query values whose names match
    SECRET_NAMES and a password in the address (user:password@host). The one place a URL is made
    fit to show; `Route.name` is always this."""
    parts = urlsplit(url)
    secrets: list[str] = []
    netloc = parts.netloc
    if parts.password:
        secrets.append(parts.password)
        netloc = netloc.replace(f":{parts.password}@", f":{mask(parts.password)}@", 1)
    shown = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and SECRET_NAMES.search(name.replace("-", "").replace("_", "")):
            secrets.append(value)
            value = mask(value)
        shown.append(f"{name}={value}")
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(shown), "")), tuple(secrets)


def _openai():
    """The openai SDK, which the routes built on it (openai_route, azure_route) need: MissingExtra without it."""
    with needs("chat"):
        import openai
    return openai


def sdk() -> Any:
    """The openai SDK when it is loaded, else None. Only the routes built on it (openai_route,
    azure_route) import it; an error can be the SDK's only once it is loaded, so the error rules ask
    here and a route of another wire (a client of its own) never imports it."""
    return sys.modules.get("openai")  # None also where a test marks it absent


def openai_route(url: str, key: str | None, key_header: str | None, *, timeout: float) -> Route:
    """The SDK's OpenAI client for a full chat-completions URL (no SDK retries: the writer retries).

    Without a key no Authorization header is sent at all (a local server needs none); with
    `key_header` the key goes in that header instead of `Authorization: Bearer` (Foundry's `api-key`).
    """
    openai = _openai()
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if parts.scheme not in ("http", "https") or not parts.netloc or not path.endswith(_SUFFIX):
        raise BadInput(f"a chat model URL is the full chat completions address, e.g. "
                       f"http://localhost:11434/v1/chat/completions; got {shown_url(url)[0]!r}")
    base = urlunsplit((parts.scheme, parts.netloc, path[: -len(_SUFFIX)], "", ""))
    headers: dict[str, Any] = {}
    no_bearer = {"Authorization": openai.Omit()}
    if key and key_header and key_header.lower() != "authorization":
        headers = {key_header: key}
        auth = f"key {mask(key)} in header {key_header}"
    elif key:
        no_bearer, auth = {}, f"key {mask(key)} as a bearer token"
    else:
        auth = "no key"
    client = openai.OpenAI(base_url=base, api_key=key or "unused", default_headers=headers or None,
                           default_query=dict(parse_qsl(parts.query)) or None, timeout=timeout, max_retries=0)
    name, secrets = shown_url(urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")))
    return Route(client, name, auth, "openai", no_bearer, secrets + ((key,) if key else ()))


def azure_route(endpoint: str, deployment: str, key: str | None, api_version: str, *, credential: Any = None,
                timeout: float) -> Route:
    """The SDK's AzureOpenAI client for one deployment, signed by a key or by azure-identity tokens."""
    openai = _openai()
    if not endpoint.startswith(("http://", "https://")) or not deployment:
        raise BadInput(f"Azure OpenAI needs an endpoint URL and a deployment name; got {shown_url(endpoint)[0]!r}, "
                       f"{deployment!r}")
    common = dict(azure_endpoint=endpoint, azure_deployment=deployment, api_version=api_version, timeout=timeout,
                  max_retries=0)
    if key:
        client, auth = openai.AzureOpenAI(api_key=key, **common), f"key {mask(key)} in header api-key"
    else:
        with needs("chat"):  # Azure OpenAI without a key: a token from azure-identity
            from azure.identity import DefaultAzureCredential, get_bearer_token_provider
        credential = credential or DefaultAzureCredential()
        provider = get_bearer_token_provider(credential, AZURE_SCOPE)
        client = openai.AzureOpenAI(azure_ad_token_provider=provider, **common)
        auth = f"Microsoft Entra token from {type(credential).__name__} (managed identity when on Azure)"
    name, secrets = shown_url(f"{endpoint.rstrip('/')}/openai/deployments/{deployment}/chat/completions"
                              f"?api-version={api_version}")
    return Route(client, name, auth, "azure", secrets=secrets + ((key,) if key else ()))


#: Route builders by name (see the module doc): the registry's table of routes; `register_route` adds one.
ROUTES: dict[str, Callable[..., Route]] = registry.table("routes")


@registry.alias
def register_route(name: str, builder: Callable[..., Route]) -> Callable[..., Route]:
    """Make `builder` reachable as route `name` (registry.register("routes", name, builder)); a name
    registered twice is refused (it would shadow the first). Returns the builder."""
    return registry.register("routes", name, builder)


@registry.contract("routes")
def _fits(name: str, builder: Any) -> None:
    if not callable(builder):
        raise BadType(f"model route {name!r}: a route is a builder function (where..., *, timeout, ...) -> Route, "
                      f"not {type(builder).__name__}")


def unregister_route(name: str) -> None:
    """Remove a route (a test that registers its own takes it out again)."""
    registry.unregister("routes", name)


def build_route(name: str, *where: Any, timeout: float, **options: Any) -> Route:
    """The Route the builder registered as `name` makes for `where` and its options; an unknown name
    is refused with the known ones, options the builder does not take with its signature."""
    import inspect

    builder = registry.get("routes", name)
    try:
        inspect.signature(builder).bind(*where, timeout=timeout, **options)
    except TypeError as exc:
        raise BadType(f"route {name!r} takes {builder.__name__}{inspect.signature(builder)}: {exc}") from None
    return builder(*where, timeout=timeout, **options)


register_route("openai", openai_route)
register_route("azure", azure_route)


def said(exc: BaseException, route: Route | None = None) -> str:
    """The service's own words from an SDK error (the error body's message, or the response text),
    at most 2,000 characters, with the route's secrets masked."""
    words = None
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            code = inner.get("code")
            words = f"{inner['message']}" + (f" ({code})" if code and str(code) not in str(inner["message"]) else "")
        elif isinstance(inner, str):
            words = inner
    if words is None:
        response = getattr(exc, "response", None)
        try:
            text = response.text if response is not None else None
        except Exception:  # noqa: BLE001 - a body that cannot be read says nothing
            text = None
        words = text or getattr(exc, "message", None) or str(exc)
    words = str(words).strip()[:2000]
    return route.scrub(words) if route is not None else words


def quota_used_up(exc: BaseException) -> bool:
    """True for a 429 that says the account's quota or credit is used up (OpenAI's insufficient_quota):
    waiting does not help, so it is a refusal, not a rate limit."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and any(str(inner.get(k) or "").lower() in ("insufficient_quota", "billing_hard_limit_reached")
                                       for k in ("code", "type")):
        return True
    return "exceeded your current quota" in said(exc).lower()


def refusal(exc: BaseException, route: Route) -> Refused | None:
    """`Refused` for an error that stops a run; None for one that concerns only this request.
    A connection that never opened is a refusal (nothing listens); one dropped is not (it is retried)."""
    openai = sdk()
    if openai is not None:
        words = said(exc, route)
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return Refused(f"{route.name} would not take the credentials ({exc.status_code}): {words}",
                           said=words, status=exc.status_code)
        if isinstance(exc, openai.NotFoundError):
            return Refused(f"{route.name} has no such model or deployment (404): {words}", said=words, status=404)
        if isinstance(exc, openai.RateLimitError) and quota_used_up(exc):
            return Refused(f"{route.name} says the quota is used up (429): {words}", said=words, status=429)
        if (isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)
                and never_connected(exc)):
            cause = route.scrub(exc.__cause__ or exc)
            return Refused(f"no chat service answered at {route.name}: {cause}", said=cause)
    try:
        with needs("chat"):
            from azure.core.exceptions import ClientAuthenticationError
    except ImportError:  # pragma: no cover
        return None
    if isinstance(exc, ClientAuthenticationError):
        words = route.scrub(getattr(exc, "message", None) or exc)
        return Refused(f"no token for {route.name}: {words}", said=words)
    return None


def never_connected(exc: BaseException) -> bool:
    """True when an SDK connection error comes from a ConnectError of its HTTP library (nothing
    accepted the connection), False for one made and then dropped or cut (read, write, protocol
    errors). Matched by class name: the SDK may ship httpx or a fork of it (httpx2)."""
    cause = exc.__cause__
    return cause is not None and any(c.__name__ == "ConnectError" for c in type(cause).__mro__)


def rejects_json_schema(exc: BaseException) -> bool:
    """True when a server refused a request because it does not know `json_schema` response formats
    (llama-cpp-python's server answers 500 or 422 and wants `{"type": "json_object", "schema": ...}`)."""
    openai = sdk()
    if openai is None or not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    words = said(exc).lower()
    return "json_schema" in words and ("response_format" in words or "json_object" in words)


def verdict(exc: BaseException, route: Route) -> Verdict:
    """How the retry rule treats an exception that is not the openai SDK's (the module doc): the
    route's `errors` hook first, then httpx status errors by their status, transport errors and
    OSError as transient; None for anything else (it propagates)."""
    if route.errors is not None:
        got = route.errors(exc)
        if got is not None:
            if not isinstance(got, Refused) and got not in ("transient", "failed"):
                raise BadType(f"route {route.kind!r}'s errors hook returned {got!r} for {type(exc).__name__}; "
                              "it returns 'transient', 'failed', a Refused or None")
            return got
    names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if "HTTPStatusError" in names and isinstance(status, int):
        words = route.scrub(said(exc))
        if status in (401, 403):
            return Refused(f"{route.name} would not take the credentials ({status}): {words}", said=words, status=status)
        if status == 404:
            return Refused(f"{route.name} has no such model or deployment (404): {words}", said=words, status=404)
        return "transient" if status in (408, 409, 429) or status >= 500 else "failed"
    if "TransportError" in names or isinstance(exc, OSError):
        return "transient"
    return None


def nothing_listening(exc: BaseException) -> bool:
    """True when an exception, or one it was raised from, says no connection was ever accepted:
    httpx's ConnectError (matched by name, as never_connected does), a refused connection or an
    unknown host (urllib's URLError carries it as `reason`)."""
    import socket

    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        e = todo.pop()
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (ConnectionRefusedError, socket.gaierror)) or \
                any(c.__name__ == "ConnectError" for c in type(e).__mro__):
            return True
        todo += [e.__cause__, e.__context__, getattr(e, "reason", None)]
    return False
