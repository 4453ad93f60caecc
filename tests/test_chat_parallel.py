"""Asks sent at once (ChatWriter.ask_many / map, chat.parallel) against a scripted server on loopback:
how many the server has in flight, the order of results, refusals mid-batch, the cache, the ledger;
then against the real model on llama.cpp's server with parallel slots (the `llama_server` fixture):
the slots decode several asks at once, with the replies one at a time gives."""
from __future__ import annotations

import json
import sqlite3
import threading
import urllib.request

import pytest
from pydantic import BaseModel, Field

from tests.llama_server import Scripted, completion
from vectrixdb.chat.writer import ChatWriter, RequestConfig
from vectrixdb.chat.parallel import concurrently, width
from vectrixdb.errors import Refused


class Draft(BaseModel):
    question: str
    answer: str


def asked(body: dict) -> str:
    return body["messages"][-1]["content"]


def echo(body: dict):
    """The answer names the prompt it answers, so a reply given to the wrong ask would show."""
    text = asked(body)
    return 200, completion(json.dumps({"question": f"About {text}?", "answer": text}), prompt=len(text),
                           completion=7), {}


def refuse_at(marker: str, message: str = "Incorrect API key provided."):
    def respond(body: dict):
        if asked(body) == marker:
            return 401, {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}, {}
        return echo(body)
    return respond


def items(n: int, prefix: str = "q") -> list[tuple[list[dict], type]]:
    return [([{"role": "user", "content": f"{prefix}{i}"}], Draft) for i in range(n)]


@pytest.fixture
def served():
    opened = []

    def start(**options) -> Scripted:
        server = Scripted(**options)
        opened.append(server)
        return server
    yield start
    for server in opened:
        server.close()


def writer(server, **options) -> ChatWriter:
    return ChatWriter(server.url, model="m", **{"max_retries": 0, "request": RequestConfig(response_format="json_schema"),
                                                **options})


def test_a_batch_reaches_max_concurrency_never_more_and_keeps_input_order(served):
    server = served(respond=echo, hold_until=3, hold_for=20, delay=0.02)
    w = writer(server, max_concurrency=3)
    outcomes = w.ask_many(items(10))
    assert server.most_at_once == 3  # the server held the first requests until three were in flight at once
    assert [o.value.answer for o in outcomes] == [f"q{i}" for i in range(10)]
    assert sorted(asked(r["json"]) for r in server.requests) == sorted(f"q{i}" for i in range(10))
    totals = w.totals()
    assert (totals["asks"], totals["requests"], totals["answers"], totals["cached"]) == (10, 10, 10, 0)
    assert totals["prompt_tokens"] == sum(len(f"q{i}") for i in range(10)) and totals["completion_tokens"] == 70


def test_map_runs_work_that_asks_twice_per_item_in_order(served):
    server = served(respond=echo, hold_until=2, hold_for=20)
    w = writer(server, max_concurrency=2)

    def two(i: int) -> tuple[str, str]:  # an answer, then a verdict on it, as compare_chunking does
        first = w.ask(f"a{i}", Draft)
        return first.value.answer, w.ask(f"v{first.value.answer}", Draft).value.answer
    assert w.map(two, range(6)) == [(f"a{i}", f"va{i}") for i in range(6)]
    assert server.most_at_once == 2 and len(server.requests) == 12


def test_a_refusal_mid_batch_stops_it_and_says_what_the_service_said(served, tmp_path):
    server = served(respond=refuse_at("q4"), hold_until=2, hold_for=20,
                    delay=lambda body: 0.0 if asked(body) == "q4" else 0.3)  # the refusal comes back first
    w = writer(server, max_concurrency=2, cache=tmp_path / "answers.db")
    with pytest.raises(Refused) as caught:
        w.ask_many(items(12))
    assert caught.value.said.startswith("Incorrect API key provided.") and caught.value.status == 401
    sent = [asked(r["json"]) for r in server.requests]
    assert {f"q{i}" for i in range(5)} <= set(sent)  # everything before the refusal was asked, as serially
    assert len(sent) <= 6  # then nothing new started: at most the one beside it in flight
    answered = len(sent) - 1
    assert len(w.cache) == answered  # the answers that came back are kept; the refusal is not
    totals = w.totals()
    assert totals["requests"] == len(sent) and totals["statuses"] == {"ok": answered, "refused": 1}


