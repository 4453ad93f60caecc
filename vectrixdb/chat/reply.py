"""What a model service sends back, read by one rule, and how long to wait before asking again.

`read_completion` reads the body of a 2xx reply. Anything that is not a chat completion (an HTML
page from a proxy, `{}`, `choices: []`, `message: null`, usage missing its counts, JSON cut off, an
error object sent with 200) raises `NotACompletion` saying what was wrong and how the body began;
ChatWriter makes that the request's `error` outcome, never a crash, and never caches it.

Waiting follows the openai SDK's own rule (`_base_client._calculate_retry_timeout`): the wait a
reply asks for (`retry-after-ms`, then `Retry-After` in seconds or as an HTTP date) is honoured
when it is more than 0 and at most CAP = 60 seconds; otherwise the wait is an exponential backoff,
0.5 s doubling to at most 8 s, less up to a quarter at random. One step further than the SDK: a
service that asks for more than CAP (`inf`, `1e10`, a date next week) will not serve this run, so
ChatWriter stops with its words instead of sleeping for ever or overflowing a timer.

`Attempts` is the whole retry rule of one request (see chat/writer.py's module doc for what it means to a
run): what to do after each failure, and when to stop.
"""
from __future__ import annotations

import email.utils
import json
import math
import random
import time
from typing import Any, Mapping

from vectrixdb.chat.routes import Route, nothing_listening, refusal, said, sdk, verdict
from vectrixdb.errors import Refused

CAP = 60.0
INITIAL_DELAY, MAX_DELAY = 0.5, 8.0
SHOWN = 200  # characters of a bad body quoted in the error


class NotACompletion(ValueError):
    """A 2xx reply whose body is not an OpenAI chat completion."""


def began(text: str) -> str:
    """How a body began, for a message: its first SHOWN characters, newlines shown as \\n."""
    head = text[:SHOWN]
    return repr(head) + (f" … ({len(text):,} characters)" if len(text) > SHOWN else "")


def _count(usage: dict, name: str) -> int:
    value = usage.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise NotACompletion(f"usage.{name} is {json.dumps(value)[:40]}, not a count of tokens")
    return value


