"""sweep: rebuild the collection for each chunking setting in a scratch folder and ask every question.

The chunker, its size and whether headings go to the embedder are decided at ingestion, so each
combination is a build of its own, from the originals. Rows are ranked by nDCG at the largest k,
then MRR (both compared at 12 decimals, so sums that differ in the last bit still tie), then fewer
chunks, then the order of the settings given (chunk, chunk_size, embed_heading, search, as
itertools.product lists them). Measured times never rank: the same inputs give the same verdict
here and on Ray, whichever machine was faster. Nothing of the user's collections changes; the
scratch folder is deleted afterwards. Reading each document happens once, embedding goes through the cache.
"""
from __future__ import annotations

import itertools
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from vectrixdb.evaluation.golden.grain import Grain
from vectrixdb.evaluation.golden.questions import Question, last_turn_only, query_rule
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.roles import EmbeddingModel, Questions
from vectrixdb.search import DEFAULT_MODE


def read_documents(documents: Any) -> list:
    """Documents, read once: paths, or {doc_id: path, text or Document}."""
    from vectrixdb.reading import read

    if isinstance(documents, dict):
        return [read(source, doc_id=doc_id) for doc_id, source in documents.items()]
    if isinstance(documents, (str, Path)):
        documents = [documents]
    return [read(str(p) if isinstance(p, Path) else p) for p in documents]


def sweep(documents: Any, questions: Questions, *, chunk: Sequence[str] = ("recursive",),
          chunk_size: Sequence[int] = (1000,), embed_heading: Sequence[bool] = (False,),
          search: Sequence[dict] = ({"mode": DEFAULT_MODE},), k: Sequence[int] | int = (1, 3, 5, 10),
          by: str | Grain = "doc",
          model: EmbeddingModel = None, executor: str = "local", progress: bool = True,
          query: Callable[[Question], str] | None = None) -> Report:
    """Build every (chunk, chunk_size, embed_heading) in a scratch folder and ask every question with
    each search setting. Each build is a cell (vectrixdb.executors): executor="ray" spreads them over
    a Ray cluster with the same rows, and a sweep that stopped redoes only the builds it had not
    finished; a build's key holds its chunker's code (code_identity.py), so an edited chunker of
    your own, re-registered, is built again. build_s and median_search_ms are measured where the build ran.
    `query`: what each build searches for a question, as retrieval_report takes it (a conversation's
    last user turn by default; its code is part of each build's key); recorded as report["query"]."""
    import pandas as pd

    from vectrixdb.embedding import get_embedder
    from vectrixdb.evaluation.golden.questions import cutoffs, provenance
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.runs.report import now
    from vectrixdb.executors import Cell, digest, run_cells

    started = now()
    rule = query_rule(query)  # a query= that is not a function is refused before anything is read
    by = Grain.of(by).name  # the word: a build's settings are keyed by value, and the report records it
    golden, questions = questions, questions_of(questions)
    meta = provenance(golden, questions)
    if not any(q.labelled for q in questions):
        return Report("sweep", {"best": None, "reason": "no labelled questions", "rows": 0, "questions": 0}, None,
                      started=started, meta=meta)
    from vectrixdb.chunking import get_chunker

    for technique in chunk:  # an unknown name is refused before anything is read or built
        get_chunker(technique)
    docs = read_documents(documents)
    ks = cutoffs(k)
    name = getattr(get_embedder(model), "name", str(model)) if model is not None else None
    inputs, digests = (docs, questions, model, query), (document_digest(docs),
                                                        digest([q.to_json() for q in questions]), str(name), rule)
    cells = [Cell(build_cell, {"chunk": t, "chunk_size": size, "embed_heading": h, "search": list(search), "k": ks,
                               "by": by}, inputs, digests, code=(get_chunker(t), *([query] if query else [])))
             for t, size, h in itertools.product(chunk, chunk_size, embed_heading)]
    rows = [row for built in run_cells(cells, executor, progress=progress, desc="builds") for row in built]
    frame = rank_rows(pd.DataFrame(rows), f"ndcg@{ks[-1]}", next(c for c in rows[0] if c.startswith("mrr@")))
    best = {c: (v.item() if hasattr(v, "item") else v) for c, v in frame.iloc[0].items()}
    values = {"best": best, "rows": len(frame), "questions": sum(q.labelled for q in questions), "k": ks, "by": by,
              "ranked_by": RANKED_BY.format(ndcg=f"ndcg@{ks[-1]}"), "query": rule,
              "warnings": _warnings(questions, by, frame, ks, query)}
    meta["embedding_model"] = str(name) if name is not None else "bundled all-MiniLM-L6-v2"
    return Report("sweep", values, frame, started=started, meta=meta)


