"""compare_embedders: which embedding model (and reranker) finds your labels best, at what cost.

    compare_embedders(db, "golden.jsonl", ["all-MiniLM-L6-v2@fp32", "http://127.0.0.1:8080/v1#nomic-embed-text"],
                      prices={"http://127.0.0.1:8080/v1#nomic-embed-text": {"per_million_tokens": 0.02}})

Each candidate (a model string, a served route's string, or an Embedder) is embedded once into a
vector space of its own over the collection's chunks (`db.add_vectors`; a space the collection
already holds for the same model is reused, never built again, and the embedding cache keys every
vector by the model, so no text is embedded twice by one model). The spaces stay in the collection
(`db.spaces`), so a later comparison reuses them. Every space is then searched dense, with the same
golden questions, by retrieval_report at the grain of the labels (`by`, as retrieval_report takes
it: the labels' own grain when not given). Rerankers (`rerankers=`) are candidates too: the
`first_stage` space (the leading embedder's, unless named) searched dense and re-scored by each.

Beside the quality (nDCG@k, recall@k, MRR with their 95% intervals) each candidate has:
- `embed_s_per_1k_chunks`: seconds to build its space per 1,000 chunks the model actually embedded
  (the model's load, or a route's one probe of its dimension, comes before the clock; texts the
  embedding cache already held are counted apart, in `chunks_from_cache`; a reused space has no
  build time: None, said in `notes`);
- `query_p50_ms`, `query_p95_ms`: per golden question, the query's embedding and dense search (and
  rerank) as retrieval_report times them;
- `index_bytes`: the space's usearch file; `dim`: the vectors' length;
- `cost_per_1k_chunks`, `cost_per_1k_queries` ($): the tokens a served route's replies reported,
  per chunk or query it sent, times the price the caller passed (`prices`: {model string, route or
  label: {"per_million_tokens": $} or $}); `cost` says in words what it is: "local" (no token
  record: a model on this machine), "not priced" (tokens recorded, no price given: never invented,
  never 0), "no token record" (a served route whose replies did not count tokens), or not measured
  because every text came from the cache.

RULE (report["rule"]): the leader is the candidate with the highest mean nDCG@k (k the largest
asked; equal means: the first given). Every other candidate's per-question nDCG@k is paired with
the leader's: a paired sign-flip test (stats.SignFlip; exact up to 12 questions), its p adjusted by
Holm over the other candidates. A candidate whose adjusted p is >= alpha (0.05) "cannot be told
apart" from the leader; `best` is claimed only when every other candidate is told apart (else
None, and `tied` names those that cannot be). With one candidate there is no test, and no best is
claimed. `questions_needed`: the paired questions the observed gap to the leader would need for
80% power at alpha / (candidates - 1) (power.questions_for: paired t on graded figures, exact
McNemar on yes/no ones), None with the reason where none can be said.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from vectrixdb.errors import BadInput, BadType
from vectrixdb.evaluation.runs.report import Report

DEPTH = 100
POWER = 0.8
RULE = ("leader = the highest mean {quality} over the {n} questions (equal means: the first given); each other "
        "candidate's per-question {quality} is paired with the leader's (paired sign-flip test), its p adjusted by "
        "Holm over the {m} other candidate(s); 'cannot be told apart' = Holm-adjusted paired p >= {alpha:g}; 'best' is "
        "claimed only when every other candidate is told apart from the leader. 'questions needed' = paired questions "
        "the observed gap would need for {power:.0%} power at alpha {alpha:g} / {m} (power.questions_for).")
ONE = "one candidate: nothing to compare it with, so no test was run and no best is claimed"
LOCAL = "local"
PLURAL = {"chunk": "chunks", "query": "queries"}
NOT_PRICED = "not priced"


def compare_embedders(db: Any, golden: Any, embedders: Sequence[Any], *, k: Sequence[int] | int = (1, 3, 5, 10),
                      by: str | None = None, prices: dict | None = None, rerankers: Sequence[Any] = (),
                      first_stage: str | None = None, depth: int = DEPTH, confidence: float = 0.95, seed: int = 0,
                      save_to: str | None = None, name: str | None = None, progress: bool = False) -> Report:
    """See the module docstring. db: a Vectrix holding the documents (its chunks are embedded by
    each candidate); golden: a golden file's path or Questions; embedders: model strings, route
    strings or Embedder objects; k: the cut-offs (the largest decides); by: the grain (None: the
    labels'); prices: {name: {"per_million_tokens": $}}; rerankers: rerankers (a cross-encoder name,
    a /rerank route's string, a function) over the first_stage space; save_to / name: a saved run."""
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.golden.questions import cutoffs, provenance
    from vectrixdb.evaluation.runs.report import now

    started = now()
    if not (hasattr(db, "add_vectors") and hasattr(db, "spaces")):
        raise BadType(f"compare_embedders builds vector spaces in a Vectrix collection, not {type(db).__name__}")
    candidates = [embedders] if isinstance(embedders, str) or hasattr(embedders, "encode") else list(embedders or [])
    if not candidates:
        raise BadInput("embedders: give at least one model string, route string or Embedder to compare")
    if not 0 < confidence < 1:
        raise BadInput(f"confidence must lie strictly between 0 and 1, not {confidence}")
    table = _prices(prices)
    ks = cutoffs(k)
    asked = questions_of(golden, db)
    labelled = [q for q in asked if q.labelled]
    if not labelled:
        raise BadInput(f"the golden questions hold no labelled question ({len(asked)} read): there is nothing to score, "
                       "and an empty comparison is never reported as a perfect one")
    meta = provenance(golden, asked, db) | ({"name": name.strip()} if isinstance(name, str) and name.strip() else {})
    rows: list[dict] = []
    reports: list[Report] = []
    notes: list[str] = []
    labels: list[str] = []
    for candidate in candidates:
        row, report = _embedder_row(db, candidate, labelled, ks, by, depth, confidence, seed, progress, table)
        if row["name"] in labels:
            raise BadInput(f"candidate {row['name']!r} is given twice: each candidate is compared once")
        labels.append(row["name"])
        rows.append(row)
        reports.append(report)
    quality = f"ndcg@{ks[-1]}"
    if rerankers:
        space = first_stage or _leader_space(rows, quality)
        if space not in db.spaces:
            raise BadInput(f"first_stage={space!r}: no such vector space; this collection has {sorted(db.spaces)}")
        for rr in rerankers:
            row, report = _reranker_row(db, rr, space, labelled, ks, by, depth, confidence, seed, progress, table)
            if row["name"] in labels:
                raise BadInput(f"candidate {row['name']!r} is given twice: each candidate is compared once")
            labels.append(row["name"])
            rows.append(row)
            reports.append(report)
    values = _verdicts(rows, reports, quality, 1 - confidence)
    first = reports[0]
    values.update({"by": first["by"], "by_from": first["by_from"], "k": ks, "depth": first["depth"], "mode": "dense",
                   "questions": first["questions"], "unlabelled": len(asked) - len(labelled),
                   "cannot_fail": first["cannot_fail"], "confidence": confidence,
                   "prices": table, "notes": notes + [n for r in rows for n in r.pop("notes")],
                   "warnings": list(dict.fromkeys(w for rep in reports for w in rep["warnings"])),
                   "misses": reports[labels.index(values["leader"])]["misses"]})
    import pandas as pd

    frame = pd.DataFrame([{c: r.get(c) for c in COLUMNS} for r in values["candidates"]]).set_index("name")
    outcomes = pd.DataFrame({label: rep.frame[quality] for label, rep in zip(labels, reports)})
    outcomes.index.name = "id"
    report = Report("embedders", values, frame, tables={"outcomes": outcomes}, started=started, meta=meta)
    if save_to:
        report.save(save_to)
    return report


COLUMNS = ("name", "kind", "model", "space", "rerank", "dim", "ndcg", "ndcg low", "ndcg high", "recall", "recall low",
           "recall high", "mrr", "mrr low", "mrr high", "p_value", "p_holm", "verdict", "questions_needed",
           "embed_s_per_1k_chunks", "chunks_embedded", "chunks_from_cache", "query_p50_ms", "query_p95_ms",
           "index_bytes", "cost_per_1k_chunks", "cost_per_1k_queries", "cost")


def _prices(prices: Any) -> dict[str, float]:
    """{name: dollars per million tokens} from {name: {"per_million_tokens": $}} (or "prompt", or a number)."""
    if prices is None:
        return {}
    if not isinstance(prices, dict):
        raise BadType(f"prices is a dict {{model: {{'per_million_tokens': dollars}}}}, not {type(prices).__name__}")
    out = {}
    for key, rate in prices.items():
        value = rate.get("per_million_tokens", rate.get("prompt")) if isinstance(rate, dict) else rate
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise BadInput(f"prices[{key!r}]: give {{'per_million_tokens': dollars}} (a number >= 0), not {rate!r}")
        out[str(key)] = float(value)
    return out


def _space_name(model: str, taken: Any) -> str:
    """A new space's name from the model's (letters, digits, '.', '_', '-'), made unique."""
    import hashlib

    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[-40:] or "model"
    base = f"cmp-{stem}-{hashlib.sha256(model.encode()).hexdigest()[:6]}"
    out, n = base, 2
    while out in taken:
        out, n = f"{base}-{n}", n + 1
    return out


def _spent(part: Any) -> dict | None:
    """A served route's totals (requests, tokens, unmetered, texts), None for a local model."""
    totals = getattr(part, "totals", None)
    if not callable(totals):
        return None
    got = totals()
    return {"tokens": got.get("tokens") or 0, "unmetered": got.get("unmetered") or 0,
            "texts": got.get("texts") or 0, "replies": got.get("replies") or 0}


def _cost(before: dict | None, after: dict | None, sent: int, price: float | None, what: str) -> tuple[float | None, str]:
    """Dollars per 1,000 texts from the tokens the route reported for the `sent` texts, and the words."""
    if before is None or after is None:
        return None, LOCAL
    if sent <= 0:
        return None, f"not measured: every {what} came from the embedding cache (no tokens were spent now)"
    if after["unmetered"] > before["unmetered"]:
        return None, "no token record: the route's replies did not count their tokens"
    tokens = after["tokens"] - before["tokens"]
    if price is None:
        return None, f"{NOT_PRICED} ({tokens / sent * 1000:,.0f} tokens per 1,000 {PLURAL[what]})"
    return tokens / sent * 1000 * price / 1e6, f"${price:g} per million tokens"


def _price(table: dict[str, float], *names: Any) -> float | None:
    return next((table[str(n)] for n in names if n is not None and str(n) in table), None)


def _score(db, labelled, ks, by, depth, confidence, seed, progress, **search) -> Report:
    from vectrixdb.evaluation.retrieval.scoring import retrieval_report

    report = retrieval_report(db, labelled, ks, by, depth=depth, confidence=confidence, seed=seed, progress=progress,
                              mode="dense", **search)
    if report["ndcg"] is None:
        raise BadInput(f"the questions cannot be scored here: {report['reason']}")
    return report


def _quality(row: dict, report: Report) -> None:
    top, ci = report["k"][-1], report["ci"]
    for family, got, interval in (("ndcg", report["ndcg"][top], ci["ndcg"][top]),
                                  ("recall", report["recall"][top], ci["recall"][top]),
                                  ("mrr", report["mrr"], ci["mrr"])):
        row[family] = got
        row[f"{family} low"], row[f"{family} high"] = (interval or [None, None])[0], (interval or [None, None])[-1]
    row["query_p50_ms"] = report["latency_ms"]["median"]
    row["query_p95_ms"] = report["latency_ms"]["p95"]


def _embedder_row(db, candidate, labelled, ks, by, depth, confidence, seed, progress, table) -> tuple[dict, Report]:
    from vectrixdb.embedding import get_embedder

    emb = get_embedder(candidate)
    label = candidate if isinstance(candidate, str) else str(emb.name)
    notes: list[str] = []
    row: dict[str, Any] = {"name": label, "kind": "embedder", "model": str(emb.name), "rerank": None, "notes": notes}
    held = [s for s, info in (db.spaces if db.exists else {}).items() if info.get("model") == emb.name]
    served_before = _spent(emb)
    if held:
        space = held[0]
        if not isinstance(candidate, str):  # an Embedder object: the space is searched with it, as given
            db._embedders.setdefault(space, emb)
        emb = db.embedder(space)  # the collection's own instance of it: what its searches embed with
        served_before = _spent(emb)
        row.update({"embed_s_per_1k_chunks": None, "chunks_embedded": 0, "chunks_from_cache": None})
        notes.append(f"{label}: the collection already held its vectors in space {space!r}, reused (no build time)")
        chunk_cost: tuple[float | None, str] = (None, LOCAL if served_before is None else
                                                "not measured: the space was built before this comparison")
    else:
        space = _space_name(str(emb.name), db.spaces if db.exists else {})
        int(emb.dim)  # before the clock: a route's one probe of its dimension, a local model's load
        served_before = _spent(emb)
        embedded, reused = getattr(emb, "embedded", None), getattr(emb, "reused", None)
        start = time.perf_counter()
        chunks = db.add_vectors(space, emb, progress=progress)
        seconds = time.perf_counter() - start
        served_after = _spent(emb)
        ran = getattr(emb, "embedded", 0) - embedded if isinstance(embedded, int) else chunks
        from_cache = getattr(emb, "reused", 0) - reused if isinstance(reused, int) else None
        row.update({"chunks_embedded": ran, "chunks_from_cache": from_cache,
                    "embed_s_per_1k_chunks": seconds / ran * 1000 if ran > 0 else None})
        if ran <= 0:
            notes.append(f"{label}: every chunk's vector came from the embedding cache: no embedding time to report")
        chunk_cost = _cost(served_before, served_after, ran, _price(table, label, emb.name, getattr(emb, "model", None)),
                           "chunk")
    row.update({"space": space, "dim": int(db.spaces[space]["dim"])})
    emb = db.embedder(space)
    before, sent_before = _spent(emb), getattr(emb, "embedded", 0)
    report = _score(db, labelled, ks, by, depth, confidence, seed, progress, vectors=space)
    after = _spent(emb)
    queries = _cost(before, after, getattr(emb, "embedded", 0) - sent_before,
                    _price(table, label, emb.name, getattr(emb, "model", None)), "query")
    _quality(row, report)
    row["index_bytes"] = _index_bytes(db, space)
    row["cost_per_1k_chunks"], row["cost_per_1k_queries"] = chunk_cost[0], queries[0]
    row["cost"] = _cost_words(chunk_cost[1], queries[1])
    return row, report


def _cost_words(chunks: str, queries: str) -> str:
    return chunks if chunks == queries else f"chunks: {chunks}; queries: {queries}"


def _reranker_row(db, rr, space, labelled, ks, by, depth, confidence, seed, progress, table) -> tuple[dict, Report]:
    from vectrixdb.evaluation.retrieval.scoring import _name
    from vectrixdb.served.wire import is_served

    label = f"{space} + rerank {_name(rr)}"
    part = rr
    if isinstance(rr, str) and is_served(rr):
        from vectrixdb.served.rerank import RerankRoute

        part = RerankRoute.named(rr)
    before, scored = _spent(part), getattr(part, "scored", 0)
    report = _score(db, labelled, ks, by, depth, confidence, seed, progress, vectors=space, rerank=rr)
    after = _spent(part)
    sent = len(labelled) if getattr(part, "scored", 0) > scored else 0
    price = _price(table, _name(rr), getattr(part, "model", None))
    queries = _cost(before, after, sent, price, "query")
    row: dict[str, Any] = {"name": label, "kind": "reranker", "model": _name(rr), "space": space, "rerank": _name(rr),
                           "dim": int(db.spaces[space]["dim"]), "embed_s_per_1k_chunks": None,
                           "chunks_embedded": None, "chunks_from_cache": None, "index_bytes": _index_bytes(db, space),
                           "cost_per_1k_chunks": None, "cost_per_1k_queries": queries[0],
                           "cost": f"chunks: none (a reranker embeds no chunk); queries: {queries[1]}",
                           "notes": [f"{label}: the first stage is space {space!r} searched dense; its query times "
                                     "include the rerank"]}
    _quality(row, report)
    return row, report


def _index_bytes(db, space: str) -> int | None:
    path = Path(db.folder) / f"vectors.{space}.usearch"
    return path.stat().st_size if path.exists() else None


def _leader_space(rows: list[dict], quality: str) -> str:
    return max(rows, key=lambda r: r["ndcg"])["space"]  # max keeps the first of equal means


def _verdicts(rows: list[dict], reports: list[Report], quality: str, alpha: float) -> dict[str, Any]:
    """The leader, the paired tests against it with Holm, questions needed, the best (or why none)."""
    from vectrixdb.evaluation.runs.power import detectable_difference, questions_for
    from vectrixdb.evaluation.runs.stats import SignFlip, holm

    lead = max(range(len(rows)), key=lambda i: rows[i]["ndcg"])
    top = reports[lead].frame[quality]
    m = len(rows) - 1
    others = [i for i in range(len(rows)) if i != lead]
    p = []
    for i in others:
        diff = (reports[i].frame[quality] - top.reindex(reports[i].frame.index)).astype(float).to_numpy()
        p.append(SignFlip(diff, seed=0).p(0.0))
        row = rows[i]
        row["p_value"] = p[-1]
        level = alpha / m
        got = detectable_difference(diff, alpha=level, power=POWER)
        gap = float(np.mean(diff))
        needed = None
        if gap and (got["discordance"] if got["discordance"] is not None else (got["sd"] or 0)) > 0:
            needed = questions_for(abs(gap), float(got["sd"] or 0.0), level, POWER, discordance=got["discordance"])
        row["questions_needed"] = needed
        row["questions_needed_why"] = None if needed is not None else (
            "no gap: the two rank every question alike" if not gap else got["reason"] or "no number of questions would")
    for i, adjusted in zip(others, holm(p)):
        rows[i]["p_holm"] = adjusted
        rows[i]["verdict"] = "cannot be told apart from the leader" if adjusted >= alpha else "behind the leader"
    tied = [rows[i]["name"] for i in others if rows[i]["p_holm"] >= alpha]
    leader = rows[lead]
    leader.update({"p_value": None, "p_holm": None, "questions_needed": None, "questions_needed_why": None})
    if m == 0:
        leader["verdict"] = "the only candidate"
        best, verdict = None, ONE
    elif tied:
        leader["verdict"] = "leader (not told apart from " + ", ".join(tied) + ")"
        best = None
        verdict = (f"no best: {leader['name']} leads on {quality} ({leader['ndcg']:.3f}) but these questions cannot tell "
                   f"it apart from {', '.join(tied)} (Holm-adjusted paired p >= {alpha:g})")
    else:
        leader["verdict"] = "best"
        best = {"name": leader["name"], quality: leader["ndcg"], "space": leader["space"]}
        verdict = f"best: {leader['name']} ({quality} {leader['ndcg']:.3f}), told apart from every other candidate"
    order = [lead] + sorted(others, key=lambda i: -rows[i]["ndcg"])
    n = len(reports[lead].frame)
    return {"candidates": [rows[i] for i in order], "leader": leader["name"], "best": best, "tied": tied,
            "verdict": verdict, "quality": quality, "alpha": alpha,
            "rule": ONE if m == 0 else RULE.format(quality=quality, n=n, m=m, alpha=alpha, power=POWER)}


def _cell(value: Any, unit: str | None = None) -> str:
    from vectrixdb.evaluation.runs.kinds import with_unit

    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if unit and isinstance(value, (int, float)):
        return with_unit(value, unit)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _with_ci(row: dict, family: str) -> str:
    low, high = row.get(f"{family} low"), row.get(f"{family} high")
    return _cell(row.get(family)) + (f" [{_cell(low)}, {_cell(high)}]" if low is not None and high is not None else "")


def _money(row: dict, column: str) -> str:
    value = row.get(column)
    if isinstance(value, (int, float)):
        return _cell(value, "$")
    words = row.get("cost") or ""
    part = "chunks" if column.endswith("chunks") else "queries"
    if words.startswith("chunks: "):
        words = dict(x.split(": ", 1) for x in words.split("; ")).get(part, words)
    return words


def embedders_tables(report) -> list[dict[str, Any]]:
    """The run page's (the kind has no section of its own) and the certificate's tables: the rule,
    the candidates (quality with intervals, the test against the leader, questions needed) and
    their cost beside it."""
    rows = report.get("candidates") or []
    if not rows:
        return []
    quality = report.get("quality") or "ndcg"
    top = quality.split("@")[-1]
    head = ["candidate", f"{quality} [95% CI]", f"recall@{top} [95% CI]", "mrr [95% CI]", "Holm p vs leader",
            "verdict", "questions needed"]
    out = [head]
    for r in rows:
        needed = _cell(r.get("questions_needed"), "questions") if r.get("questions_needed") else \
            (r.get("questions_needed_why") or "—")
        out.append([str(r["name"]), _with_ci(r, "ndcg"), _with_ci(r, "recall"), _with_ci(r, "mrr"),
                    _cell(r.get("p_holm")), str(r.get("verdict")), needed])
    cost = [["candidate", "dim", "embedding s per 1,000 chunks", "query p50", "query p95", "index size",
             "$ per 1,000 chunks", "$ per 1,000 queries"]]
    for r in rows:
        cost.append([str(r["name"]), _cell(r.get("dim")), _cell(r.get("embed_s_per_1k_chunks"), "s"),
                     _cell(r.get("query_p50_ms"), "ms"), _cell(r.get("query_p95_ms"), "ms"),
                     _cell(r.get("index_bytes"), "bytes"), _money(r, "cost_per_1k_chunks"),
                     _money(r, "cost_per_1k_queries")])
    return [{"title": f"Verdict: {report.get('verdict')}", "rows": [["rule"], [str(report.get("rule"))]]},
            {"title": f"Candidates ({len(rows)}, leader first; dense search, by={report.get('by')}, "
                      f"{report.get('questions')} questions)", "rows": out},
            {"title": "Cost beside the quality", "rows": cost}]



def comparison_text(report) -> str:
    """The comparison for a terminal: the rule and verdict, then each candidate's line."""
    lines = [f"verdict: {report['verdict']}", f"rule: {report['rule']}", ""]
    for table in embedders_tables(report)[1:]:
        lines.append(table["title"])
        for row in table["rows"]:
            lines.append("  " + " | ".join(row))
        lines.append("")
    lines += [f"note: {n}" for n in report.get("notes") or []]
    lines += [f"warning: {w}" for w in report.get("warnings") or []]
    if report.get("run_id"):
        lines.append(f"saved as run {report['run_id']}")
    return "\n".join(lines)
