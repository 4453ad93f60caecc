"""write_golden on uber_2021.pdf with a local model, and the audit of its drafts against the 40
hand-written questions in data/golden/uber_2021.jsonl.

usage: python scripts/write_golden_bench.py ../shared/data/pdfs [-n 12] [--out benchmarks/write_golden_uber.json]
       [--url http://127.0.0.1:8090/v1 --model qwen1.5b] [--max-chars 1000] [--replacements 0]
       [--repeat-penalty 1.3] [--tries 3] [--evolve 1] [--collections DIR] [--home DIR] [--cache FILE]

The model is the one served at --url (the shared Qwen2.5-Coder-1.5B-Instruct Q4 on llama.cpp's
OpenAI-compatible server), or without --url SmolLM2-135M-Instruct started here as the tests start it. Answers are json_object with the schema (llama.cpp's grammar),
temperature 0, repeat_penalty 1.3. Passages are cut to --max-chars characters so a two-place prompt
fits, and a slot whose question is set aside is given --replacements more passages. The answer cache
starts empty unless --cache names one, so every call is made and counted; the same run is then
repeated from the cache to show that it asks again only what failed (a reply that did not parse
is not cached) and writes the same rows. Figures: calls, tokens and seconds per kept
question, the drafts sent back by reason, and audit_golden's figures side by side. A full run is
the whole --out file (an existing file's `runs` are kept); --probe N measures the drafting step
alone and writes `runs[label]` beside whatever the file holds. The load average is recorded: on a shared machine the seconds are under that load.
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
from _bench import machine_cpu, pdf_reader, versions  # noqa: E402

GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"


def audit_part(db, drafts: str | None, scratch: Path) -> dict:
    """audit_golden's figures for the drafts beside the hand-written set; the hand-written set alone
    (drafted: None) when no draft was kept, so the comparison's other side is still on record. The
    hand-written questions audited are those whose expected pages the collection holds (all 40 on
    the whole report; the small mode's first pages hold a few), named in the result."""
    from vectrixdb.evaluation.writing.audit import audit_golden

    pages = db.info().get("pages") or 0
    rows = [line for line in GOLDEN.read_text().splitlines() if line.strip()]
    held = [line for line in rows if all(int(e.rsplit("=", 1)[1]) <= pages for e in json.loads(line)["expected"])]
    golden = GOLDEN if len(held) == len(rows) else scratch / "hand_written_held.jsonl"
    if golden != GOLDEN:
        golden.write_text("\n".join(held) + "\n")
    which = {"hand_written_audited": [json.loads(line)["id"] for line in held], "of_hand_written": len(rows)}
    if drafts:
        report = audit_golden(drafts, db, real=str(golden))
        return {"drafted": report["sets"]["drafted"], "hand_written": report["sets"]["real"],
                "gap_drafted_minus_hand_written": report["gap"], "depth": report["depth"], **which}
    report = audit_golden(str(golden), db)
    return {"drafted": None, "why": "no draft was kept, so only the hand-written set is audited",
            "hand_written": report["sets"]["drafted"], "depth": report["depth"], **which}


def keeping(writer_class):
    """A ChatWriter subclass that keeps each draft's reply (for reading the drafts sent back by hand)
    and appends one line per ask to `log` as it comes (what was asked, the outcome, seconds, tokens),
    so a run stopped early still says what it did. A subclass, not a wrapper: write_golden copies its
    writer to give the run its own ledger and cache, and the copy must stay the one that asks."""

    class Keeping(writer_class):
        def keep(self, log: Path) -> "Keeping":
            self.kept_drafts, self.log, self.started = [], log, time.perf_counter()
            return self

        def ask(self, messages, schema=None, **kw):
            before = dict(self.totals())
            outcome = super().ask(messages, schema, **kw)
            title = schema.get("title") if isinstance(schema, dict) else None
            if title == "draft" and outcome.ok:
                self.kept_drafts.append(outcome.value)
            after = self.totals()
            why = [m.split("Why: ", 1)[1].split("\n")[0] for m in messages[-1]["content"].split("Draft: ")[1:]
                   if "Why: " in m] if title == "draft" else []
            line = {"at_s": round(time.perf_counter() - self.started, 1), "ask": title, "ok": outcome.ok,
                    "status": outcome.status, "value": outcome.value if outcome.ok else None,
                    "reason": None if outcome.ok else outcome.reason, "sent_back_why": why,
                    **{k: round(after[k] - before.get(k, 0), 2)
                       for k in ("requests", "prompt_tokens", "completion_tokens", "seconds")}}
            with open(self.log, "a") as out:
                out.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
            return outcome

    return Keeping


def probe(db, writer, count: int, examples: list[str], max_chars: int, log: Path, save=None) -> dict:
    """The drafting step alone, on the chunks that hold the evidence of `count` hand-written
    questions spread over the report (every len/count-th from the 6th; the first 5 are the style
    examples): one draft each with the production prompt, through the checks no model makes, and
    whether the sentences the model chose hold the hand-written evidence. No critic calls, so a
    slow machine measures the step that item 3 redesigned with the fewest calls. save(figures), when
    given, is called after every draft, so a run stopped early leaves its figures so far."""
    from vectrixdb.evaluation.writing import prompts
    from vectrixdb.evaluation.golden.files import load_questions
    from vectrixdb.evaluation.golden.labels import normal
    from vectrixdb.evaluation.writing.checks import check_draft, pick
    from vectrixdb.evaluation.writing.config import KINDS, CheckConfig, KindConfig, PassageConfig
    from vectrixdb.evaluation.writing.passages import list_passages

    golden = load_questions(str(GOLDEN))[5:]
    chosen = [golden[i * len(golden) // count] for i in range(count)]
    eligible = list_passages([db], PassageConfig(max_chars=max_chars))[0][0]
    kinds = [k for k in KINDS if k != "two_place"]
    rows = []
    for i, q in enumerate(chosen):
        want = normal(q.evidence[0])
        passage = next((p for p in eligible if want in normal(p.text)), None)
        if passage is None:
            rows.append({"golden": q.id, "skipped": "no eligible passage shows its evidence within max_chars"})
            continue
        kind = kinds[i % len(kinds)]
        messages, spans = prompts.draft([passage], kind, examples, None, None, KindConfig().long_words,
                                        KindConfig().search_words, [])
        outcome = writer.ask(messages, prompts.draft_schema(len(spans)), max_tokens=400)
        row = {"golden": q.id, "golden_question": q.question, "kind": kind, "page": passage.pages,
               "sentences_shown": len(spans), "ok": outcome.ok}
        if outcome.ok:
            v = outcome.value
            reason, why, found = pick(list(v["sentences"]), spans, str(v["answer"]), CheckConfig())
            if not reason:
                reason, why, found = check_draft(str(v["question"]), str(v["answer"]), found, kind, [passage], set(),
                                                 CheckConfig(), KindConfig(), examples)
            quotes = [s.text for s in spans if s.number in v["sentences"]]
            row.update(draft=v, sent_back=reason, why=why, evidence=quotes,
                       holds_hand_written_evidence=any(want in normal(x) for x in quotes) or
                       want in normal(" ".join(quotes)))
        else:
            row.update(status=outcome.status, reason=outcome.reason)
        rows.append(row)
        with open(log, "a") as out:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        if save is not None:
            save(_figures(rows, writer, count))
    return _figures(rows, writer, count)


def _figures(rows: list[dict], writer, count: int) -> dict:
    drafted = [r for r in rows if r.get("ok")]
    return {"planned": count, "asked": len([r for r in rows if "ok" in r]), "readable": len(drafted),
            "passed_the_checks": sum(r["sent_back"] is None for r in drafted),
            "sent_back": {k: sum(r["sent_back"] == k for r in drafted) for k in {r["sent_back"] for r in drafted} if k},
            "chose_the_hand_written_evidence": sum(bool(r["holds_hand_written_evidence"]) for r in drafted),
            "usage": writer.totals(), "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pdfs")
    parser.add_argument("-n", type=int, default=12)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "write_golden_uber.json"))
    parser.add_argument("--url", default=None, help="a served model (…/v1, e.g. the 1.5B at http://127.0.0.1:8090/v1)")
    parser.add_argument("--model", default="qwen1.5b")
    parser.add_argument("--label", default=None, help="key under runs (default: the model and n)")
    parser.add_argument("--max-chars", type=int, default=1000)
    parser.add_argument("--replacements", type=int, default=0)
    parser.add_argument("--repeat-penalty", type=float, default=1.3)
    parser.add_argument("--tries", type=int, default=3, help="passages the critic scores per slot (spec: 3)")
    parser.add_argument("--evolve", type=int, default=1, help="rewrites per kept question (spec: 1)")
    parser.add_argument("--collections", default=None)
    parser.add_argument("--home", default=None)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--log", default=None, help="one JSON line per ask, appended as it comes")
    parser.add_argument("--probe", type=int, default=0, help="only the drafting step on N hand-written questions' passages")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="requests in flight at once (1 for a one-slot server shared with other clients)")
    parser.add_argument("--small", action="store_true", help="the re-run test's mode: n=2, one passage scored per slot")
    args = parser.parse_args()
    if args.small:
        args.n, args.tries = 2, 1
    scratch = Path(tempfile.mkdtemp(prefix="write-golden-bench-"))
    os.environ["VECTRIXDB_HOME"] = args.home or str(scratch / "home")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from tests.llama_server import smollm2_gguf, start_slots
    from vectrixdb import Vectrix
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig
    from vectrixdb.evaluation.writing.write import write_golden
    from vectrixdb.evaluation.writing.config import PassageConfig, WritingConfig
    import vectrixdb.evaluation.writing.audit  # noqa: F401 (imported now: a long run ends with the audit)

    db = Vectrix("uber", path=args.collections or scratch / "collections")
    started = time.perf_counter()
    if not db.exists:
        db.add_document(str(Path(args.pdfs) / "uber_2021.pdf"), doc_id="uber_2021.pdf")
    ingest_s = time.perf_counter() - started
    proc, base, model = None, (args.url or "").rstrip("/"), args.model
    if not args.url:
        proc, base = start_slots(scratch / "llama.log", slots=1)
        model = "smollm2"
    load_before = os.getloadavg()
    if args.probe:
        return _probe(args, db, base, model, load_before)
    try:
        def writer(kind=ChatWriter):
            return kind(f"{base}/chat/completions", model=model, max_retries=1, max_concurrency=args.concurrency,
                        limits=LimitConfig(timeout=600),
                        request=RequestConfig(response_format="json_object",
                                              extra_body={"repeat_penalty": args.repeat_penalty}))

        settings = dict(n=args.n, examples=[json.loads(line)["question"] for line in GOLDEN.read_text().splitlines()[:5]],
                        cache=Path(args.cache) if args.cache else scratch / "answers.db",
                        evolve=args.evolve,
                        config=WritingConfig(passages=PassageConfig(max_chars=args.max_chars,
                                                                    replacements=args.replacements, tries=args.tries)))
        keeper = writer(keeping(ChatWriter)).keep(Path(args.log) if args.log else scratch / "asks.jsonl")
        written = write_golden(db, str(scratch / "drafts.jsonl"), writer=keeper, **settings)
        print(written.summary(), flush=True)
        load_after = os.getloadavg()
        again = write_golden(db, str(scratch / "drafts-again.jsonl"), writer=writer(), **settings)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    kept = max(written.kept, 1)
    sent = sum(written.sent_back.values())
    u = written.usage
    pages = db.info().get("pages")
    run = {
        "small": args.small,
        "what": f"write_golden on uber_2021.pdf ({pages} pages{', whole report' if pages == 307 else ''}; passages cut to {args.max_chars:,} "
                f"characters, {args.replacements} replacement passage(s) per slot, {args.tries} passage(s) scored per slot, "
                f"{args.evolve} rewrite(s)), then audit_golden of the kept "
                "drafts against the 40 hand-written questions",
        "model": (f"SmolLM2-135M-Instruct ({smollm2_gguf().name}) started here" if not args.url else
                  f"{model} at {base}")
                 + f", json_object answers with the schema, repeat_penalty {args.repeat_penalty}, temperature 0",
        "drafting": "numbered sentences: the model names the sentences that answer, the evidence is cut from them by code",
        "versions": versions("xllamacpp", "openai", "sentence-transformers"),
        "load_average": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after],
                         "note": "the 1-, 5- and 15-minute load averages before and after the run: the seconds "
                                 "are under this load"},
        "n": args.n, "concurrency": args.concurrency, "ingest_seconds_not_timed_below": round(ingest_s, 1),
        "written": written.to_dict(),
        "per_kept_question": None if not written.kept else {
            "calls": round(u["requests"] / kept, 2), "prompt_tokens": round(u["prompt_tokens"] / kept, 1),
            "completion_tokens": round(u["completion_tokens"] / kept, 1), "seconds": round(written.seconds / kept, 2)},
        "sent_back_share": {k: round(v / sent, 4) for k, v in written.sent_back.items()} if sent else {},
        "sent_back_per_draft_asked": round(sent / max(written.asked, 1), 3),
        "rerun_from_cache": {"calls": again.usage["requests"], "kept": again.kept, "seconds": round(again.seconds, 2),
                             "same_rows": [q.to_json() for q in again.questions] == [q.to_json() for q in written.questions]},
        "audit": audit_part(db, written.path, scratch),
        "drafts": [q.to_json() for q in written.questions],
        "every_draft_reply": keeper.kept_drafts,
    }
    out = Path(args.out)
    whole = dict(run, label=args.label or f"{model} n={args.n}")  # the run is the file; --probe runs stay beside
    if out.exists() and "runs" in json.loads(out.read_text()):
        whole["runs"] = json.loads(out.read_text())["runs"]
    tmp = out.with_suffix(".tmp")
    whole.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    whole.setdefault("pdf_reader", pdf_reader())
    tmp.write_text(json.dumps(whole, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(out)  # atomic: a reader never sees half a file
    print(json.dumps({k: run[k] for k in ("per_kept_question", "sent_back_share", "rerun_from_cache")}, indent=2))
    return 0


def _probe(args, db, base, model, load_before) -> int:
    """--probe: write runs[label] with the drafting step's figures (see probe)."""
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig

    writer = ChatWriter(f"{base}/chat/completions", model=model, max_retries=1, limits=LimitConfig(timeout=1800),
                        request=RequestConfig(response_format="json_object",
                                              extra_body={"repeat_penalty": args.repeat_penalty}),
                        cache=args.cache)
    started = time.perf_counter()
    examples = [json.loads(line)["question"] for line in GOLDEN.read_text().splitlines()[:5]]
    label = args.label or f"{model} probe {args.probe}"

    def save(result: dict) -> dict:
        result.update(seconds=round(time.perf_counter() - started, 1), what=(
            f"the drafting step alone (numbered sentences, one draft each, no critic) on the passages (cut to "
            f"{args.max_chars:,} characters) holding the evidence of {args.probe} hand-written questions of "
            "data/golden/uber_2021.jsonl; the first 5 hand-written questions are the style examples"),
            model=f"{model} at {base}, json_object with the schema, repeat_penalty {args.repeat_penalty}, temperature 0",
            load_average={"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in os.getloadavg()],
                          "note": "2 cores shared with other work and another client of the same model server"})
        out = Path(args.out)
        whole = json.loads(out.read_text()) if out.exists() else {}
        whole.setdefault("runs", {})[label] = result
        tmp = out.with_suffix(".tmp")
        whole.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
        tmp.write_text(json.dumps(whole, indent=2, ensure_ascii=False, default=str) + "\n")
        tmp.replace(out)  # atomic, after every draft: a run stopped early leaves its figures so far
        return result

    result = save(probe(db, writer, args.probe, examples, args.max_chars, Path(args.log or "/dev/null"), save))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
