"""write_golden's boilerplate rule, without a model: which chunks it passes over, on the 16 passages of
uber_2021.pdf labelled by hand (data/passage_critic/uber_2021.jsonl, the passage critic's set) and on
every chunk of the two 10-Ks, at its default share and beside it.

usage: python scripts/boilerplate_bench.py [--pdfs ../shared/data/pdfs] [--out benchmarks/boilerplate_passages.json]

The rule (evaluation.writing.passages.form_share): a chunk's sentences, cut as write_golden numbers them,
that match one of PassageConfig.boilerplate's phrases; the chunk is skipped when they hold
boilerplate_share of its characters or more. Figures: each labelled passage's share and the AUC
(sklearn) of the share as a score of "poor material", beside the 1.5B passage critic's (from
benchmarks/passage_critic_qwen1.5b.json, when present); at each share in SHARES, the labelled passages
skipped on each side, the chunks of each 10-K skipped as boilerplate, and the chunks holding the
evidence of a hand-written question (data/golden/uber_2021.jsonl) that would be skipped for any reason.
The chunks are the collection's default chunking (recursive, 1,000 characters, overlap 200), read
and cut here without embedding; the chunks skipped at the default share are listed with their start.
Without --pdfs only the labelled part is measured.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import pdf_reader, versions, write_json  # noqa: E402

LABELLED = ROOT / "data" / "passage_critic" / "uber_2021.jsonl"
GOLDEN = ROOT / "data" / "golden" / "uber_2021.jsonl"
CRITIC = ROOT / "benchmarks" / "passage_critic_qwen1.5b.json"
SHARES = (0.3, 0.5, 0.6, 0.8)


def chunks_of(pdf: Path) -> list[dict]:
    """The default chunking of a PDF, with each chunk's pages' reading scores."""
    from vectrixdb.chunking import chunk_document
    from vectrixdb.collection import DEFAULT_CHUNKING
    from vectrixdb.reading import read

    doc = read(str(pdf), doc_id=pdf.name)
    size = DEFAULT_CHUNKING["chunk_size"]
    chunks = chunk_document(doc, DEFAULT_CHUNKING["chunk"], chunk_size=size, overlap=size // 5, embedder=None)
    scores = {p.number: p.score for p in doc.pages}
    return [{"chunk_id": f"{doc.doc_id}::{i}", "pages": list(c.pages), "text": c.text,
             "page_scores": [scores[n] for n in c.pages]} for i, c in enumerate(chunks)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pdfs", default=None, help="the folder holding uber_2021.pdf and lyft_2021.pdf")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "boilerplate_passages.json"))
    args = parser.parse_args()
    from dataclasses import replace

    from sklearn.metrics import roc_auc_score

    from vectrixdb.evaluation.golden.labels import normal
    from vectrixdb.evaluation.writing.config import PassageConfig
    from vectrixdb.evaluation.writing.passages import form_share, skip_reason

    config = PassageConfig()
    labelled = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    for case in labelled:
        case["share"] = round(form_share(case["text"], config.boilerplate), 4)
    out: dict = {"what": " ".join(__doc__.split("\n\n")[0].split()), "versions": versions(),
                 "default_share": config.boilerplate_share, "phrases": list(config.boilerplate),
                 "labelled": {"passages": str(LABELLED.relative_to(ROOT)),
                              "auc_of_share": float(roc_auc_score([not c["good"] for c in labelled],
                                                                  [c["share"] for c in labelled])),
                              "rows": [{k: c[k] for k in ("chunk_id", "good", "why", "share")} for c in labelled]}}
    if CRITIC.exists():
        shipped = json.loads(CRITIC.read_text())["prompts"]["as shipped"]
        out["labelled"]["passage_critic_qwen1.5b_mean_auc"] = shipped["mean_auc"]
    reports = {}
    if args.pdfs:
        for name in ("uber_2021.pdf", "lyft_2021.pdf"):
            reports[name] = chunks_of(Path(args.pdfs) / name)
        evidence = [normal(e) for line in GOLDEN.read_text().splitlines() if line.strip()
                    for e in json.loads(line)["evidence"]]
    out["by_share"] = {}
    for cut in SHARES:
        at = replace(config, boilerplate_share=cut)
        row: dict = {"labelled_skipped": {
            "poor": sum(c["share"] >= cut for c in labelled if not c["good"]),
            "good": sum(c["share"] >= cut for c in labelled if c["good"]), "of_each": sum(c["good"] for c in labelled)}}
        for name, chunks in reports.items():
            reasons = Counter(skip_reason(c["text"], c["page_scores"], at) for c in chunks)
            row[name] = {"chunks": len(chunks), "boilerplate": reasons["boilerplate"],
                         "skipped_for_other_reasons": sum(n for r, n in reasons.items() if r not in (None, "boilerplate"))}
            if name == "uber_2021.pdf":
                holding = [c for c in chunks if any(e in normal(c["text"]) for e in evidence)]
                row[name]["evidence_chunks"] = len(holding)
                why = [(c["chunk_id"], skip_reason(c["text"], c["page_scores"], at)) for c in holding]
                row[name]["evidence_chunks_skipped"] = [[chunk, reason] for chunk, reason in why if reason]
        out["by_share"][str(cut)] = row
    out["skipped_at_the_default"] = {
        name: [{"chunk_id": c["chunk_id"], "pages": c["pages"], "share": round(form_share(c["text"], config.boilerplate), 2),
                "starts": " ".join(c["text"].split())[:120]}
               for c in chunks if skip_reason(c["text"], c["page_scores"], config) == "boilerplate"]
        for name, chunks in reports.items()}
    out["pdf_reader"] = pdf_reader()
    write_json(args.out, out)
    print(json.dumps({k: out[k] for k in ("default_share", "by_share")}, indent=1))
    print("AUC", out["labelled"]["auc_of_share"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