def read_completion(text: str) -> dict[str, Any]:
    """The parts of a chat completion body ChatWriter uses: text, finish, model, prompt and
    completion tokens, refusal. NotACompletion (with how the body began) for anything else."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = ("not JSON: nested too deep" if isinstance(exc, RecursionError) else
               f"not JSON: {exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:120]}")
        raise NotACompletion(f"the service answered but not with a chat completion ({why}); the reply began "
                             f"{began(text)}") from None
    try:
        return _parts(data)
    except NotACompletion as exc:
        raise NotACompletion(f"the service answered but not with a chat completion ({exc}); the reply began "
                             f"{began(text)}") from None


def _parts(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise NotACompletion(f"a JSON {type(data).__name__}, not an object")
    if data.get("error") and not data.get("choices"):
        inner = data["error"]
        words = inner.get("message") if isinstance(inner, dict) else inner
        raise NotACompletion(f"an error object: {str(words)[:300]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise NotACompletion("no choices" if not choices else "choices is not a list")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise NotACompletion("choices[0].message is missing or not an object")
    content, refusal = message.get("content"), message.get("refusal")
    if content is not None and not isinstance(content, str):
        raise NotACompletion(f"choices[0].message.content is a {type(content).__name__}, not text")
    finish = choice.get("finish_reason")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        raise NotACompletion("usage is missing or null, so the tokens it cost are unknown")
    model = data.get("model")
    return {"text": content or "", "finish": finish if isinstance(finish, str) else None,
            "model": model if isinstance(model, str) else None, "prompt": _count(usage, "prompt_tokens"),
            "completion": _count(usage, "completion_tokens"),
            "refusal": refusal if isinstance(refusal, str) and refusal else None}


def asked_wait(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a reply asked to wait, read as the openai SDK reads them (None when it did not say);
    may be negative, infinite or NaN: `retry_wait` and `too_long` decide what to do with it."""
    if not headers:
        return None
    try:
        return float(headers.get("retry-after-ms") or "") / 1000.0  # absent: "" is a ValueError like any bad value
    except (TypeError, ValueError, OverflowError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    when = email.utils.parsedate_tz(str(value))
    if when is None:
        return None
    try:
        return float(email.utils.mktime_tz(when) - time.time())
    except (OverflowError, ValueError):
        return math.inf


def too_long(asked: float | None) -> bool:
    """True when the service asks for a longer wait than CAP (infinity included)."""
    return asked is not None and asked > CAP


def retry_wait(asked: float | None, attempt: int) -> float:
    """Seconds before retry number `attempt` (1, 2, ...): the asked wait when 0 < asked <= CAP,
    else the SDK's backoff for that attempt."""
    if asked is not None and 0 < asked <= CAP:
        return float(asked)
    return min(INITIAL_DELAY * 2.0 ** min(max(attempt - 1, 0), 10), MAX_DELAY) * (1 - 0.25 * random.random())


class Attempts:
    """The retry rule for one request: 408, 409, 429 and 5xx replies and connections dropped or timed
    out are tried again up to max_retries times; 429s past that slow the whole writer down (the
    limiter) up to `patience` times more; then, or when a wait asked for is over CAP, or on a
    refusal (chat.routes.refusal), Refused is raised with the service's words. Errors that are not
    the SDK's (a route of another wire) are sorted by chat.routes.verdict and retried by `transient`."""

    def __init__(self, route: Route, max_retries: int, patience: int, limiter: Any):
        self.route, self.max_retries, self.patience, self.limiter = route, max_retries, patience, limiter
        self.failures = self.limited = 0

    def after(self, exc: BaseException) -> tuple[str | None, float]:
        """(the request's error, or None to try again; seconds to wait before trying) after the client raised."""
        openai = sdk()  # None without the SDK: then the route is of another wire, and so is its error
        route, limit = self.route, self.max_retries
        of_sdk = openai is not None and isinstance(exc, openai.OpenAIError)
        if not of_sdk or route.errors is not None:
            ruled = verdict(exc, route)
            if isinstance(ruled, Refused):
                raise ruled from exc
            if ruled == "failed":
                return f"{type(exc).__name__}: {route.scrub(exc)}", 0.0
            if ruled == "transient":
                return self.transient(exc)
        if of_sdk and isinstance(exc, openai.APIStatusError):
            stop = refusal(exc, route)
            if stop is not None:
                raise stop from exc
            status, words = exc.status_code, said(exc, route)
            if status not in (408, 409, 429) and status < 500:
                return f"HTTP {status} ({type(exc).__name__}): {words}", 0.0
            asked = asked_wait(exc.response.headers)
            if too_long(asked):
                raise Refused(f"{route.name} asks to wait {asked:g} s before another request, longer than the "
                              f"{CAP:g} s a writer waits (HTTP {status}): {words}", said=words, status=status) from exc
            if status == 429:
                self.limited += 1
                if self.limited > limit + self.patience:
                    raise Refused(f"{route.name} was still rate limiting (429) after {self.limited} requests, "
                                  f"{limit} retries and {self.patience} slow-downs: {words}", said=words,
                                  status=429) from exc
                if self.limited > limit:  # past the retries: the whole writer slows down
                    self.limiter.slow_down(retry_wait(asked, self.limited - limit))
                    return None, 0.0
                return None, retry_wait(asked, self.limited)
            self.failures += 1
            if self.failures > limit:
                return f"HTTP {status} ({type(exc).__name__}) after {self.failures} requests: {words}", 0.0
            return None, retry_wait(asked, self.failures)
        if of_sdk and isinstance(exc, openai.APIConnectionError):  # a timeout, a connection dropped or never made
            wait = self._again()
            if wait is not None:
                return None, wait
            stop = refusal(exc, route)
            if stop is not None:
                raise stop from exc
            return f"{type(exc).__name__} after {self.failures} requests: {route.scrub(exc.__cause__ or exc)}", 0.0
        stop = refusal(exc, route)
        if stop is not None:
            raise stop from exc
        raise exc

    def transient(self, exc: BaseException) -> tuple[str | None, float]:
        """A route's own error that may pass (routes.verdict said "transient"): tried again up to
        max_retries times, as the SDK's connection errors are; then Refused naming the route when
        nothing ever accepted the connection, else this request's error."""
        wait = self._again()
        if wait is not None:
            return None, wait
        words = self.route.scrub(exc)
        if nothing_listening(exc):
            raise Refused(f"no chat service answered at {self.route.name} (route {self.route.kind!r}) after "
                          f"{self.failures} requests: {type(exc).__name__}: {words}", said=words) from exc
        return f"{type(exc).__name__} after {self.failures} requests: {words}", 0.0

    def _again(self) -> float | None:
        """Count one more failed try: the seconds to wait before the next, or None past max_retries
        (a connection error of the SDK's and a route's own transient error share this count)."""
        self.failures += 1
        return retry_wait(None, self.failures) if self.failures <= self.max_retries else None
