"""Ranking measures for runs and qrels: metric_table, and the judging retrieval_report builds on.

What a measure is lives in measures.py (one declaration per family, its formula in its
docstring); what computes it, in providers.py (RANKED over judged arrays, SPARSE over the ranks
of the relevant labels of {id: score} runs). This module turns runs into the providers' inputs:

- `judge(rankings, qrels, depth)` -> providers.Judged: results as ids or tuples of the labels they
  satisfy, in label slots. nDCG is built on label slots on both sides, so the ideal is the best
  any ranking could do with the same slots: a chunk holding two quotes fills two slots at its
  rank, and the ideal gets two slots there too. nDCG never exceeds 1, and a ranking that puts
  every label first scores 1.
- `_relevant_ranks(runs, qrels, ids)` -> providers.Ranks: each relevant label's rank in an
  {id: score} run (1 + results scored above it + equal scores with a larger id: trec_eval's order),
  a block of queries at a time; None when a run is not a dict.

Grades are graded relevance (BEIR qrels' 0/1/2): nDCG uses them as gains; the other measures
count a label as relevant when its grade is above 0. A grade of 0 is judged non-relevant; a grade
below 0 is, as trec_eval reads it, in the pool but not judged: bpref neither counts it among the
non-relevant nor as one ranked above a relevant result, and the judged-only measures
(ndcg_judged, unjudged) take it as unjudged. Which queries are scored: metric_table.
Every name that was public here still imports from here (Measure, Judged, kernel, KERNELS, ...).
"""
from __future__ import annotations

import importlib
import itertools
import math
import struct
from operator import itemgetter
from typing import Any, Iterable, cast

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.retrieval.measures import FAMILIES, Family, Measure, declare  # noqa: F401  (public here)
from vectrixdb.evaluation.retrieval.providers import (PROVIDERS, RANKED, SPARSE, Judged, Kernel, Ranks,  # noqa: F401
                                            check, f1, hit_rate, mrr, ndcg, precision, recall)
from vectrixdb.evaluation.retrieval.providers import pad as _pad

KERNELS = RANKED.kernels  # the ranked provider's kernels, by family
kernel = RANKED.provides  # @kernel("name"): a ranked kernel for a family declared in measures.py


def compute(judged: Judged, measures: list[Measure]) -> dict[str, np.ndarray]:
    """Per-question values of each measure from judged arrays (the RANKED provider); padded to
    the deepest cut-off. A measure the ranked provider does not compute is refused."""
    check(measures)
    depth = max([m.k for m in measures if m.k] + [1])
    found = _pad(judged.found, depth)
    slot_end = judged.slot_end
    if slot_end is not None and slot_end.shape[1] < depth:  # a missing result fills one empty slot
        extra = slot_end[:, -1:] + np.arange(1, depth - slot_end.shape[1] + 1)
        slot_end = np.hstack([slot_end, extra])
    held = judged.judged
    if held is not None and held.shape[1] < depth:  # no result there: -1 (see providers.Judged)
        held = np.pad(held, ((0, 0), (0, depth - held.shape[1])), constant_values=-1)
    j = Judged(judged.gains if slot_end is not None else _pad(judged.gains, depth), found, judged.ideal,
               judged.n_rel, slot_end, held, judged.n_nonrel)
    return RANKED.compute(j, measures)


