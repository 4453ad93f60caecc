"""One client-side limiter per ChatWriter: requests in flight, requests and tokens per minute.

Every call of a writer, from any thread, passes through the same limiter, so a run of many asks keeps
within what the service allows instead of learning it from 429s. When a 429 gets through anyway
(the writer has already retried it, honouring Retry-After), it calls `slow_down`: every thread
holds off for the wait the service asked for (or a backoff) and the number in flight is halved; it
creeps back up by one after a run of successes (additive increase, multiplicative decrease).
Tokens per minute count an estimate when a request is sent and its real usage once it is known.
A request that waits for its slot can be called off (`slot(check=...)`: Ctrl-C in an ask_many).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator

from vectrixdb.errors import BadInput

WINDOW = 60.0
POLL = 0.25  # seconds between a waiting request's checks (slot's `check`)


class Limiter:
    """In-flight, requests-per-minute and tokens-per-minute limits shared by threads."""

    def __init__(self, max_concurrency: int = 4, rpm: int | None = None, tpm: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic):
        if max_concurrency < 1:
            raise BadInput(f"max_concurrency must be at least 1, not {max_concurrency}")
        self.max_concurrency = max_concurrency
        self.concurrency = max_concurrency
        self.rpm, self.tpm = rpm, tpm
        self.slowdowns = 0
        self._clock = clock
        self._cond = threading.Condition()
        self._in_flight = 0
        self._sent: deque[list[float]] = deque()  # [time sent, tokens] within the last minute
        self._resume_at = 0.0
        self._successes = 0

    def _wait_needed(self, tokens: int) -> float | None:
        """Seconds to wait before sending (None: until a request finishes; 0: go now)."""
        now = self._clock()
        while self._sent and self._sent[0][0] <= now - WINDOW:
            self._sent.popleft()
        if now < self._resume_at:
            return self._resume_at - now
        if self._in_flight >= self.concurrency:
            return None
        if self.rpm and len(self._sent) >= self.rpm:
            return self._sent[0][0] + WINDOW - now
        if self.tpm and self._sent and sum(t for _, t in self._sent) + tokens > self.tpm:
            return self._sent[0][0] + WINDOW - now
        return 0.0

    @contextmanager
    def slot(self, tokens: int = 0, *, check: Callable[[], None] | None = None) -> Iterator[list[float]]:
        """Hold one request slot; yields the ledger entry whose token count `settle` corrects.
        `check` is called before the slot is taken and at least every POLL seconds while waiting for
        it; what it raises gives the wait up (an abandoned batch sends nothing more)."""
        with self._cond:
            while True:
                if check is not None:
                    check()
                wait = self._wait_needed(tokens)
                if wait == 0.0:
                    break
                if check is not None:
                    wait = POLL if wait is None else min(wait, POLL)
                self._cond.wait(timeout=None if wait is None else max(wait, 0.001))
            self._in_flight += 1
            entry = [self._clock(), float(tokens)]
            self._sent.append(entry)
        try:
            yield entry
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def settle(self, entry: list[float], tokens: int) -> None:
        """Replace a request's estimated tokens with what it really used."""
        with self._cond:
            entry[1] = float(tokens)
            self._cond.notify_all()

    def succeeded(self) -> None:
        """A request went through: after enough of them, allow one more in flight again."""
        with self._cond:
            self._successes += 1
            if self.concurrency < self.max_concurrency and self._successes >= 4 * self.concurrency:
                self.concurrency += 1
                self._successes = 0
                self._cond.notify_all()

    def slow_down(self, wait: float) -> None:
        """A 429 got through: everyone waits `wait` seconds (held to 0..WINDOW, so no service can make
        a timer overflow: NaN and negative count as 0, infinity as WINDOW) and half as many go at once."""
        wait = min(max(wait, 0.0), WINDOW) if wait == wait else 0.0
        with self._cond:
            self.slowdowns += 1
            self.concurrency = max(1, self.concurrency // 2)
            self._successes = 0
            self._resume_at = max(self._resume_at, self._clock() + wait)
            self._cond.notify_all()
