"""Is the chat model there? One small call before a long job reads a single passage.

write_golden and `vectrixdb compare-chunking --chat` read a whole collection (and embed it) before
their first model call; a wrong URL, key or model name would otherwise show only after that, or,
as failed answers, as a run that kept nothing. check_answers asks for one word first: a reply of
any kind means the route, the key and the model are right; an error stops the job at once with what
the service said. The call never comes from an answer cache (a cached reply proves nothing), is
tried again once at most (a busy service still costs the check its timeout twice), and is
counted in the writer's usage like any other.
"""
from __future__ import annotations

import copy
from typing import Any

from vectrixdb.errors import Refused
from vectrixdb.roles import ChatModel

PROBE = [{"role": "user", "content": "Reply with the single word: ready"}]


def check_answers(writer: ChatModel, before: str) -> None:
    """Raise Refused (naming the route and what came back) unless `writer` answers one small request.
    `before` says what the job would have done next, for the message. A writer without describe()
    (a stand-in with ask()) is not a chat service and is not checked."""
    describe = getattr(writer, "describe", None)
    if not callable(describe) or not callable(getattr(writer, "ask", None)):
        return
    probe: Any = copy.copy(writer)  # a ChatWriter: its cache and retries are set on the copy
    if hasattr(probe, "cache"):
        probe.cache = None
    if isinstance(getattr(probe, "max_retries", None), int):  # one retry at most: a check, not the job
        probe.max_retries = min(probe.max_retries, 1)
    where = describe()
    first = f"the chat model {where.get('model')!r} at {where.get('route')} did not answer a one-word check {before}"
    try:
        outcome = probe.ask(PROBE, max_tokens=8)
    except Refused as exc:
        raise Refused(f"{first}: {exc}", said=exc.said, status=exc.status) from None
    if outcome.status == "error":
        raise Refused(f"{first}: {outcome.reason or 'no reason given'} (`vectrixdb writer check` shows the route)",
                      said=outcome.reason)
