"""Calibrate the judge rubrics against the hand-made judge set (data/judge_set/cases.jsonl).

    python scripts/judge_calibration.py --split held-out --until 16:05 --flip 8

Asks the model judge (vectrixdb.evaluation.generation.judges, as shipped: its rubric, prompt and schema) for
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
--group metric asks one rubric for a block of cases at a time (the server reuses the shared prompt
prefix); --reason-chars N holds the reply's reason to N characters, the score being decoded before
it (short_reasons: same score, far fewer generated tokens on a loaded CPU). The JSON is rewritten
every 10 calls while the run goes, marked partial, and the cache lets a rerun ask only the rest.
--model lexical runs a baseline with no model (lexical_judge: figures only), the bar a model
judge has to clear; a model run scores that bar on the very cases it judged and gives the kappa
difference with a paired bootstrap interval (lexical_on_the_same_cases, see against_lexical).
--asks METRIC=TEXT tries another rubric question on the dev split (refused on any other): a change is
tried there, shipped in judges.py, and only then measured on held-out. Every run records each
metric's question as asked (`asks`) and which were changed.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts._bench import machine_cpu  # noqa: E402
from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig  # noqa: E402
from vectrixdb.evaluation.generation.judges import (BEDROCK_METRICS, RUBRICS, SCORE_SCHEMA, as_judge,  # noqa: E402
                                                    messages_for, rubric)

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


def writer_for(url: str, model: str, temperature: float, cache: Path, reason_chars: int | None = None) -> ChatWriter:
    kind = ChatWriter if reason_chars is None else short_reasons(reason_chars)
    return kind(url, model=model, cache=str(cache), max_retries=1, max_concurrency=1,
                request=RequestConfig(temperature=temperature, extra_body={"repeat_penalty": 1.1}),
                limits=LimitConfig(timeout=600))


def short_reasons(chars: int) -> type:
    """A ChatWriter that asks for the judge's verdict with the reason held to `chars` characters
    (--reason-chars): the same prompt, the same schema but for the reason's maxLength. The schema
    puts score before reason and llama.cpp's grammar decodes the properties in that order, so the
    score is decoded first, from the same prompt under the same grammar, with the same repeat penalty
    over the same tokens, so it should be the full reply's score; only the reason after it is cut.
    On a CPU shared by many, the reason was ~90% of a verdict's generated tokens. Checked, not
    assumed, and not exact: on the 1.5B, 64 of 66 reason-0 scores equal the full reply's at
    temperature 0, the other 2 differ (benchmarks/judge_calibration_qwen1.5b.json, reason_cut_check)."""
    short = {**SCORE_SCHEMA, "properties": {**SCORE_SCHEMA["properties"],
                                            "reason": {"type": "string", "maxLength": chars}}}

    class ShortReasons(ChatWriter):
        def ask(self, messages, schema=None, **kw):
            return super().ask(messages, short if schema is SCORE_SCHEMA else schema, **kw)
    return ShortReasons


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

def against_lexical(rows: list[dict], cases: list[dict], metrics: list[str], resamples: int = 2000,
                    seed: int = 0) -> dict:
    """Per metric, the no-model bar (lexical_judge) on exactly the cases the model judge scored, and
    the judge's kappa minus the bar's with a paired 95% percentile bootstrap interval (each resample
    draws the same cases for both; one where either kappa is undefined is dropped and counted). The
    verdict: above the bar when the interval lies above 0, below it when under 0, else not told apart."""
    byid, lexical, rng = {c["id"]: c for c in cases}, as_judge(lexical_judge), np.random.default_rng(seed)
    out: dict[str, dict] = {}
    for m in metrics:
        scored = [r for r in rows if r["metric"] == m and r["repeat"] == 0 and r["judge"] is not None]
        bar = [lexical(m, c["question"], c["reference"], c["answer"], source_texts(c)).score
               for c in (byid[r["id"]] for r in scored)]
        pairs = [(r["human"], r["judge"], b) for r, b in zip(scored, bar) if b is not None]
        if len(pairs) < 2:
            out[m] = {"n": len(pairs), "reason": "fewer than two cases scored by both"}
            continue
        human, judge, lex = (np.array(v, dtype=float) for v in zip(*pairs))
        point = {"judge": kappas(human, judge), "lexical": kappas(human, lex)}
        diffs: dict[str, list[float]] = {"kappa": [], "weighted_kappa": []}
        for _ in range(resamples):
            pick = rng.integers(0, len(pairs), len(pairs))
            a, b = kappas(human[pick], judge[pick]), kappas(human[pick], lex[pick])
            for i, name in enumerate(diffs):
                if a[i] is not None and b[i] is not None:
                    diffs[name].append(a[i] - b[i])
        row: dict = {"n": len(pairs), "lexical_agreement": float(np.mean((human >= 0.5) == (lex >= 0.5))),
                     "judge_agreement": float(np.mean((human >= 0.5) == (judge >= 0.5)))}
        for i, name in enumerate(diffs):
            j, lx = point["judge"][i], point["lexical"][i]
            ci = [float(np.percentile(diffs[name], 2.5)), float(np.percentile(diffs[name], 97.5))] if diffs[name] else None
            row.update({f"judge_{name}": j, f"lexical_{name}": lx,
                        f"{name}_minus_lexical": None if j is None or lx is None else j - lx,
                        f"{name}_minus_lexical_ci95": ci, f"{name}_bootstrap_dropped": resamples - len(diffs[name]),
                        f"{name}_verdict": None if ci is None else "above the bar" if ci[0] > 0 else
                        "below the bar" if ci[1] < 0 else "not told apart from the bar"})
        out[m] = row
    return out


def changed(args) -> dict[str, str]:
    """--asks METRIC=TEXT, each given: {metric: its rubric's question for this run}."""
    out = {}
    for given in args.asks or []:
        metric, sep, text = given.partition("=")
        if not sep or not text.strip():
            raise SystemExit(f"--asks is METRIC=TEXT, not {given!r}")
        rubric(metric)  # an unknown metric is refused, naming the known ones
        out[metric] = text.strip()
    return out


def summary(args, metrics: list[str], cases: list[dict], rows: list[dict], flip_rows: dict, stopped: str | None,
            load_before: tuple, started: float, final: bool = True) -> dict:
    """The JSON the run publishes (also written every 10 calls while it runs, marked partial; the
    comparison with the lexical bar is made only at the end, its bootstrap being the slow part)."""
    asked = [r for r in rows if not r["cached"]]
    return {
        "what": ("a baseline with no model (lexical_judge: figures only)" if args.model == "lexical" else
                 "the shipped judge rubrics (vectrixdb.evaluation.generation.judges)" if not args.asks else
                 f"the judge rubrics with {', '.join(sorted(changed(args)))} asked as --asks gives")
                + " against hand verdicts on data/judge_set",
        "asks": {m: rubric(m).asks for m in metrics}, "asks_changed": sorted(changed(args)),
        "model": args.model, "url": args.url, "split": args.split, "metrics": metrics,
        "cases_in_split": len(load_cases(args.split)), "cases_judged": len({r["id"] for r in rows}),
        "stopped": stopped, "sampling": {"temperature": 0.0, "repeat_penalty": 1.1, "max_tokens": 200},
        "reason_chars": args.reason_chars,
        "schema": SCORE_SCHEMA, "prompt_example": messages_for(metrics[0], "<question>", "<reference>", "<answer>",
                                                                ["<source>"]),
        "per_metric": {m: metric_summary(rows, m) for m in metrics},
        "lexical_on_the_same_cases": (None if args.model == "lexical" else
                                      against_lexical(rows, cases, metrics) if final else "made when the run ends"),
        "flip": {name: flips(v) for name, v in flip_rows.items()} if args.flip else None,
        "calls": {"asked": len(asked), "cached": len(rows) - len(asked),
                  "seconds_per_call": round(float(np.mean([r["seconds"] for r in asked])), 2) if asked else None,
                  "prompt_tokens_per_call": round(float(np.mean([r["prompt_tokens"] for r in asked])), 1) if asked else None,
                  "completion_tokens_per_call": round(float(np.mean([r["completion_tokens"] for r in asked])), 1)
                  if asked else None},
        "tokens": {"prompt": int(sum(r["prompt_tokens"] for r in asked)),
                   "completion": int(sum(r["completion_tokens"] for r in asked))},
        "order": args.group if args.group == "case" else f"metric by metric in blocks of {args.block} cases",
        "seed": args.seed,
        "flip_method": (f"the first {args.flip} scored (case, metric) pairs taken round-robin over the metrics; each "
                        "asked once more at temperature 0 (the prompt marked 'Independent grading number 2', so not "
                        f"a cache hit) and twice at temperature {args.hot}; a pair flips when its scores fall on both "
                        "sides of 0.5") if args.flip else None,
        "wall_s": round(time.time() - started, 1),
        "loadavg_1min_during": ([min(r.get("load1", 0) for r in rows), max(r.get("load1", 0) for r in rows)]
                                if rows else None),
        "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
        "note": args.note or "taken under load: the machine's 2 cores were shared by ~8 engineers and one model server",
        "rows": rows, "flip_rows": flip_rows,
    }


def write(out: Path, result: dict) -> None:
    tmp = out.with_suffix(".json.tmp")
    result.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, out)


