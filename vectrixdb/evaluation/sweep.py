"""sweep: rebuild the collection for each chunking setting in a scratch folder and ask every question.

The chunker, its size and whether headings go to the embedder are decided at ingestion, so each
combination is a build of its own, from the originals. Rows are ranked by nDCG at the largest k,
then MRR, then median search time. Nothing of the user's collections changes; the scratch folder
is deleted afterwards. Reading each document happens once, embedding goes through the cache.
"""
from __future__ import annotations

import itertools
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from vectrixdb.evaluation.golden import Question
from vectrixdb.evaluation.report import Report


def read_documents(documents: Any) -> list:
    """Documents, read once: paths, or {doc_id: path, text or Document}."""
    from vectrixdb.reading import read

    if isinstance(documents, dict):
        return [read(source, doc_id=doc_id) for doc_id, source in documents.items()]
    if isinstance(documents, (str, Path)):
        documents = [documents]
    return [read(str(p) if isinstance(p, Path) else p) for p in documents]


def sweep(documents: Any, questions: Iterable[Question], *, chunk: Sequence[str] = ("recursive",),
          chunk_size: Sequence[int] = (1000,), embed_heading: Sequence[bool] = (False,),
          search: Sequence[dict] = ({"mode": "dense"},), k: Sequence[int] = (1, 3, 5, 10), by: str = "doc",
          model: Any = None, progress: bool = True) -> Report:
    import pandas as pd
    from tqdm.auto import tqdm

    from vectrixdb.collection import Vectrix
    from vectrixdb.evaluation.retrieval import retrieval_report

    questions = [q for q in questions]
    if not any(q.labelled for q in questions):
        return Report("sweep", {"best": None, "reason": "no labelled questions", "rows": 0}, None)
    docs = read_documents(documents)
    ks = sorted(k)
    grid = list(itertools.product(chunk, chunk_size, embed_heading))
    rows = []
    with tempfile.TemporaryDirectory(prefix="vectrixdb-sweep-") as scratch:
        for i, (technique, size, heading) in enumerate(tqdm(grid, desc="builds", disable=not progress)):
            db = Vectrix(f"build-{i}", path=scratch, model=model)
            start = time.perf_counter()
            db.add_documents(docs, chunk=technique, chunk_size=size, embed_heading=heading, progress=False)
            build_s = time.perf_counter() - start
            chunks = db.info()["chunks"]
            for options in search:
                rep = retrieval_report(db, questions, ks, by, **options)
                rows.append({"chunk": technique, "chunk_size": size, "embed_heading": heading,
                             "search": _label(options), f"ndcg@{ks[-1]}": rep["ndcg"][ks[-1]], "mrr": rep["mrr"],
                             **{f"recall@{x}": rep["recall"][x] for x in ks}, "chunks": chunks,
                             "build_s": build_s, "median_search_ms": rep["latency_ms"]["median"]})
    frame = pd.DataFrame(rows).sort_values([f"ndcg@{ks[-1]}", "mrr", "median_search_ms"],
                                           ascending=[False, False, True]).reset_index(drop=True)
    best = {c: (v.item() if hasattr(v, "item") else v) for c, v in frame.iloc[0].items()}
    values = {"best": best, "rows": len(frame), "questions": sum(q.labelled for q in questions), "k": ks, "by": by}
    return Report("sweep", values, frame)


def _label(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "default"


def sweep_markdown(report: Report, digits: int = 3) -> str:
    """The sweep's rows as a Markdown table, best first."""
    if report.frame is None:
        return f"_no sweep: {report.get('reason')}_"
    frame = report.frame.round(digits)
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])
