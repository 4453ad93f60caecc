"""write_golden's question critic on 16 hand-labelled questions about uber_2021.pdf: does its
standing_alone score tell a question that stands alone from one that points at what the asker
cannot see? The prompt as shipped (prompts.question_critic) against the one before it, whose
system text is kept here word for word as BEFORE.

usage: python scripts/question_critic_bench.py --url http://127.0.0.1:8090/v1 --model qwen1.5b
       --collections DIR [--home DIR] [--out benchmarks/question_critic_qwen1.5b.json]

The 16 questions (ALONE, NOT_ALONE) were written by hand for this check: 8 that stand alone (three
of data/golden/uber_2021.jsonl's and five drafted by the 1.5B that name what they ask) and 8 that do
not (the passage, a table, a sentence, a column, or a bare "it" / "they"). Each is scored with the
collection's best chunk for its answer as the passage, the same for both prompts, and the first 300
characters of it as the evidence; answers are json_object with the schema, repeat_penalty 1.3,
temperature 0. Figures: standing_alone per question, its AUC for the labels (sklearn), how many of
each side pass the bar (CriticConfig.standing_at, 0.6), and which of the 8 the code's points_at
sends back before a critic is asked. A small dev set, no held-out half: it shows what the anchors
change, not how far a critic can be trusted.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import pdf_reader, versions, write_prompts  # noqa: E402

ALONE = [
    ("How many employees did Uber have at the end of 2021?", "Approximately 29,300 employees."),
    ("Which freight company did Uber buy in 2021 to grow Uber Freight?", "Tupelo Parent, Inc. (Transplace)."),
    ("What did California voters approve in November 2020 about drivers on platforms?", "Proposition 22."),
    ("What was the total current assets of Uber as of December 31, 2021?", "$9,852 million"),
    ("What is the total amount of cash payments made by Toyota to Apparate under the ATG Collaboration Agreement?",
     "$300 million"),
    ("Where are Uber's principal executive offices?", "1515 3rd Street, San Francisco, California"),
    ("What was Uber's total revenue for 2021?", "$17,455 million"),
    ("When does Uber's revolving credit facility mature?", "June 13, 2023"),
]
NOT_ALONE = [
    ("What does the passage state about intellectual property?", "It is essential to the business."),
    ("What was the figure in the table above for 2021?", "$9,852 million"),
    ("How much did it grow compared with the prior year?", "57%"),
    ("What does this section say about drivers?", "They are independent contractors."),
    ("What is the total in the second column?", "$17,455"),
    ("When did they complete the acquisition?", "November 2021"),
    ("According to sentence 4, what is the amount?", "$300 million"),
    ("What does the text above say the company expects next year?", "Continued losses."),
]
BEFORE = ("You judge one drafted question. Score each from 0 to 1: standing_alone (it makes sense to someone "
          "who has not read the passages), clarity (it is clear what is asked), answered (the evidence "
          "really gives the stated answer). Add one sentence of feedback. Reply with JSON only. ")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", default="qwen1.5b")
    parser.add_argument("--collections", required=True, help="a folder holding the collection 'uber' (uber_2021.pdf)")
    parser.add_argument("--home", default=None)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "question_critic_qwen1.5b.json"))
    args = parser.parse_args()
    if args.home:
        os.environ["VECTRIXDB_HOME"] = args.home
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sklearn.metrics import roc_auc_score

    from vectrixdb import Vectrix
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig
    from vectrixdb.evaluation.writing import prompts
    from vectrixdb.evaluation.writing.checks import points_at
    from vectrixdb.evaluation.writing.config import CriticConfig
    from vectrixdb.evaluation.writing.passages import Passage

    db = Vectrix("uber", path=args.collections)
    url = args.url.rstrip("/")
    writer = ChatWriter(url if url.endswith("/chat/completions") else f"{url}/chat/completions", model=args.model,
                        max_retries=1,
                        limits=LimitConfig(timeout=600),
                        request=RequestConfig(response_format="json_object", extra_body={"repeat_penalty": 1.3}))

    def before(question, answer, kind, passages, evidence=()):
        messages = prompts.question_critic(question, answer, kind, passages, evidence)
        messages[0]["content"] = BEFORE + prompts.DATA_NOTE
        return messages

    bar = CriticConfig().standing_at
    out = {"what": __doc__.split("\n\n")[0].replace("\n", " "), "model": f"{args.model} at {args.url}",
           "versions": versions("openai", "xllamacpp"), "pdf_reader": pdf_reader(), "bar": bar,
           "load_average_before": [round(x, 2) for x in os.getloadavg()], "prompts": {}}
    for name, prompt in (("before", before), ("as shipped", prompts.question_critic)):
        rows, started = [], time.perf_counter()
        for label, cases in ((1, ALONE), (0, NOT_ALONE)):
            for question, answer in cases:
                hit = db.search(f"{answer} {question}", 1, mode="dense")[0]
                text = hit.text[:1000]
                passage = Passage(0, hit.chunk_id, hit.doc_id, text, (hit.pages[0],), (), ((hit.pages[0], text),))
                got = writer.ask(prompt(question, answer, "fact", [passage], [text[:300]]), prompts.QUESTION_SCORES,
                                 max_tokens=120)
                rows.append({"stands_alone": bool(label), "question": question, "ok": got.ok,
                             "scores": got.value if got.ok else None, "reason": None if got.ok else got.reason,
                             "points_at": points_at(question)})
                print(json.dumps(rows[-1])[:200], flush=True)
        scored = [r for r in rows if r["ok"]]
        labels, values = [r["stands_alone"] for r in scored], [r["scores"]["standing_alone"] for r in scored]
        out["prompts"][name] = {
            "standing_alone_auc": roc_auc_score(labels, values) if len(set(labels)) == 2 else None,
            "pass_the_bar": {"stand_alone": sum(v >= bar for v, y in zip(values, labels) if y),
                             "do_not": sum(v >= bar for v, y in zip(values, labels) if not y), "of_each": 8},
            "unreadable": len(rows) - len(scored), "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    out["points_at_sends_back"] = {"do_not": sum(bool(points_at(q)) for q, _ in NOT_ALONE),
                                   "stand_alone": sum(bool(points_at(q)) for q, _ in ALONE), "of_each": 8}
    out["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    write_prompts(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