def test_cached_answers_are_not_sent_again_and_one_prompt_twice_is_asked_once(served, tmp_path):
    server = served(respond=echo)
    path = tmp_path / "answers.db"
    writer(server, max_concurrency=1, cache=path).ask_many(items(3))
    assert len(server.requests) == 3
    batch = items(6) + items(6)  # q0..q2 are cached; q3..q5 are each asked twice in the batch
    w = writer(server, max_concurrency=4, cache=path)
    outcomes = w.ask_many(batch)
    assert [o.value.answer for o in outcomes] == [f"q{i}" for i in range(6)] * 2
    assert sorted(asked(r["json"]) for r in server.requests[3:]) == ["q3", "q4", "q5"]
    totals = w.totals()
    assert (totals["asks"], totals["cached"], totals["requests"], totals["answers"]) == (12, 9, 3, 3)
    assert len(w.cache) == 6


def rows(path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, status, raw, model, prompt_tokens, completion_tokens FROM answers "
                          "ORDER BY key").fetchall()


def test_serial_and_concurrent_runs_give_the_same_outcomes_cache_and_ledger(served, tmp_path):
    batch = items(9) + items(2, prefix="z")
    runs, server = {}, served(respond=echo, hold_for=20)  # one server: one route, so the same cache keys
    for concurrency in (1, 4):
        server.hold_until, server.most_at_once = concurrency, 0
        w = writer(server, max_concurrency=concurrency, cache=tmp_path / f"c{concurrency}.db")
        outcomes = w.ask_many(batch)
        totals = {k: v for k, v in w.totals().items() if k != "seconds"}
        runs[concurrency] = ([(o.status, o.value, o.raw, o.calls, o.answers) for o in outcomes], totals,
                             rows(tmp_path / f"c{concurrency}.db"), server.most_at_once)
    assert runs[1][:3] == runs[4][:3]
    assert (runs[1][3], runs[4][3]) == (1, 4)


def test_a_batch_probes_the_response_format_once_as_a_serial_run_does(served):
    def llama_cpp(body: dict):
        if body["response_format"]["type"] == "json_schema":
            return 500, {"error": {"message": "1 validation error: response_format.type Input should be 'text' or "
                                              "'json_object', input: 'json_schema'"}}, {}
        return echo(body)
    server = served(respond=llama_cpp)
    w = ChatWriter(server.url, model="m", max_retries=0, max_concurrency=4)
    outcomes = w.ask_many(items(8))
    assert [o.value.answer for o in outcomes] == [f"q{i}" for i in range(8)]
    assert w.response_format == "json_object"
    assert len(server.requests) == 9 == w.totals()["requests"]  # one rejected probe, then eight answers
    assert [r["json"]["response_format"]["type"] for r in server.requests].count("json_schema") == 1


def test_plain_functions_are_called_one_at_a_time_in_order():
    seen, inside, most = [], [0], [0]
    lock = threading.Lock()

    def judge(i: int) -> int:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        seen.append(i)
        with lock:
            inside[0] -= 1
        return i * i
    assert width(judge) == 1 and width(None) == 1
    assert concurrently(judge, range(5), workers=width(judge)) == [0, 1, 4, 9, 16]
    assert seen == [0, 1, 2, 3, 4] and most[0] == 1
    assert concurrently(judge, [], workers=4) == []


def test_width_is_the_largest_writer_limit_and_1_beside_a_function(served):
    server = served(respond=echo)
    two, five = writer(server, max_concurrency=2), writer(server, max_concurrency=5)
    assert width(two) == 2 and width(two, five) == 5 and width(two, lambda *a: 1) == 1


def test_the_first_failure_in_input_order_is_raised_and_later_items_do_not_start():
    started, gate = [], threading.Event()

    def work(i: int) -> int:
        started.append(i)
        if i == 1:
            gate.wait(5)  # item 3 fails first in time; item 1 fails after it
            raise KeyError("one")
        if i == 3:
            gate.set()
            raise ValueError("three")
        return i
    with pytest.raises(KeyError):
        concurrently(work, range(40), workers=4)
    assert {0, 1, 2, 3} <= set(started) and len(started) < 40


# -- the call sites -----------------------------------------------------------------------------

