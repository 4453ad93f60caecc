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

Ctrl-C (a KeyboardInterrupt, or any exception raised in the calling thread while it waits) is not a
failure of an item: the batch is abandoned. Nothing more starts, and the items in flight send no
further request: ChatWriter checks `check()` before every request (also while waiting for the
limiter) and waits between retries with `pause`, which wakes at once. The call raises at once,
without waiting for the requests already on the wire (their threads end when those come back, and
send nothing more); a serial batch is interrupted where it stands, as any loop is.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")
_SKIPPED = object()
_batch = threading.local()  # .abandon: the events of the batches this thread works for, outermost first


class Abandoned(BaseException):
    """The batch this thread works for was abandoned (Ctrl-C in its caller): the work stops before
    its next request. A BaseException, like KeyboardInterrupt, so that no `except Exception` in a
    caller's work takes it for a failure of its own; the caller raises its own interruption."""


def abandoned() -> bool:
    """True when a batch this thread works for, or one it is nested in, was abandoned."""
    return any(event.is_set() for event in getattr(_batch, "abandon", ()))


def check() -> None:
    """Raise Abandoned when this thread's batch was abandoned; nothing outside a batch."""
    if abandoned():
        raise Abandoned("the batch was interrupted")


def pause(seconds: float) -> None:
    """time.sleep(seconds), but in a batch's thread it wakes at once and raises Abandoned when the
    batch is abandoned (a retry's backoff never outlives Ctrl-C)."""
    events = getattr(_batch, "abandon", ())
    if not events:
        time.sleep(seconds)
        return
    deadline = time.monotonic() + seconds
    while True:
        check()
        left = deadline - time.monotonic()
        if left <= 0:
            return
        events[-1].wait(min(left, 0.25))  # the batch's own event wakes it at once; an outer one within 0.25 s


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
    stop, abandon = threading.Event(), threading.Event()
    outer = getattr(_batch, "abandon", ())  # a batch run from inside another's item ends with it too

    def one(item: T) -> Any:
        if stop.is_set():
            return _SKIPPED
        _batch.abandon = (*outer, abandon)
        try:
            return work(item)
        except BaseException:
            stop.set()
            raise
        finally:
            _batch.abandon = ()

    pool = ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="vectrixdb-chat")
    failed: BaseException | None = None
    try:
        futures = [pool.submit(one, item) for item in items]  # taken in order: earlier items start first
        for future in futures:  # the first failure in input order is the one raised
            failed = future.exception()
            if failed is not None:
                raise failed
        return [future.result() for future in futures]
    except BaseException as exc:
        if exc is not failed:  # raised here, not by an item: Ctrl-C while waiting
            abandon.set()
        raise
    finally:
        stop.set()  # on an error nothing more starts and what is in flight finishes; on Ctrl-C it stops
        pool.shutdown(wait=not abandon.is_set(), cancel_futures=True)


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