def judge(rankings: list[list], qrels: list[dict[str, float]], depth: int) -> Judged:
    """Arrays from ranked results and {label: grade} per question. A result is a label, or a
    tuple of the labels it satisfies (an evidence chunk holding two quotes); each label earns once."""
    n = len(rankings)
    widest = max((sum(1 for g in q.values() if g > 0) for q in qrels), default=0) or 1
    ideal_flat: list[float] = []
    for judged in qrels:
        positive = sorted((g for g in judged.values() if g > 0), reverse=True)
        ideal_flat += positive + [0.0] * (widest - len(positive))
    ideal = np.array(ideal_flat, dtype=float).reshape(n, widest)
    n_rel = (ideal > 0).sum(axis=1).astype(float)
    n_nonrel = np.array([sum(1 for g in q.values() if g == 0) for q in qrels], dtype=float)
    rankings = [r[:depth] for r in rankings]
    if all(len(set(r)) == len(r) and not any(isinstance(x, tuple) for x in r) for r in rankings):
        # plain distinct ids (every run given as a dict): one list of gains, one conversion
        pad, flat = [0] * depth, []
        for ranking, judged in zip(rankings, qrels):
            get = judged.get
            flat += [get(item, math.nan) for item in ranking]  # NaN: no label judges it
            flat += pad[: depth - len(ranking)]
        grades = np.array(flat, dtype=float).reshape(n, depth)
        held = np.where(np.isnan(grades) | (grades < 0), 0, np.where(grades > 0, 2, 1))  # below 0: pooled, not judged
        held[np.arange(depth) >= np.array([len(r) for r in rankings])[:, None]] = -1  # no result there
        gains = np.maximum(np.nan_to_num(grades), 0.0)
        return Judged(gains, (gains > 0).astype(float), ideal, n_rel, None, held, n_nonrel)
    slots, found, slot_end = [], np.zeros((n, depth)), np.zeros((n, depth), dtype=int)
    held = np.full((n, depth), -1)  # judged (2 relevant, 1 grade 0), 0 unjudged, -1 no result
    for row, (ranking, judged) in enumerate(zip(rankings, qrels)):
        slots.append(_judge_slow(ranking, judged, found[row], slot_end[row]))
        for i, item in enumerate(ranking):
            labels = [x for x in (item if isinstance(item, tuple) else (item,)) if judged.get(x, -1) >= 0]
            held[row, i] = 2 if any(judged[x] > 0 for x in labels) else 1 if labels else 0
    gains = np.zeros((n, max(len(s) for s in slots) if slots else depth))
    for row, s in enumerate(slots):
        gains[row, : len(s)] = s
    return Judged(gains, found, ideal, n_rel, slot_end, held, n_nonrel)


def _judge_slow(ranking: list, judged: dict, found: np.ndarray, slot_end: np.ndarray) -> list[float]:
    """Fill one question's `found` and `slot_end`; return its slot gains (see providers.Judged)."""
    seen: set = set()
    slots: list[float] = []
    for i in range(len(found)):
        item = ranking[i] if i < len(ranking) else ()
        new = []
        for label in item if isinstance(item, tuple) else (item,):
            grade = judged.get(label, 0)
            if grade > 0 and label not in seen:
                new.append(grade)
                seen.add(label)
        found[i] = len(new)
        slots += sorted(new, reverse=True) or [0.0]
        slot_end[i] = len(slots)
    return slots


def metric_table(run: dict[str, list[str] | dict[str, float]], qrels: dict[str, dict[str, float]],
                 measures: list[str]) -> "object":
    """Per-query measures for a TREC-style run and qrels (dicts), as a pandas DataFrame.

    Which queries are scored follows trec_eval (and so pytrec_eval and ir_measures):
    - a query of the run with judgement lines is scored, even when every grade is 0: nothing is
      there to find, so each measure is 0 for it, and it counts in every mean;
    - a query of the run with no judgement lines (absent from qrels, or {}) is left out and counted
      as unlabelled: `table.attrs["unlabelled"]` lists them;
    - a judged query the run does not hold is not scored either (trec_eval without -c):
      `table.attrs["not_in_run"]` lists them (ir_measures, like trec_eval -c, counts them as 0).

    `run[q]` is a ranked list of ids, or {id: score}: ranked by score, equal scores by id,
    descending, as trec_eval orders them. A score is a finite number; NaN or an infinity has no
    place in that order and is a BadInput naming the query and the document. `mrr` without a
    cut-off reads the whole ranking; `mrr@k` the top k. A measure no provider computes is refused.

    Runs given as {id: score} take the SPARSE provider when it computes every measure asked: each
    score is read once, a block of queries at a time, and only the relevant ids are looked up, so
    100,000 queries x 100 results take under three times one Python pass that reads every id and
    score, in under 20 MB (benchmarks/metrics_speed.json). Otherwise they are sorted and judged for
    the RANKED provider."""
    import pandas as pd

    parsed = [Measure.parse(m) for m in measures]
    check(parsed)
    found = list(map(qrels.get, run))  # the queries that have judgements, in the run's order (loops in C)
    judged: list[dict[str, float]]
    runs: Iterable  # when every query is judged, the run's values as they are (read a block at a time)
    if all(found):
        ids, runs, judged, unlabelled = list(run), run.values(), cast("list[dict[str, float]]", found), []
    else:
        keep = list(map(bool, found))
        ids, runs = list(itertools.compress(run, keep)), list(itertools.compress(run.values(), keep))
        judged = cast("list[dict[str, float]]", list(itertools.compress(found, keep)))
        unlabelled = [q for q, k in zip(run, keep) if not k]
    ranks = _relevant_ranks(cast("Iterable[dict]", runs), judged, ids) if ids and SPARSE.computes(parsed) else None
    if ranks is not None:  # every run a dict {id: score}
        values = SPARSE.compute(ranks, parsed)
    else:
        rankings = [_ranked(r, q) for q, r in zip(ids, runs)]
        depth = max([m.k for m in parsed if m.k] + [1])
        if any(m.k is None or FAMILIES[m.name].condensed for m in parsed):  # read to the end
            depth = max(depth, max((len(r) for r in rankings), default=1))
        values = compute(judge(rankings, judged, depth), parsed)
    table = pd.DataFrame(values, index=_query_index(ids, pd))
    table.attrs["unlabelled"] = unlabelled
    # judged queries the run does not hold: none when every judged query is among the scored ones
    missing = len(qrels) > len(ids) and sum(map(bool, qrels.values())) > len(ids)
    table.attrs["not_in_run"] = [q for q, labels in qrels.items() if labels and q not in run] if missing else []
    return table


