"""write_golden's passage critic on 16 hand-labelled passages of uber_2021.pdf: do its four scores
tell a passage worth drafting a question from from boilerplate? The prompt as shipped
(prompts.passage_critic: each score in steps of 0.1, the schema an enum of the tenths) against a
version that gives each score its two ends (ANCHORED, as the question critic's prompt does), tried
and not shipped (with Qwen2.5-Coder-1.5B on llama-cpp-python's server it ranked worse), and against
the prompt and schema before (any number from 0 to 1, which llama.cpp's grammar does not bound).

usage: python scripts/passage_critic_bench.py --url http://127.0.0.1:8090/v1 --model qwen1.5b
       [--out benchmarks/passage_critic_qwen1.5b.json]

The passages are data/passage_critic/uber_2021.jsonl: 16 chunks of the default chunking of
uber_2021.pdf, labelled by hand, 8 good material (a fact a person would ask about: the Transplace
acquisition, Proposition 22, the credit facility's amount and maturity, ...) and 8 poor (cover-page
check boxes, the contents, the forward-looking-statements list, the auditor's standard wording,
signatures, Part III pointers to the proxy statement, balance-sheet labels without their figures);
each row says why. Each is scored once under each prompt and schema: json_object with the schema,
repeat_penalty 1.3, temperature 0, the run's max_tokens (write.SCORE_TOKENS). Figures: the four
scores per passage; AUC (sklearn) of their mean, the number write_golden ranks passages by, and of
each score alone; how many of each side reach PassageConfig.critic_threshold (0.7, where a slot
stops looking); how many passages got the very same four scores. A small dev set with no held-out
half: it shows what the prompt changes, not how far a critic can be trusted.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import versions, write_prompts  # noqa: E402

PASSAGES = ROOT / "data" / "passage_critic" / "uber_2021.jsonl"
MEASURES = ("clarity", "depth", "structure", "relevance")
ANCHORED = ("You judge whether a passage is good material for a question a person would ask about the "
            "documents. Score each from 0 to 1. clarity: 1 when it reads as plain sentences, 0 when it is "
            "fragments, bare labels or a list of headings. depth: 1 when it states specific facts (names, "
            "figures, dates, events, decisions), 0 when it states none a person would ask about. structure: 1 "
            "when it keeps to one topic in order, 0 when it jumps between unrelated pieces. relevance: 1 when "
            "it is about the documents' own subject (its business, work, results, events or findings); 0 when "
            "it is boilerplate: a legal or regulatory notice, check-box form items, a warning about "
            "forward-looking statements, a table of contents, signatures, or a pointer to another document. "
            "Give a value between only when unsure. ")


def auc(labels: list[bool], values: list[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, values)) if len(set(labels)) == 2 else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="qwen1.5b")
    parser.add_argument("--passages", default=str(PASSAGES))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "passage_critic_qwen1.5b.json"))
    args = parser.parse_args()
    from vectrixdb.chat.prompt import DATA_NOTE
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig
    from vectrixdb.evaluation.writing import prompts
    from vectrixdb.evaluation.writing.config import PassageConfig
    from vectrixdb.evaluation.writing.passages import Passage
    from vectrixdb.evaluation.writing.write import SCORE_TOKENS

    cases = [json.loads(line) for line in Path(args.passages).read_text().splitlines() if line.strip()]
    url = args.url.rstrip("/")
    writer = ChatWriter(url if url.endswith("/chat/completions") else f"{url}/chat/completions", model=args.model,
                        max_retries=1, limits=LimitConfig(timeout=600),
                        request=RequestConfig(response_format="json_object", extra_body={"repeat_penalty": 1.3}))

    def anchored(p, scenario, task):
        messages = prompts.passage_critic(p, scenario, task)
        messages[0]["content"] = ANCHORED + "Reply with JSON only. " + DATA_NOTE
        return messages

    bar = PassageConfig().critic_threshold
    out = {"what": " ".join(__doc__.split("\n\n")[0].split()), "model": f"{args.model} at {args.url}",
           "passages": str(Path(args.passages).relative_to(ROOT)) if Path(args.passages).is_relative_to(ROOT) else args.passages,
           "versions": versions("openai", "xllamacpp"), "bar": bar, "prompts": {},
           "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    def before(p, scenario, task):
        messages = prompts.passage_critic(p, scenario, task)
        messages[0]["content"] = messages[0]["content"].replace(" in steps of 0.1", "")
        return messages

    numbers = {**prompts.PASSAGE_SCORES, "properties": {m: prompts.UNIT for m in MEASURES}}
    shapes = {"as shipped": (prompts.passage_critic, prompts.PASSAGE_SCORES),
              "anchored, tried": (anchored, prompts.PASSAGE_SCORES),
              "any number from 0 to 1, before": (before, numbers)}
    for name, (prompt, schema) in shapes.items():
        rows, started = [], time.perf_counter()
        for case in cases:
            pages = tuple(case["pages"])
            passage = Passage(0, case["chunk_id"], "uber_2021.pdf", case["text"], pages, (), ((pages[0], case["text"]),))
            got = writer.ask(prompt(passage, None, None), schema, max_tokens=SCORE_TOKENS)
            scores = got.value if got.ok else None
            rows.append({"chunk_id": case["chunk_id"], "good": case["good"], "why": case["why"], "ok": got.ok,
                         "scores": scores, "mean": sum(scores[m] for m in MEASURES) / 4 if scores else None,
                         "reason": None if got.ok else got.reason})
            print(json.dumps(rows[-1])[:200], flush=True)
        scored = [r for r in rows if r["ok"]]
        labels = [r["good"] for r in scored]
        out["prompts"][name] = {
            "mean_auc": auc(labels, [r["mean"] for r in scored]),
            "auc_per_score": {m: auc(labels, [r["scores"][m] for r in scored]) for m in MEASURES},
            "reach_the_bar": {"good": sum(r["mean"] >= bar for r in scored if r["good"]),
                              "poor": sum(r["mean"] >= bar for r in scored if not r["good"]),
                              "of_each": sum(c["good"] for c in cases)},
            "same_four_scores": max(Counter(tuple(r["scores"][m] for m in MEASURES) for r in scored).values(), default=0),
            "unreadable": len(rows) - len(scored), "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    write_prompts(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
