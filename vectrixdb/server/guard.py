"""What every response of the dashboard is guarded by: the Host it answers to, and headers that keep
its pages from being framed or from loading anything but their own stylesheet and pictures.

DNS rebinding: a page on attacker.example can make its name resolve to 127.0.0.1, and the browser
then lets that page read the dashboard as if it were the attacker's own site. The browser still
sends `Host: attacker.example`, so a request is answered only when its Host names this server: the
address it is bound to (with localhost and the other loopback names when that is a loopback
address), or a name it was told to answer to (`vectrixdb serve --host-name NAME`). Anything else
is refused with 421 and a sentence saying how to allow the name. The port is not compared: a
rebinding page reaches the port it names, which is this one.

Every response carries a Content-Security-Policy (nothing loads but this server's stylesheet and
inline data: pictures; no script runs; no page may frame it) with X-Frame-Options, nosniff and
no referrer, for browsers that do not read every directive.
"""
from __future__ import annotations

import socket
from typing import Iterable

LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::", "")
POLICY = ("default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
          "base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", POLICY.encode()), (b"x-frame-options", b"DENY"),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"cross-origin-resource-policy", b"same-origin")]


def allowed_hosts(bind: str = "127.0.0.1", names: Iterable[str] = ()) -> frozenset[str]:
    """The Host names a server bound to `bind` answers to, plus `names`."""
    out = {_name(n) for n in names if _name(n)}
    bind = _name(bind)
    if bind in WILDCARD:
        out |= set(LOOPBACK) | {_name(socket.gethostname()), _name(socket.getfqdn())}
    elif bind in LOOPBACK or bind.startswith("127."):
        out |= set(LOOPBACK) | {bind}
    else:
        out.add(bind)
    return frozenset(out - {""})


def _name(host: str) -> str:
    """A host as compared: lower case, no brackets, no trailing dot."""
    return str(host).strip().lower().strip("[]").rstrip(".")


def host_of(header: str) -> str:
    """The name in a Host header, without its port: `[::1]:8000` -> `::1`, `a.b:80` -> `a.b`."""
    header = header.strip()
    if header.startswith("["):
        return _name(header[1:header.find("]")] if "]" in header else header)
    if header.count(":") == 1:
        header = header.split(":", 1)[0]
    return _name(header)


class Guard:
    """ASGI middleware: refuse a request whose Host is not allowed; add the security headers."""

    def __init__(self, app, hosts: Iterable[str]):
        self.app, self.hosts = app, frozenset(hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        header = next((v.decode("latin-1") for k, v in scope.get("headers") or [] if k == b"host"), None)
        if header is None or host_of(header) not in self.hosts:
            return await self.refuse(header, send)

        async def guarded(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers") or []}
                message["headers"] = list(message.get("headers") or []) + [h for h in HEADERS if h[0] not in present]
            await send(message)

        return await self.app(scope, receive, guarded)

    async def refuse(self, header: str | None, send) -> None:
        named = "no Host header" if header is None else f"the host {header[:100]!r}"
        text = (f"Refused: this dashboard answers only to {', '.join(sorted(self.hosts))}, and the request named "
                f"{named} (a guard against DNS rebinding). To reach it by that name, start it with "
                "`vectrixdb serve --host-name NAME`.\n").encode("utf-8")
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(text)).encode())] + HEADERS})
        await send({"type": "http.response.body", "body": text})
