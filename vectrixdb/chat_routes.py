"""How ChatWriter reaches a model: building the `openai` client for a route, and reading its errors.

Two kinds of route. Any OpenAI-style chat completions URL (Ollama, vLLM, llama.cpp, OpenAI, Azure AI
Foundry) gets the SDK's `OpenAI` client, its base URL being the given URL less `/chat/completions`
and its query string kept for every request (Foundry's `?api-version=`). An Azure OpenAI deployment
gets the SDK's `AzureOpenAI` client, with a key or, without one, a bearer-token provider from
azure-identity with the Cognitive Services scope (a managed identity on Azure, `az login` on a
laptop). The SDK does the wire: timeouts, retries with backoff that honour Retry-After, Azure's URLs.

`refusal` turns what the SDK raises into `Refused` when the service says no to the whole run (a key
it will not take, a model or deployment that is not there, nothing listening), keeping its words.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from vectrixdb.errors import BadInput, Refused, Unsupported

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"
AZURE_API_VERSION = "2024-10-21"
_SUFFIX = "/chat/completions"
_EXTRA = "pip install 'vectrixdb[chat]'"


@dataclass(frozen=True)
class Route:
    """A built client and how to name it: `name` is the URL (part of every cache key), `auth` says
    how requests are signed with any key masked."""

    client: Any
    name: str
    auth: str
    kind: str  # "openai" or "azure"
    headers: dict = field(default_factory=dict)  # sent with each request (the SDK drops Authorization only so)


def mask(key: str | None) -> str:
    """A key shown without giving it away: its first three and last two characters at most."""
    if not key:
        return "(none)"
    return f"{key[:3]}…{key[-2:]}" if len(key) >= 12 else "…" * 3


def _openai():
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise Unsupported(f"chat models need the openai SDK: {_EXTRA}") from exc
    return openai


def openai_route(url: str, key: str | None, key_header: str | None, *, timeout: float, max_retries: int) -> Route:
    """The SDK's OpenAI client for a full chat-completions URL.

    Without a key no Authorization header is sent at all (a local server needs none); with
    `key_header` the key goes in that header instead of `Authorization: Bearer` (Foundry's `api-key`).
    """
    openai = _openai()
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if parts.scheme not in ("http", "https") or not parts.netloc or not path.endswith(_SUFFIX):
        raise BadInput(f"a chat model URL is the full chat completions address, e.g. "
                       f"http://localhost:11434/v1/chat/completions; got {url!r}")
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
                           default_query=dict(parse_qsl(parts.query)) or None, timeout=timeout, max_retries=max_retries)
    return Route(client, urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")), auth, "openai", no_bearer)


def azure_route(endpoint: str, deployment: str, key: str | None, api_version: str, *, credential: Any = None,
                timeout: float, max_retries: int) -> Route:
    """The SDK's AzureOpenAI client for one deployment, signed by a key or by azure-identity tokens."""
    openai = _openai()
    if not endpoint.startswith(("http://", "https://")) or not deployment:
        raise BadInput(f"Azure OpenAI needs an endpoint URL and a deployment name; got {endpoint!r}, {deployment!r}")
    common = dict(azure_endpoint=endpoint, azure_deployment=deployment, api_version=api_version, timeout=timeout,
                  max_retries=max_retries)
    if key:
        client, auth = openai.AzureOpenAI(api_key=key, **common), f"key {mask(key)} in header api-key"
    else:
        try:
            from azure.identity import DefaultAzureCredential, get_bearer_token_provider
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise Unsupported(f"Azure OpenAI without a key needs azure-identity: {_EXTRA}") from exc
        credential = credential or DefaultAzureCredential()
        provider = get_bearer_token_provider(credential, AZURE_SCOPE)
        client = openai.AzureOpenAI(azure_ad_token_provider=provider, **common)
        auth = f"Microsoft Entra token from {type(credential).__name__} (managed identity when on Azure)"
    name = f"{endpoint.rstrip('/')}/openai/deployments/{deployment}/chat/completions?api-version={api_version}"
    return Route(client, name, auth, "azure")


def said(exc: BaseException) -> str:
    """The service's own words from an SDK error: the error body's message, or the response text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            code = inner.get("code")
            return f"{inner['message']}" + (f" ({code})" if code and str(code) not in inner["message"] else "")
        if isinstance(inner, str):
            return inner
    response = getattr(exc, "response", None)
    text = getattr(response, "text", None) if response is not None else None
    return (text or getattr(exc, "message", None) or str(exc)).strip()[:2000]


def refusal(exc: BaseException, route: Route) -> Refused | None:
    """`Refused` for an error that stops a run; None for one that concerns only this request."""
    openai = _openai()
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        words = said(exc)
        return Refused(f"{route.name} would not take the credentials ({exc.status_code}): {words}",
                       said=words, status=exc.status_code)
    if isinstance(exc, openai.NotFoundError):
        words = said(exc)
        return Refused(f"{route.name} has no such model or deployment (404): {words}", said=words, status=404)
    if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
        cause = exc.__cause__ or exc
        return Refused(f"no chat service answered at {route.name}: {cause}", said=str(cause))
    try:
        from azure.core.exceptions import ClientAuthenticationError
    except ImportError:  # pragma: no cover
        return None
    if isinstance(exc, ClientAuthenticationError):
        words = getattr(exc, "message", None) or str(exc)
        return Refused(f"no token for {route.name}: {words}", said=words)
    return None


def rejects_json_schema(exc: BaseException) -> bool:
    """True when a server refused a request because it does not know `json_schema` response formats
    (llama-cpp-python's server answers 500 or 422 and wants `{"type": "json_object", "schema": ...}`)."""
    openai = _openai()
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    words = said(exc).lower()
    return "json_schema" in words and ("response_format" in words or "json_object" in words)


def retry_after(exc: BaseException) -> float | None:
    """Seconds a 429 asked to wait (Retry-After or retry-after-ms), when it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name)) / scale
        except (TypeError, ValueError):
            continue
    return None
