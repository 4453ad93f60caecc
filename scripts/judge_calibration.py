"""Calibrate the judge rubrics against the hand-made judge set (data/judge_set/cases.jsonl).

    python scripts/judge_calibration.py --split held-out --until 16:05 --flip 8

Asks the model judge (vectrixdb.evaluation.judges, as shipped: its rubric, prompt and schema) for
each case of one split in a fixed shuffled order (--seed), case by case and all four Bedrock
metrics per case, so a run stopped by --until or --limit leaves whole cases spread over the
split's questions and kinds. Every reply is cached (a rerun asks only what is missing).
Then, per metric, on the cases the judge scored:

- Cohen's kappa on pass/fail at 0.5 and quadratic-weighted kappa on the five-point scale (the
  judge's score rounded to the nearest 0.25), both scikit-learn's cohen_kappa_score, each with a
  95% percentile bootstrap interval over cases (2,000 resamples; a resample where kappa is
  undefined, one rater constant, is dropped and counted);
- the agreement share and the judge's outcomes (ok, parse_failed, ...).

--flip N re-asks the first N scored (case, metric) pairs: once more at temperature 0 (the library's
repeat, which marks the prompt "Independent grading number 2", so it is a fresh sample of the same
judgement) and twice at --hot (default 0.8); the flip rate is the share of pairs whose scores fall
on both sides of 0.5. The JSON records the load average before and after: the machine is shared.
--model lexical runs a baseline with no model (lexical_judge: figures only), the bar a model
judge has to clear.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vectrixdb.chat import ChatWriter, LimitConfig, RequestConfig  # noqa: E402
from vectrixdb.evaluation.judges import BEDROCK_METRICS, SCORE_SCHEMA, as_judge, messages_for  # noqa: E402

CASES = ROOT / "data" / "judge_set" / "cases.jsonl"
OUT = ROOT / "benchmarks" / "judge_calibration.json"


def _numbers(text: str) -> set[str]:
    import re
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def lexical_judge(metric: str, question: str, reference: str | None, answer: str, sources: list) -> float:
    """A baseline with no model, for a model judge to beat: it compares the figures (numbers) only.
    completeness/helpfulness: the share of the reference's figures the answer gives; correctness:
    that share, 0 when the answer gives a figure found in neither reference nor sources;
    faithfulness: the share of the answer's figures found in the sources (1 when it gives none)."""
    said, ref = _numbers(answer), _numbers(reference or "")
    seen = set().union(*(_numbers(str(s)) for s in sources)) if sources else set()
    recall = len(said & ref) / len(ref) if ref else 1.0
    if metric == "faithfulness":
        return len(said & seen) / len(said) if said else 1.0
    if metric == "correctness":
        return 0.0 if said - ref - seen else recall
    return recall


def load_cases(split: str) -> list[dict]:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    return [c for c in cases if split == "all" or c["split"] == split]


def source_texts(case: dict) -> list[str]:
    """What the judge reads as sources: where each passage is from, then its text."""
    return [f"{s['document']} page {s['page']}:\n{s['text']}" for s in case["sources"]]


def writer_for(url: str, model: str, temperature: float, cache: Path) -> ChatWriter:
    return ChatWriter(url, model=model, cache=str(cache), max_retries=1, max_concurrency=1,
                      request=RequestConfig(temperature=temperature, extra_body={"repeat_penalty": 1.1}),
                      limits=LimitConfig(timeout=600))


def ask(writer: ChatWriter, metric: str, case: dict, repeat: int = 0) -> dict:
    totals = writer.totals if hasattr(writer, "totals") else dict
    before, started = totals(), time.perf_counter()
    verdict = as_judge(writer)(metric, case["question"], case["reference"], case["answer"], source_texts(case),
                               repeat=repeat)
    after = totals()
    return {"id": case["id"], "kind": case["kind"], "metric": metric, "repeat": repeat, "human": case["human"][metric],
            "judge": verdict.score, "status": verdict.status, "reason": verdict.reason,
            "seconds": round(time.perf_counter() - started, 2),
            "prompt_tokens": after.get("prompt_tokens", 0) - before.get("prompt_tokens", 0),
            "completion_tokens": after.get("completion_tokens", 0) - before.get("completion_tokens", 0),
            "cached": bool(after) and after.get("requests", 0) == before.get("requests", 0)}


