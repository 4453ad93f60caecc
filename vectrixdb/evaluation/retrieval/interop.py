"""In and out of the formats the field uses: TREC run and qrels files, ranx, ir_measures, datasets.

- TREC: a run file holds `qid Q0 docid rank score tag` lines, a qrels file `qid 0 docid grade`.
  `load_trec_run` / `load_trec_qrels` read them into the dicts metric_table takes ({q: {doc: score}}
  and {q: {doc: grade}}); `write_trec_run` / `write_trec_qrels` write them (never over a file);
  `Report.to_trec`-style export of a retrieval report is `report_to_trec(report, path)`. A file
  written here ranks in trec_eval exactly as the run or report did, ties included (write_trec_run).
- ranx: `to_ranx(run, qrels)` gives ranx's Run and Qrels; `from_ranx(obj)` the dict back.
- ir_measures: `to_ir_measures(run, qrels)` gives lists of ScoredDoc and Qrel; `from_ir_measures`
  reads such iterables (or anything with query_id/doc_id/score or relevance) back into dicts.
- datasets: `load_beir` takes Hugging Face `datasets` (corpus, queries, qrels) as well as a folder;
  `to_dataset(report)` hands a report's per-question frame over as a `datasets.Dataset`.

A malformed line is an error naming the file and the line.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from vectrixdb.errors import BadInput
from vectrixdb.extras import needs


def load_trec_run(path: str) -> dict[str, dict[str, float]]:
    """{query: {doc: score}} from a TREC run file (six columns)."""
    out: dict[str, dict[str, float]] = {}
    for n, parts in _lines(path):
        if len(parts) != 6:
            raise BadInput(f"{path}, line {n}: a run line is 'qid Q0 docid rank score tag', got {len(parts)} fields")
        try:
            score = float(parts[4])
        except ValueError:
            raise BadInput(f"{path}, line {n}: score {parts[4]!r} is not a number") from None
        if not math.isfinite(score):
            raise BadInput(f"{path}, line {n}: score {parts[4]!r} is not finite; it has no place in a ranking")
        docs = out.setdefault(parts[0], {})
        if parts[2] in docs:
            raise BadInput(f"{path}, line {n}: {parts[2]!r} is listed twice for query {parts[0]!r}")
        docs[parts[2]] = score
    return out


def load_trec_qrels(path: str) -> dict[str, dict[str, int]]:
    """{query: {doc: grade}} from a TREC qrels file (four columns)."""
    out: dict[str, dict[str, int]] = {}
    for n, parts in _lines(path):
        if len(parts) != 4:
            raise BadInput(f"{path}, line {n}: a qrels line is 'qid 0 docid grade', got {len(parts)} fields")
        try:
            grade = int(parts[3])
        except ValueError:
            raise BadInput(f"{path}, line {n}: grade {parts[3]!r} is not a whole number") from None
        out.setdefault(parts[0], {})[parts[2]] = grade
    return out


def _lines(path: str):
    from vectrixdb import io
    from vectrixdb.reading import decode

    for n, line in enumerate(decode(io.read_bytes(path), path).splitlines(), start=1):
        if line.strip():
            yield n, line.split()


def write_trec_run(run: dict[str, Any], path: str, tag: str = "vectrixdb") -> str:
    """A TREC run file that trec_eval reads back in the run's own order, ties included; never over a file.

    `run[q]` is {doc: score} (ranked by score, equal scores by id descending: trec_eval's order),
    a list of ids in rank order, or a list of (id, score) pairs in rank order. trec_eval ignores
    the rank column and sorts each query by score descending, then docno descending, so:
    - scores are written with repr(), which reads back as the same float;
    - a query's own scores are kept when they reproduce its order under that sort, always so for
      {doc: score}; otherwise (ties broken another way, scores out of order, no scores) the whole
      query is written with rank-derived scores n, n - 1, ..., 1 for its n documents. The
      original scores stay where they came from (a report's `scores` column).
    A document listed twice keeps its first place. A score that is not a finite number, or an id
    or tag holding whitespace, is a BadInput naming it."""
    from vectrixdb import io

    _check_token("tag", tag)
    lines = []
    for q, given in run.items():
        _check_token("query", q)
        for rank, (doc, score) in enumerate(_trec_order(q, given), start=1):
            lines.append(f"{q} Q0 {doc} {rank} {score!r} {tag}")
    return io.write_new(path, "\n".join(lines) + "\n")


def _trec_order(q: str, given: Any) -> list[tuple[str, float]]:
    """(doc, score) in the run's order, with scores that trec_eval's sort puts in that order."""
    from vectrixdb.evaluation.retrieval.metrics import _check_scores, _ranked

    first: dict[str, Any] = {}
    items = given.items() if isinstance(given, dict) else (x if isinstance(x, tuple) else (x, None) for x in given)
    for doc, score in items:
        first.setdefault(str(doc), score)  # a document listed twice keeps its first place
    for doc in first:
        _check_token(f"document of query {q!r}", doc)
    if isinstance(given, dict):
        return [(doc, float(first[doc])) for doc in _ranked(first, q)]  # _ranked refuses a bad score
    if all(score is not None for score in first.values()):
        _check_scores(q, first)
        written = [(doc, float(score)) for doc, score in first.items()]
        if _ranked(dict(written), q) == list(first):
            return written
    return [(doc, float(len(first) - i)) for i, doc in enumerate(first)]


def _check_token(what: str, value: Any) -> None:
    text = str(value)
    if not text or any(c.isspace() for c in text):
        raise BadInput(f"{what} {text!r}: a TREC run's fields are separated by whitespace, so none may hold any")


def write_trec_qrels(qrels: dict[str, dict[str, float]], path: str) -> str:
    from vectrixdb import io

    lines = [f"{q} 0 {doc} {int(grade)}" for q, judged in qrels.items() for doc, grade in judged.items()]
    return io.write_new(path, "\n".join(lines) + "\n")


def report_run(report) -> dict[str, dict[str, float]]:
    """A retrieval report's run ({question: {id: score}}), in the report's order: the ids it
    retrieved at its grain with the retriever's scores, or rank-derived scores (n, ..., 1) for a
    question whose scores are missing or do not order its ids (see write_trec_run)."""
    return {q: dict(_trec_order(q, pairs)) for q, pairs in report_rankings(report).items()}


def report_rankings(report) -> dict[str, list[tuple[str, float | None]]]:
    """Each question's retrieved ids in the report's order, with the retriever's scores (None
    where it gave none)."""
    if report.kind != "retrieval" or report.frame is None:
        raise BadInput(f"a TREC run comes from a retrieval report with questions, not a {report.kind} report")
    out = {}
    for q, row in report.frame.iterrows():
        ids, scores = list(row["retrieved"]), list(row.get("scores") or [])
        scores += [None] * (len(ids) - len(scores))
        out[str(q)] = [(str(doc), None if s is None or s != s else float(s)) for doc, s in zip(ids, scores)]
    return out


def report_to_trec(report, path: str, tag: str = "vectrixdb") -> str:
    """Write a retrieval report's run as a TREC run file that trec_eval ranks exactly as the
    report did (see write_trec_run)."""
    return write_trec_run(report_rankings(report), path, tag)


def to_ranx(run: dict | None = None, qrels: dict | None = None):
    """ranx's (Run, Qrels) for the dicts given (either may be None)."""
    with needs("compare"):
        import ranx
    return (ranx.Run.from_dict(run) if run is not None else None,
            ranx.Qrels.from_dict(qrels) if qrels is not None else None)


def from_ranx(obj: Any) -> dict:
    """A ranx Run or Qrels as the plain dict metric_table takes."""
    return {q: dict(d) for q, d in obj.to_dict().items()}


def to_ir_measures(run: dict | None = None, qrels: dict | None = None) -> tuple[list, list]:
    """ir_measures' ScoredDoc and Qrel records for the dicts given."""
    with needs("compare"):
        from ir_measures import Qrel, ScoredDoc

    docs = [ScoredDoc(q, d, float(s)) for q, scores in (run or {}).items() for d, s in scores.items()]
    rels = [Qrel(q, d, int(g)) for q, judged in (qrels or {}).items() for d, g in judged.items()]
    return docs, rels


def from_ir_measures(records: Iterable[Any]) -> dict:
    """{query: {doc: score or relevance}} from ir_measures' records (ScoredDoc or Qrel)."""
    out: dict[str, dict] = {}
    for r in records:
        value = getattr(r, "score", None)
        if value is None:
            value = r.relevance
        out.setdefault(str(r.query_id), {})[str(r.doc_id)] = value
    return out


def to_dataset(report):
    """A report's per-question frame as a Hugging Face `datasets.Dataset` (lists stay lists)."""
    with needs("interop"):
        import datasets
    if report.frame is None:
        raise BadInput(f"the {report.kind} report has no rows to hand over")
    return datasets.Dataset.from_list(report.frame.reset_index().to_dict(orient="records"))


def beir_from_datasets(corpus: Any, queries: Any, qrels: Any) -> tuple[dict, dict, dict]:
    """(documents, query texts, qrels) from three `datasets` tables with BEIR's columns:
    corpus _id/title/text, queries _id/text, qrels query-id/corpus-id/score."""
    def rows(table, name, needed):
        missing = [c for c in needed if c not in table.column_names]
        if missing:
            raise BadInput(f"the {name} dataset has no column(s) {missing}; BEIR's are {needed}")
        return table

    documents = {str(r["_id"]): (r.get("title", "") + " " + r.get("text", "")).strip()
                 for r in rows(corpus, "corpus", ["_id", "text"])}
    texts = {str(r["_id"]): r["text"] for r in rows(queries, "queries", ["_id", "text"])}
    judged: dict[str, dict[str, int]] = {}
    for r in rows(qrels, "qrels", ["query-id", "corpus-id", "score"]):
        judged.setdefault(str(r["query-id"]), {})[str(r["corpus-id"])] = int(r["score"])
    return documents, texts, judged