def asking_order(cases: list[dict], metrics: list[str], group: str, block: int = 20) -> list[tuple[str, dict]]:
    """(metric, case) pairs in the order they are asked. --group case: case by case, every metric per
    case (a run stopped early leaves whole cases). --group metric: blocks of --block cases; in a block
    one metric's rubric for every case, then the next metric, the cases of one question next to each
    other (questions in the shuffled order). Consecutive prompts then share their longest prefix
    (rubric, question, reference, sources), which llama.cpp's server reuses from its KV cache instead
    of reading it again, and a run stopped early still has every metric on the blocks it finished."""
    if group == "case":
        return [(m, c) for c in cases for m in metrics]
    first: dict[str, int] = {}
    for i, c in enumerate(cases):
        first.setdefault(c.get("question_id", c["id"]), i)
    ordered = sorted(cases, key=lambda c: first[c.get("question_id", c["id"])])  # stable: shuffle kept within
    blocks = [ordered[i:i + block] for i in range(0, len(ordered), max(block, 1))]
    return [(m, c) for part in blocks for m in metrics for c in part]


def spread(rows: list[dict], metrics: list[str]) -> list[dict]:
    """Rows taken round-robin over metrics (the first of each metric, then the second...), so a flip
    sample of N pairs covers every metric, not only the first one asked."""
    by_metric = [[r for r in rows if r["metric"] == m] for m in metrics]
    return [r for group in zip(*by_metric) for r in group] + [r for group in by_metric for r in group[min(map(len, by_metric)):]]


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
    parser.add_argument("--group", default="case", choices=["case", "metric"],
                        help="ask case by case (default) or metric by metric, for the server's prompt-prefix cache")
    parser.add_argument("--reason-chars", type=int, default=None,
                        help="hold the verdict's reason to this many characters (the score is decoded first: see short_reasons)")
    parser.add_argument("--block", type=int, default=20, help="--group metric: cases per block")
    parser.add_argument("--note", default=None, help="a sentence recorded in the JSON (how the run was taken)")
    parser.add_argument("--seed", type=int, default=0, help="the order cases are asked in (a fixed shuffle)")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "vectrixdb-judge"))
    parser.add_argument("--asks", action="append", default=None, metavar="METRIC=TEXT",
                        help="try another rubric question for METRIC (the dev split only, before a change ships)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    if args.asks and args.split != "dev":
        raise SystemExit("--asks tries a rubric on the dev split; publish held-out figures of a rubric as shipped")
    with asking(changed(args)):
        return run(args)


@contextlib.contextmanager
def asking(changes: dict[str, str]):
    """The rubrics with their questions changed as --asks gives, while the run lasts (messages_for
    reads judges.RUBRICS); put back after, so a caller in the same process keeps the shipped ones."""
    saved = {m: RUBRICS[m] for m in changes}
    RUBRICS.update({m: dataclasses.replace(RUBRICS[m], asks=text) for m, text in changes.items()})
    try:
        yield
    finally:
        RUBRICS.update(saved)


def run(args) -> int:
    metrics = [m for m in args.metrics.split(",") if m]
    cases = load_cases(args.split)
    order = np.random.default_rng(args.seed).permutation(len(cases))  # a stopped run still spans questions and kinds
    cases = [cases[i] for i in order][: args.limit]
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    cold = lexical_judge if args.model == "lexical" else writer_for(args.url, args.model, 0.0,
                                                                      cache / f"{args.model}-t0.sqlite", args.reason_chars)
    load_before, started = os.getloadavg(), time.time()
    rows, stopped = [], None
    flip_rows: dict[str, list[dict]] = {"temperature_0": [], f"temperature_{args.hot}": []}
    out = Path(args.out)
    for n, (metric, case) in enumerate(asking_order(cases, metrics, args.group, args.block), start=1):
        if past(args.until):  # checked before every call: a slow server cannot carry a run past it
            stopped = f"--until {args.until} reached at call {n} of {len(cases) * len(metrics)} ({case['id']}, {metric})"
            break
        rows.append({**ask(cold, metric, case), "load1": round(os.getloadavg()[0], 2)})
        r = rows[-1]
        print(f"[{n}/{len(cases) * len(metrics)}] {case['id']} {metric}: human {r['human']} judge {r['judge']} "
              f"({r['status']}, {r['seconds']}s, {r['prompt_tokens']}+{r['completion_tokens']} tok)", flush=True)
        if n % 10 == 0:  # a run that dies leaves its figures so far (and the cache, so a rerun asks only the rest)
            write(out, summary(args, metrics, cases, rows, flip_rows, stopped or "partial: still running",
                               load_before, started, final=False))
    if args.flip:
        pairs = spread([r for r in rows if r["judge"] is not None], metrics)[: args.flip]
        hot = writer_for(args.url, args.model, args.hot, cache / f"{args.model}-t{args.hot}.sqlite", args.reason_chars)
        byid = {c["id"]: c for c in cases}
        for r in pairs:
            if past(args.until):
                stopped = (stopped or "") + f"; flips stopped by --until after {len(flip_rows['temperature_0'])} pairs"
                break
            flip_rows["temperature_0"] += [r, ask(cold, r["metric"], byid[r["id"]], repeat=1)]
            flip_rows[f"temperature_{args.hot}"] += [ask(hot, r["metric"], byid[r["id"]], repeat=k) for k in (0, 1)]
            print(f"flip {r['id']} {r['metric']}: t0 {[x['judge'] for x in flip_rows['temperature_0'][-2:]]} "
                  f"hot {[x['judge'] for x in flip_rows[f'temperature_{args.hot}'][-2:]]}", flush=True)
    result = summary(args, metrics, cases, rows, flip_rows, stopped, load_before, started)
    write(out, result)
    print(json.dumps({m: {k: v for k, v in s.items() if k in ("scored", "kappa", "kappa_ci95", "weighted_kappa",
                                                            "agreement")} for m, s in result["per_metric"].items()},
                     indent=1))
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