RANKED_BY = "{ndcg}, then MRR, then fewer chunks, then the order of the settings (never timings)"


def rank_rows(frame, ndcg: str, mrr: str):
    """The rows best first: higher nDCG, then higher MRR (each rounded to 12 decimals so float noise
    cannot break a tie), then fewer chunks, then the order the rows were given in."""
    keys = frame.assign(_ndcg=frame[ndcg].round(12), _mrr=frame[mrr].round(12), _order=range(len(frame)))
    order = keys.sort_values(["_ndcg", "_mrr", "chunks", "_order"], ascending=[False, False, True, True],
                             na_position="last").index
    return frame.loc[order].reset_index(drop=True)


def document_digest(docs: list) -> str:
    from vectrixdb.executors import digest

    return digest([[d.doc_id, d.markdown, [[p.number, p.start, p.end, list(p.flags), p.score] for p in d.pages]]
                   for d in docs])


def build_cell(settings: dict, docs: list, questions: list, model: EmbeddingModel,
               query: Callable[[Question], str] | None = None) -> list[dict]:
    """One build of a sweep, in a scratch folder: its rows, one per search setting."""
    from vectrixdb.collection import Vectrix
    from vectrixdb.evaluation.retrieval.scoring import retrieval_report

    ks, by = settings["k"], settings["by"]
    with tempfile.TemporaryDirectory(prefix="vectrixdb-sweep-") as scratch:
        db = Vectrix("build", path=scratch, model=model)
        start = time.perf_counter()
        db.add_documents(docs, chunk=settings["chunk"], chunk_size=settings["chunk_size"],
                         embed_heading=settings["embed_heading"], progress=False)
        build_s = time.perf_counter() - start
        chunks = db.info()["chunks"]
        rows = []
        for options in settings["search"]:
            rep = retrieval_report(db, questions, ks, by, query=query, **options)
            rows.append({"chunk": settings["chunk"], "chunk_size": settings["chunk_size"],
                         "embed_heading": settings["embed_heading"], "search": _label(options),
                         f"ndcg@{ks[-1]}": rep["ndcg"][ks[-1]], f"mrr@{rep['depth']}": rep["mrr"],
                         **{f"recall@{x}": rep["recall"][x] for x in ks}, "chunks": chunks,
                         "build_s": build_s, "median_search_ms": rep["latency_ms"]["median"]})
    return rows


def _warnings(questions: list, by: str, frame, ks: list[int], query: Callable[[Question], str] | None) -> list[str]:
    """What the retrieval reports would warn of the labels at this grain and of conversations searched
    by their last turn, and a sweep where no build ever found anything (the labels and the documents'
    ids most likely do not meet)."""
    from vectrixdb.evaluation.retrieval.scoring import _label_warnings

    grain = Grain.of(by)
    scored = [q for q in questions if q.labelled and grain.qrel(q)]
    out = _label_warnings(scored, grain) + last_turn_only(scored, query)
    if not (frame[[f"recall@{x}" for x in ks]].to_numpy() > 0).any():
        out.append(f"no build found any expected label at any k (by={by!r}): check that the golden file's labels "
                   "name these documents at this grain")
    return out


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
