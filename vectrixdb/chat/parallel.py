"""Independent model calls at the same time: one pool per batch, results in input order.

A batch of asks that do not depend on each other (a judge over many answers and metrics, a note
per chunk, a cut per section) waits on the service, not on this machine, so it is sent a few at a
time: `concurrently(work, items, workers=...)` runs `work(item)` on up to `workers` threads and
returns the results in the order of `items`. The writer's own limiter still bounds what is in
flight (max_concurrency, rpm, tpm), however many threads ask, and its cache and ledger are shared
and locked, so a batch asked at once spends what the same batch asked one by one spends.

What a serial loop guarantees, a batch keeps:
- results come back in input order, whatever order the replies arrive in;
- the first failure stops the batch: nothing not yet started is asked, the few already in flight
  finish (their answers are cached), and the failure that comes first in input order is raised
  (for a `Refused`, with what the service said). Every item before it has been asked, as serially;
- a plain function (a judge or answerer that is not a ChatWriter) is called one item at a time, in
  order: `width` gives 1 for it, since nothing says it is safe to call from several threads.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")
_SKIPPED = object()


def width(*models: object) -> int:
    """How many items to work on at once for calls to these models: the largest max_concurrency of
    the ChatWriters among them, and 1 when any of them is something else (a function, a stand-in)."""
    limits = [getattr(getattr(m, "limiter", None), "max_concurrency", None) for m in models if m is not None]
    counts = [n for n in limits if isinstance(n, int) and n >= 1]
    if not limits or len(counts) < len(limits):
        return 1
    return max(counts)


def concurrently(work: Callable[[T], R], items: Iterable[T], *, workers: int) -> list[R]:
    """[work(item) for item in items], up to `workers` at a time, in input order (see the module doc)."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    stop = threading.Event()

    def one(item: T) -> Any:
        if stop.is_set():
            return _SKIPPED
        try:
            return work(item)
        except BaseException:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="vectrixdb-chat")
    try:
        futures = [pool.submit(one, item) for item in items]  # taken in order: earlier items start first
        for future in futures:  # the first failure in input order is the one raised
            error = future.exception()
            if error is not None:
                raise error
        return [future.result() for future in futures]
    finally:
        stop.set()  # on an error or Ctrl-C nothing more starts; what is in flight finishes
        pool.shutdown(wait=True, cancel_futures=True)


class KeyLocks:
    """One lock per key while anyone holds it: two asks of the same prompt at once are asked once,
    the second reading the first's answer from the cache, as when they are asked one after another."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._held: dict[str, list] = {}  # key: [lock, holders and waiters]

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            entry = self._held.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._held[key]
