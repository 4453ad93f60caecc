"""Ctrl-C during ChatWriter.ask_many against a real HTTP server on 127.0.0.1 (tests.llama_server's
Scripted): the batch stops at once, and no request is sent after the interrupt, not even a retry of
an ask that was in flight."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from tests.conftest import ROOT
from tests.llama_server import Scripted

ASK_MANY = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises KeyboardInterrupt, whoever started us
from vectrixdb.chat.writer import ChatWriter, LimitConfig
writer = ChatWriter(sys.argv[1], model="m", max_concurrency=4, max_retries=6, limits=LimitConfig(timeout=10))
print("ready", flush=True)
try:
    writer.ask_many([(f"question {i}", None) for i in range(8)])
    print("finished", time.time(), flush=True)
except KeyboardInterrupt:
    print("interrupted", time.time(), flush=True)
"""


def test_ctrl_c_stops_ask_many_at_once_with_no_request_after_it(tmp_path):
    """A server that answers every request with a 500 after 0.3 s, so each of the 4 asks in flight
    retries (backing off 0.5, 1, 2, 4, 8, 8 s: some 20 s each). Once it has seen 8 requests the
    script gets SIGINT: ask_many raises KeyboardInterrupt within seconds (the old code retried on for
    some 20 s), and no request reaches the server after that (a grace of 0.5 s for one already on
    the wire), nor later than 5 s after the signal."""
    arrived: list[float] = []
    lock = threading.Lock()

    def respond(_json):
        with lock:
            arrived.append(time.time())
        return 500, {"error": {"message": "the server is busy"}}, {}

    server = Scripted(delay=0.3, respond=respond)
    script = tmp_path / "ask_many.py"
    script.write_text(ASK_MANY)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, str(script), server.url], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(arrived) < 8:
            assert child.poll() is None, child.stderr.read()[-3000:]  # type: ignore[union-attr]
            assert time.monotonic() < deadline, f"the server saw {len(arrived)} requests"
            time.sleep(0.05)
        interrupted = time.time()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        server.close()
    said = out.split()
    assert said[:1] == ["ready"] and said[1:2] == ["interrupted"], (out, err[-3000:])
    raised = float(said[2])
    assert raised - interrupted < 10, f"ask_many took {raised - interrupted:.1f} s to stop after Ctrl-C"
    late = [round(t - interrupted, 2) for t in arrived if t > min(raised + 0.5, interrupted + 5)]
    assert late == [], f"requests sent after Ctrl-C, seconds after it: {late}"


def test_a_request_waiting_for_the_limiter_gives_up_when_its_batch_is_abandoned():
    """A request waiting for a slot (rpm used up: a wait of most of a minute) calls `check` while it
    waits, so an abandoned batch's request gives the wait up instead of being sent when it ends."""
    import pytest

    from vectrixdb.chat.limits import Limiter
    from vectrixdb.chat.parallel import Abandoned

    limiter, stop = Limiter(4, rpm=1), threading.Event()
    with limiter.slot():
        pass  # the one request of this minute

    def check() -> None:
        if stop.is_set():
            raise Abandoned("the batch was interrupted")

    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(Abandoned):
        with limiter.slot(check=check):
            raise AssertionError("a slot was given although the minute's one request was spent")
    assert time.monotonic() - started < 30  # it waited for the check, not for the minute to pass