def kappas(human: np.ndarray, judge: np.ndarray) -> tuple[float | None, float | None]:
    from sklearn.metrics import cohen_kappa_score

    def safe(a, b, **kw):
        if len(set(a)) < 2 and len(set(b)) < 2:
            return None
        value = cohen_kappa_score(a, b, **kw)
        return None if np.isnan(value) else float(value)
    return (safe(human >= 0.5, judge >= 0.5),
            safe(np.rint(human * 4).astype(int), np.rint(judge * 4).astype(int), weights="quadratic", labels=range(5)))


def metric_summary(rows: list[dict], metric: str, resamples: int = 2000, seed: int = 0) -> dict:
    mine = [r for r in rows if r["metric"] == metric and r["repeat"] == 0]
    scored = [r for r in mine if r["judge"] is not None]
    outcomes: dict[str, int] = {}
    for r in mine:
        outcomes[r["status"]] = outcomes.get(r["status"], 0) + 1
    out = {"cases": len(mine), "scored": len(scored), "outcomes": outcomes}
    if len(scored) < 2:
        return {**out, "kappa": None, "weighted_kappa": None, "reason": "fewer than two scored cases"}
    h = np.array([r["human"] for r in scored]), np.array([r["judge"] for r in scored])
    kappa, weighted = kappas(*h)
    rng = np.random.default_rng(seed)
    boot: dict[str, list[float]] = {"kappa": [], "weighted_kappa": []}
    for _ in range(resamples):
        pick = rng.integers(0, len(scored), len(scored))
        k, w = kappas(h[0][pick], h[1][pick])
        for name, value in (("kappa", k), ("weighted_kappa", w)):
            if value is not None:
                boot[name].append(value)
    interval = {name: ([float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if v else None)
                for name, v in boot.items()}
    return {**out, "kappa": kappa, "kappa_ci95": interval["kappa"], "weighted_kappa": weighted,
            "weighted_kappa_ci95": interval["weighted_kappa"],
            "bootstrap_dropped": {name: resamples - len(v) for name, v in boot.items()},
            "agreement": float(np.mean((h[0] >= 0.5) == (h[1] >= 0.5))),
            "judge_mean": float(h[1].mean()), "human_mean": float(h[0].mean()),
            "by_kind": _by_kind(scored)}


def _by_kind(scored: list[dict]) -> dict:
    kinds: dict[str, dict] = {}
    for r in scored:
        k = kinds.setdefault(r["kind"], {"n": 0, "human": 0.0, "judge": 0.0})
        k["n"] += 1
        k["human"] += r["human"]
        k["judge"] += r["judge"]
    return {name: {"n": k["n"], "human_mean": round(k["human"] / k["n"], 3), "judge_mean": round(k["judge"] / k["n"], 3)}
            for name, k in sorted(kinds.items())}


def flips(rows: list[dict]) -> dict:
    by_pair: dict[tuple, list[float]] = {}
    for r in rows:
        if r["judge"] is not None:
            by_pair.setdefault((r["id"], r["metric"]), []).append(r["judge"])
    multi = [v for v in by_pair.values() if len(v) > 1]
    flipped = [len({s >= 0.5 for s in v}) > 1 for v in multi]
    return {"pairs": len(multi), "flip_rate": float(np.mean(flipped)) if multi else None,
            "mean_spread": float(np.mean([np.std(v) for v in multi])) if multi else None}


def past(until: str | None) -> bool:
    if not until:
        return False
    hour, minute = map(int, until.split(":"))
    now = datetime.now(timezone.utc)
    return (now.hour, now.minute) >= (hour, minute)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8090/v1/chat/completions")
    parser.add_argument("--model", default="qwen1.5b", help="the served model's name, or lexical (no model)")
    parser.add_argument("--split", default="held-out", choices=["dev", "held-out", "all"])
    parser.add_argument("--metrics", default=",".join(BEDROCK_METRICS))
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases")
    parser.add_argument("--until", default=None, help="HH:MM UTC: ask nothing new after it")
    parser.add_argument("--flip", type=int, default=0, help="re-ask this many scored (case, metric) pairs")
    parser.add_argument("--hot", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0, help="the order cases are asked in (a fixed shuffle)")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "vectrixdb-judge"))
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    metrics = [m for m in args.metrics.split(",") if m]
    cases = load_cases(args.split)
    order = np.random.default_rng(args.seed).permutation(len(cases))  # a stopped run still spans questions and kinds
    cases = [cases[i] for i in order][: args.limit]
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    cold = lexical_judge if args.model == "lexical" else writer_for(args.url, args.model, 0.0,
                                                                      cache / f"{args.model}-t0.sqlite")
    load_before, started = os.getloadavg(), time.time()
    rows, stopped = [], None
    for n, case in enumerate(cases, start=1):
        for metric in metrics:
            if past(args.until):  # checked before every call: a slow server cannot carry a run past it
                stopped = f"--until {args.until} reached at case {n} of {len(cases)} ({case['id']}), before {metric}"
                break
            rows.append(ask(cold, metric, case))
            r = rows[-1]
            print(f"[{n}/{len(cases)}] {case['id']} {metric}: human {r['human']} judge {r['judge']} ({r['status']}, "
                  f"{r['seconds']}s, {r['prompt_tokens']}+{r['completion_tokens']} tok)", flush=True)
        if stopped:
            break
    flip_rows: dict[str, list[dict]] = {"temperature_0": [], f"temperature_{args.hot}": []}
    if args.flip:
        pairs = [r for r in rows if r["judge"] is not None][: args.flip]
        hot = writer_for(args.url, args.model, args.hot, cache / f"{args.model}-t{args.hot}.sqlite")
        byid = {c["id"]: c for c in cases}
        for r in pairs:
            if past(args.until):
                stopped = (stopped or "") + f"; flips stopped by --until after {len(flip_rows['temperature_0'])} pairs"
                break
            flip_rows["temperature_0"] += [r, ask(cold, r["metric"], byid[r["id"]], repeat=1)]
            flip_rows[f"temperature_{args.hot}"] += [ask(hot, r["metric"], byid[r["id"]], repeat=k) for k in (0, 1)]
            print(f"flip {r['id']} {r['metric']}: t0 {[x['judge'] for x in flip_rows['temperature_0'][-2:]]} "
                  f"hot {[x['judge'] for x in flip_rows[f'temperature_{args.hot}'][-2:]]}", flush=True)
    asked = [r for r in rows if not r["cached"]]
    result = {
        "what": ("a baseline with no model (lexical_judge: figures only)" if args.model == "lexical" else
                 "the shipped judge rubrics (vectrixdb.evaluation.judges)") + " against hand verdicts on data/judge_set",
        "model": args.model, "url": args.url, "split": args.split, "metrics": metrics,
        "cases_in_split": len(load_cases(args.split)), "cases_judged": len({r["id"] for r in rows}),
        "stopped": stopped, "sampling": {"temperature": 0.0, "repeat_penalty": 1.1, "max_tokens": 200},
        "schema": SCORE_SCHEMA, "prompt_example": messages_for(metrics[0], "<question>", "<reference>", "<answer>",
                                                                ["<source>"]),
        "per_metric": {m: metric_summary(rows, m) for m in metrics},
        "flip": {name: flips(v) for name, v in flip_rows.items()} if args.flip else None,
        "calls": {"asked": len(asked), "cached": len(rows) - len(asked),
                  "seconds_per_call": round(float(np.mean([r["seconds"] for r in asked])), 2) if asked else None,
                  "prompt_tokens_per_call": round(float(np.mean([r["prompt_tokens"] for r in asked])), 1) if asked else None,
                  "completion_tokens_per_call": round(float(np.mean([r["completion_tokens"] for r in asked])), 1)
                  if asked else None},
        "wall_s": round(time.time() - started, 1),
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "note": "taken under load: the machine's 2 cores were shared by ~8 engineers and one model server",
        "rows": rows, "flip_rows": flip_rows,
    }
    out = Path(args.out)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    print(json.dumps({m: {k: v for k, v in s.items() if k in ("scored", "kappa", "kappa_ci95", "weighted_kappa",
                                                            "agreement")} for m, s in result["per_metric"].items()},
                     indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