def test_judge_items_asks_every_verdict_at_once_and_keeps_each_in_its_row(served):
    from vectrixdb.evaluation.generation.answers import judge_items

    def grade(body: dict):  # the score depends only on the answer graded, whatever the order
        score = 1.0 if "GOOD-ANSWER" in asked(body) else 0.0
        return 200, completion(json.dumps({"score": score, "reason": "as the reference says"})), {}
    server = served(respond=grade, hold_until=3, hold_for=20)
    answers = [{"key": str(i), "question": f"Question {i}?", "reference": "The reference.", "sources": ["A source."],
                "answer": "GOOD-ANSWER" if i % 2 else "BAD-ANSWER"} for i in range(4)]
    rows = judge_items(writer(server, max_concurrency=3), answers, ["correctness", "faithfulness"], repeats=2)
    assert [r["id"] for r in rows] == ["0", "1", "2", "3"]
    assert [(r["correctness"], r["faithfulness"]) for r in rows] == [(0.0, 0.0), (1.0, 1.0)] * 2
    assert server.most_at_once == 3 and len(server.requests) == 16  # 4 answers x 2 metrics x 2 repeats


def test_slots_choose_at_once_only_when_no_two_can_score_the_same_passage():
    from types import SimpleNamespace

    from vectrixdb.evaluation.writing.write import apart
    from vectrixdb.evaluation.writing.passages import Slot

    def slot(ids: str, section: int) -> Slot:
        return Slot(0, [SimpleNamespace(chunk_id=i) for i in ids], section)
    assert apart([slot("abcxyz", 6), slot("defabc", 6)], tries=3)  # first three of each section: abc, def
    assert not apart([slot("abcxyz", 6), slot("cdefab", 6)], tries=3)  # c could be scored by both
    assert not apart([slot("aab", 3)], tries=3)  # a passage twice: the slot would score past its first three
    assert apart([slot("ab", 2), slot("ba", 0)], tries=3)  # the second slot has no section of its own to score
    assert apart([], tries=3)


class Fact(BaseModel):
    fact: str = Field(max_length=200)


class BusySlots(threading.Thread):
    """Reads the server's GET /slots every 20 ms until stopped; `most` is the largest number of slots
    it saw decoding at the same moment."""

    def __init__(self, base: str):
        super().__init__(daemon=True)
        self.url, self.most, self.done = base.rsplit("/v1", 1)[0] + "/slots", 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            with urllib.request.urlopen(self.url, timeout=5) as reply:
                busy = sum(bool(slot["is_processing"]) for slot in json.loads(reply.read()))
            self.most = max(self.most, busy)


@pytest.mark.slow
def test_the_real_model_decodes_asks_at_once_in_its_slots_and_each_reply_stays_with_its_ask(llama_server):
    """Four asks through ask_many reach four slots of llama.cpp's server at once (its /slots shows
    more than one decoding together, where one at a time never does), and every reply comes back to
    its own ask: the four prompts are of different token lengths, and each outcome carries the prompt
    token count the server read for it, in input order, as the same asks one at a time do.

    Replies are not compared word for word: continuous batching puts a slot's step in a batch with
    the other slots' steps, and a batch of another size can round differently, so greedy replies at
    temperature 0 may differ from those given alone (measured: benchmarks/parallel_local_smollm2.json)."""
    subjects = ["revenue", "an auditor's opinion", "a ride-share driver's weekly pay", "a share buyback programme "
                "announced by a board of directors after a strong year"]
    batch = [([{"role": "system", "content": "You answer in JSON."},
               {"role": "user", "content": f"In one sentence, what is {subject}?"}], Fact) for subject in subjects]
    request = RequestConfig(temperature=0.0, max_tokens=48, extra_body={"repeat_penalty": 1.3})
    runs = {}
    for concurrency in (4, 1):
        w = ChatWriter(f"{llama_server}/chat/completions", model="smollm2", max_concurrency=concurrency,
                       request=request)
        watch = BusySlots(llama_server)
        watch.start()
        try:
            outcomes = w.ask_many(batch)
        finally:
            watch.done.set()
            watch.join(10)
        runs[concurrency] = ([o.prompt_tokens for o in outcomes], [o.status for o in outcomes], watch.most)
    tokens, statuses, most = runs[4]
    assert most >= 2 and runs[1][2] == 1  # several slots decoding together, then one at a time
    assert tokens == runs[1][0] and len(set(tokens)) == 4 and tokens == sorted(tokens)  # each in its own place
    assert all(status in ("ok", "truncated", "parse_failed") for status in statuses), statuses
