"""Chat models: every call a model makes for vectrixdb (drafting questions, judging answers, LLM cuts,
chunk notes) goes through one ChatWriter.

    writer.py    ChatWriter and Outcome: ask / ask_many / map, retries, the stop rule, totals
    config.py    RequestConfig and LimitConfig: the writer's settings beyond its ten keywords
    routes.py    where a request goes: OpenAI-compatible and Azure routes, masked keys, refusals
    reply.py     reading a reply and the waits a service asks for
    cache.py     the answer cache and the usage ledger (SQLite)
    limits.py    the rate limiter shared by concurrent asks
    parallel.py  concurrently(): asks at once, results in input order
    prompt.py    passages handed to a model as data, and the JSON shapes answers come back in

A new model route (another service's wire): its own module with a function returning a `Route` (what
the writer calls on `Route.client` and what it must return: routes.Route) and, at its bottom, the
`register_route(name, builder)` line. Routes are the "routes" kind of vectrixdb/registry.py: inside
the package a builder lives in routes.py (the registry's home for routes); outside, its module is
imported by the code that calls `ChatWriter.through(name, ...)`, or named by an entry point in the
group `vectrixdb.routes` (`mywire = "mypkg.wire:wire_route"`). Its errors are sorted by routes.verdict (an `errors` hook,
then network errors retried and refused as the SDK's are). Below evaluation/, above errors and io;
nothing here imports the store or evaluation. `from vectrixdb.chat import ChatWriter` and
`from vectrixdb.evaluation import ChatWriter` hand over the same class.
"""
from __future__ import annotations

__all__ = ["ChatWriter", "Outcome", "passage", "RequestConfig", "LimitConfig"]


def __getattr__(name: str):
    if name in __all__:
        from vectrixdb.chat import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'vectrixdb.chat' has no attribute {name!r}")