def _query_index(ids: list, pd: Any) -> Any:
    """pd.Index(ids, name="query"). When pandas keeps strings in pyarrow (pandas 3) and pyarrow reads
    every id as a string, the same index is built from pyarrow's array: one pass over the ids, where
    pandas' own inference takes several (100,000 ids: 40 ms instead of 75)."""
    dtype = pd.Index(ids[:1]).dtype  # what pandas makes of such ids
    if ids and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        pa = importlib.import_module("pyarrow")  # pandas keeps its strings there, so it is installed
        try:
            strings = pa.array(ids)
        except (TypeError, ValueError, ArithmeticError, pa.ArrowException):  # ids of mixed kinds: pandas decides
            strings = None
        if strings is not None and strings.null_count == 0 and (pa.types.is_string(strings.type)
                                                                or pa.types.is_large_string(strings.type)):
            return pd.Index(pd.array(strings, dtype=dtype), name="query")
    return pd.Index(ids, name="query")


def _relevant_ranks(runs: Iterable[dict], qrels: list[dict], ids: list) -> Ranks | None:
    """(question index, rank, grade) of every relevant label; rank is inf when it was not returned.
    None when a run is not a dict {id: score} (a list, or a dict's subclass): those are ranked and judged.

    A relevant id's rank is 1 + the results scored above it + the results with an equal score and
    a larger id (trec_eval's order), counted against its question's row of scores. The questions
    go in blocks of about BLOCK_SCORES scores (_block_ranks), so the arrays stay at one block's
    worth whatever the run's size (100,000 queries x 100 results: tracemalloc's peak 18 MB, where
    one array of all the scores made it 134 MB)."""
    n = len(qrels)
    them = iter(runs)  # a block at a time
    parts = []
    a, step = 0, 64  # the first block's questions; then as many as make about BLOCK_SCORES scores
    while a < n:
        b = min(n, a + step)
        part = _block_ranks(list(itertools.islice(them, b - a)), qrels[a:b], ids, a)
        if part is None:
            return None
        parts.append(part)
        step = max(1, BLOCK_SCORES * (b - a) // max(part[3], 1))
        a = b
    return Ranks(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                 np.concatenate([p[2] for p in parts]), n)


BLOCK_SCORES = 1 << 16  # scores per block in _relevant_ranks (512 kB of float64; 2**14 to 2**18 ran alike)


def _block_ranks(block: list[dict], judged: list[dict], ids: list, a: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """The questions from a on (`block` their runs, `judged` their qrels): (question index, rank, grade)
    of their relevant labels, and their number of scores; None when one of their runs is not a dict
    (checked here, where the dicts are read anyway).

    The block's scores are read into one array (and checked finite) and padded into a matrix, one
    row per question; each relevant label is looked up in its question's run (every loop over ids
    and scores runs in C: map, chain, struct, fromiter) and its rank counted against its row.
    Python loops only to break ties."""
    b = a + len(block)
    if set(map(type, block)) != {dict}:
        return None
    if set(map(type, judged)) != {dict}:  # qrels given as another mapping: read as dicts (same order)
        judged = [dict(j) for j in judged]
    sizes = list(map(len, block))
    total = sum(sizes)
    scores = _score_array(block, ids, a, total)
    width = max(sizes)
    if sizes.count(width) == len(sizes):
        matrix = scores.reshape(b - a, width)
    else:
        width = max(width, 1)
        matrix = np.full((b - a, width), -np.inf)
        size_a = np.array(sizes, dtype=np.int64)
        rows = np.repeat(np.arange(b - a), size_a)
        cols = np.arange(len(scores)) - np.repeat(np.cumsum(size_a) - size_a, size_a)
        matrix[rows, cols] = scores
    n_labels = list(map(len, judged))
    grades = _grades(judged, ids[a:b], sum(n_labels))
    keep = grades > 0  # relevant: a grade above 0, kept in qrels' order
    local = np.repeat(np.arange(b - a), n_labels)[keep]
    # each relevant label looked up in its own question's run (NaN: not returned)
    labels = itertools.compress(itertools.chain.from_iterable(judged), keep)
    owners = itertools.compress(itertools.chain.from_iterable(map(itertools.repeat, block, n_labels)), keep)
    count = len(local)
    score_a = np.fromiter(map(dict.get, owners, labels, itertools.repeat(math.nan, count)), np.float64, count)
    rank = np.full(count, np.inf)
    returned = np.flatnonzero(~np.isnan(score_a))  # scores are finite, so NaN only marks a label not returned
    chunk = max(1, 2_000_000 // max(width, 1))  # compare in slices: never more than ~2M cells at once
    named: list | None = None  # the relevant labels by name, listed only when a tie needs them
    for c in range(0, len(returned), chunk):
        at = returned[c: c + chunk]
        row, s = matrix[local[at]], score_a[at][:, None]
        rank[at] = np.count_nonzero(row > s, axis=1) + 1.0
        equal = row == s
        if np.count_nonzero(equal) == len(at):  # each score equals only itself: no ties in this slice
            continue
        for j in at[np.count_nonzero(equal, axis=1) > 1]:  # equal scores: larger ids first
            if named is None:
                named = list(itertools.compress(itertools.chain.from_iterable(judged), keep))
            me, ranking = named[j], block[int(local[j])]
            rank[j] += sum(1 for doc, v in ranking.items() if float(v) == score_a[j] and doc > me)
    return local + a, rank, grades[keep], total


def _grades(judged: list[dict], ids: list, count: int) -> np.ndarray:
    """Every grade of the qrels as float64, read by struct.pack (faster than np.fromiter); a grade
    that is not a number (a string, None) is BadInput naming its query and label, never read as one."""
    try:
        return np.frombuffer(struct.pack(f"{count}d", *itertools.chain.from_iterable(map(dict.values, judged))))
    except struct.error:
        for q, labels in zip(ids, judged):
            for label, grade in labels.items():
                if isinstance(grade, (str, bytes)) or not isinstance(grade, (int, float, np.number)):
                    raise BadInput(f"query {q!r}: the grade of {label!r} is {grade!r}, not a number") from None
        raise


def _score_array(runs: list[dict], ids: list, a: int, total: int) -> np.ndarray:
    """Every score of the runs (those of ids[a:]) in one array; a score that is not a finite number is named.

    struct.pack reads a float (or anything float() takes without parsing a string) a fifth faster
    than np.fromiter; what it refuses (a string, None, ...) takes np.fromiter's path, as before."""
    try:
        scores = np.frombuffer(struct.pack(f"{total}d", *itertools.chain.from_iterable(map(dict.values, runs))))
        if np.isfinite(scores).all():
            return scores
    except struct.error:
        pass
    try:
        scores = np.fromiter(itertools.chain.from_iterable(map(dict.values, runs)), np.float64, total)
        if np.isfinite(scores).all():
            return scores
    except (TypeError, ValueError):
        pass
    for q, ranking in zip(ids[a:], runs):
        _check_scores(q, ranking)
    raise AssertionError("unreachable: _check_scores names the bad score")


def _check_scores(q, scores: dict) -> None:
    """Every score reads as a finite float (as NumPy reads the sparse path's), else BadInput naming it."""
    for doc, v in scores.items():
        try:
            ok = math.isfinite(float(v))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise BadInput(f"run[{q!r}][{doc!r}] = {v!r}: a score must be a finite number "
                           "(NaN and infinity have no place in a ranking by score)")


def _ranked(entry, q=None) -> list[str]:
    """Ids by score, highest first; equal scores by id, descending, as trec_eval orders them."""
    if isinstance(entry, dict):
        _check_scores(q, entry)
        items = sorted(((d, float(v)) for d, v in entry.items()), reverse=True)  # id descending...
        items.sort(key=itemgetter(1), reverse=True)  # ...kept within equal scores (the sort is stable)
        return [d for d, _ in items]
    return list(entry)
