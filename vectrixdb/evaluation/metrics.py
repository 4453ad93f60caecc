"""Ranking metrics as NumPy kernels over judged arrays, one row per question.

Every metric is computed from the same few arrays, so a report of 100,000 questions costs a few
array operations, not a Python loop per metric:

- `found[q, i]`: how many labels the i-th result satisfies for the first time. A label earns once,
  at its first rank; a result that only repeats labels already earned counts as not relevant (as a
  repeated document does in trec_eval). An evidence or page result can satisfy two labels at once.
- `gains[q, s]`: the gains in *label slots*. Each result occupies one slot, or one per label it
  newly satisfies when it satisfies several, holding those labels' grades best first; `slot_end[q,
  i]` is how many slots the first i + 1 results fill (None when every result fills exactly one,
  the usual case of plain ids, where slots and results coincide).
- `ideal[q, j]`: the grades of q's relevant labels sorted descending (0-padded), and `n_rel[q]`.

nDCG is built on label slots on both sides, so the ideal is the best any ranking could do with the
same slots: a chunk holding two quotes fills two slots at its rank, and the ideal gets two slots
there too. nDCG therefore never exceeds 1, and a ranking that puts every label first scores 1.

Definitions follow trec_eval (and so ir_measures/pytrec_eval), checked against them in the tests:

    precision@k = results in the top k that earn a label / k      (k, not the number returned)
    recall@k    = labels earned in the top k / number of relevant labels
    f1@k        = 2 P R / (P + R), 0 when both are 0
    hit_rate@k  = 1 if anything relevant is in the top k
    mrr@k       = 1 / rank of the first relevant result within the top k, else 0   [Voorhees 1999]
    mrr         = the same over the whole ranking given (trec_eval's recip_rank)
    ndcg@k      = sum over the slots of the top k results of grade_s / log2(s + 1), divided by
                  the same sum over as many slots of the ideal ranking       [Jarvelin & Kekalainen 2002]

Grades are graded relevance (BEIR qrels' 0/1/2): nDCG uses them as gains (trec_eval's linear gain);
the other measures count a label as relevant when its grade is above 0. A question whose
judgements hold no grade above 0 is not scored: it has no relevant label to find.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Callable

import numpy as np

from vectrixdb.errors import BadInput


@dataclass(frozen=True)
class Measure:
    """A metric at a cut-off; str() is its canonical name (`ndcg@10`, `mrr@10`, `mrr`), parse() reads it back.

    `mrr` without a cut-off reads the whole ranking it is given; every other measure needs one."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @classmethod
    def parse(cls, text: str) -> "Measure":
        match = re.fullmatch(r"([a-z_0-9]+?)(?:@(\d+))?", text.strip().lower())
        if not match or match[1] not in KERNELS:
            raise BadInput(f"unknown measure {text!r}; known: {sorted(KERNELS)}")
        k = int(match[2]) if match[2] else None
        if k is None and match[1] != "mrr":
            raise BadInput(f"{text!r}: {match[1]} needs a cut-off, e.g. {match[1]}@10")
        if k == 0:
            raise BadInput(f"{text!r}: a cut-off counts results from 1")
        return cls(match[1], k)


@dataclass(frozen=True)
class Judged:
    """The arrays every kernel reads (see the module docstring)."""

    gains: np.ndarray
    found: np.ndarray
    ideal: np.ndarray
    n_rel: np.ndarray
    slot_end: np.ndarray | None = None


Kernel = Callable[[Judged, int | None], np.ndarray]
KERNELS: dict[str, Kernel] = {}


def kernel(name: str):
    def add(fn: Kernel) -> Kernel:
        if name in KERNELS:
            raise ValueError(f"measure {name!r} is defined twice")
        KERNELS[name] = fn
        return fn
    return add


@kernel("precision")
def precision(j: Judged, k):
    return (j.found[:, :k] > 0).sum(axis=1) / k


@kernel("recall")
def recall(j: Judged, k):
    return np.divide(j.found[:, :k].sum(axis=1), j.n_rel, out=np.zeros(len(j.n_rel)), where=j.n_rel > 0)


@kernel("f1")
def f1(j: Judged, k):
    p, r = precision(j, k), recall(j, k)
    return np.divide(2 * p * r, p + r, out=np.zeros(len(p)), where=(p + r) > 0)


@kernel("hit_rate")
def hit_rate(j: Judged, k):
    return (j.found[:, :k] > 0).any(axis=1).astype(float)


@kernel("mrr")
def mrr(j: Judged, k):
    rel = j.found[:, :k] > 0 if k else j.found > 0
    return np.where(rel.any(axis=1), 1.0 / (rel.argmax(axis=1) + 1), 0.0)


@kernel("ndcg")
def ndcg(j: Judged, k):
    if j.slot_end is None:  # one slot per result: the top k slots are the top k results
        width = k
        mask = None
    else:
        filled = j.slot_end[:, k - 1]
        width = int(filled.max()) if len(filled) else k
        mask = np.arange(width) < filled[:, None]
    discount = 1.0 / np.log2(np.arange(2, width + 2))
    gains, ideal = _pad(j.gains, width)[:, :width], _pad(j.ideal, width)[:, :width]
    if mask is not None:
        gains, ideal = gains * mask, ideal * mask
    dcg, idcg = gains @ discount, ideal @ discount
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def compute(judged: Judged, measures: list[Measure]) -> dict[str, np.ndarray]:
    """Per-question values of each measure; the arrays are padded to the deepest cut-off."""
    depth = max([m.k for m in measures if m.k] + [1])
    found = _pad(judged.found, depth)
    slot_end = judged.slot_end
    if slot_end is not None and slot_end.shape[1] < depth:  # a missing result fills one empty slot
        extra = slot_end[:, -1:] + np.arange(1, depth - slot_end.shape[1] + 1)
        slot_end = np.hstack([slot_end, extra])
    j = Judged(judged.gains if slot_end is not None else _pad(judged.gains, depth), found, judged.ideal,
               judged.n_rel, slot_end)
    return {str(m): KERNELS[m.name](j, m.k) for m in measures}


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2:
        a = a.reshape(len(a), -1)
    if a.shape[1] >= width:
        return a
    return np.pad(a, ((0, 0), (0, width - a.shape[1])))


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
    rankings = [r[:depth] for r in rankings]
    if all(len(set(r)) == len(r) and not any(isinstance(x, tuple) for x in r) for r in rankings):
        # plain distinct ids (every run given as a dict): one list of gains, one conversion
        pad, flat = [0] * depth, []
        for ranking, judged in zip(rankings, qrels):
            get = judged.get
            flat += [get(item, 0) for item in ranking]
            flat += pad[: depth - len(ranking)]
        gains = np.maximum(np.array(flat, dtype=float).reshape(n, depth), 0.0)
        return Judged(gains, (gains > 0).astype(float), ideal, n_rel)
    slots, found, slot_end = [], np.zeros((n, depth)), np.zeros((n, depth), dtype=int)
    for row, (ranking, judged) in enumerate(zip(rankings, qrels)):
        slots.append(_judge_slow(ranking, judged, found[row], slot_end[row]))
    gains = np.zeros((n, max(len(s) for s in slots) if slots else depth))
    for row, s in enumerate(slots):
        gains[row, : len(s)] = s
    return Judged(gains, found, ideal, n_rel, slot_end)


def _judge_slow(ranking: list, judged: dict, found: np.ndarray, slot_end: np.ndarray) -> list[float]:
    """Fill one question's `found` and `slot_end`; return its slot gains (see the module docstring)."""
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

    `run[q]` is a ranked list of ids, or {id: score} (ranked by score, ties by id as trec_eval
    does: descending). Queries without judgements, or whose judgements hold no grade above 0, are
    left out, as trec_eval leaves them: there is nothing to find. `mrr` without a cut-off reads the
    whole ranking; `mrr@k` the top k.

    Runs given as {id: score} take a sparse path: only the relevant ids are looked up, and each
    one's rank is the number of results scored above it (equal scores broken by id, descending),
    so 100,000 queries x 100 results cost little more than reading the scores once."""
    import pandas as pd

    parsed = [Measure.parse(m) for m in measures]
    ids, runs, judged = [], [], []
    for q, ranking in run.items():  # one pass: the questions that have something to find
        labels = qrels.get(q)
        if labels and max(labels.values()) > 0:
            ids.append(q)
            runs.append(ranking)
            judged.append(labels)
    if ids and all(type(r) is dict for r in runs):
        values = _from_ranks(*_relevant_ranks(runs, judged), parsed)
        return pd.DataFrame(values, index=pd.Index(ids, name="query"))
    depth = max([m.k for m in parsed if m.k] + [1])
    rankings = [_ranked(run[q]) for q in ids]
    if any(m.k is None for m in parsed):
        depth = max(depth, max((len(r) for r in rankings), default=1))
    values = compute(judge(rankings, [qrels[q] for q in ids], depth), parsed)
    return pd.DataFrame(values, index=pd.Index(ids, name="query"))


def _relevant_ranks(runs: list[dict], qrels: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(question index, rank, grade) of every relevant label; rank is inf when it was not returned.

    The scores are read once into one array and padded into a matrix, one row per question;
    a relevant id's rank is 1 + the results scored above it + the results with an equal score
    and a larger id (trec_eval's order)."""
    import itertools

    n = len(runs)
    lengths = np.fromiter(map(len, runs), np.int64, n)
    scores = np.fromiter(itertools.chain.from_iterable(map(dict.values, runs)), np.float64, int(lengths.sum()))
    width = int(lengths.max()) if n else 0
    if n and np.all(lengths == width):
        matrix = scores.reshape(n, width)
    else:
        matrix = np.full((n, max(width, 1)), -np.inf)
        rows = np.repeat(np.arange(n), lengths)
        cols = np.arange(len(scores)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        matrix[rows, cols] = scores
    positive = [(i, label, g) for i, judged in enumerate(qrels) for label, g in judged.items() if g > 0]
    labels = [label for _, label, _ in positive]
    qi_a = np.fromiter((i for i, _, _ in positive), np.int64, len(positive))
    grade_a = np.fromiter((g for _, _, g in positive), np.float64, len(positive))
    score_a = np.fromiter((runs[i].get(label, np.nan) for i, label, _ in positive), np.float64, len(positive))
    rank = np.full(len(qi_a), np.inf)
    returned = ~np.isnan(score_a)
    chunk = max(1, 2_000_000 // max(width, 1))  # compare in slices: never more than ~2M cells at once
    for a in range(0, len(qi_a), chunk):
        sl = slice(a, a + chunk)
        rows, s = matrix[qi_a[sl]], score_a[sl][:, None]
        above = (rows > s).sum(axis=1)
        tied = (rows == s).sum(axis=1) - 1
        rank[sl] = np.where(returned[sl], above + 1.0, np.inf)
        for j in np.flatnonzero((tied > 0) & returned[sl]) + a:  # equal scores: larger ids first
            me, ranking = labels[j], runs[qi_a[j]]
            rank[j] += sum(1 for doc, v in ranking.items() if v == score_a[j] and doc > me)
    return qi_a, rank, grade_a, n


def _from_ranks(qi: np.ndarray, rank: np.ndarray, grade: np.ndarray, n: int, measures: list[Measure]) -> dict:
    """The measures from each relevant label's rank (see _relevant_ranks), trec_eval's definitions."""
    n_rel = np.bincount(qi, minlength=n).astype(float)
    order = np.lexsort((-grade, qi))  # each question's grades, best first: the ideal ranking
    starts = np.cumsum(n_rel) - n_rel
    ideal_pos = np.empty(len(qi))
    ideal_pos[order] = np.arange(len(qi)) - np.repeat(starts, n_rel.astype(np.int64))
    first = np.full(n, np.inf)
    np.minimum.at(first, qi, rank)
    out = {}
    for m in measures:
        k = m.k if m.k is not None else np.inf
        inside = rank <= k
        hits = np.bincount(qi, weights=inside, minlength=n)
        if m.name == "precision":
            out[str(m)] = hits / m.k
        elif m.name == "recall":
            out[str(m)] = hits / n_rel
        elif m.name == "f1":
            p, r = hits / m.k, hits / n_rel
            out[str(m)] = np.divide(2 * p * r, p + r, out=np.zeros(n), where=(p + r) > 0)
        elif m.name == "hit_rate":
            out[str(m)] = (hits > 0).astype(float)
        elif m.name == "mrr":
            out[str(m)] = np.where(first <= k, 1.0 / first, 0.0)
        else:  # ndcg
            dcg = np.bincount(qi, weights=np.where(inside, grade / np.log2(np.minimum(rank, 1e18) + 1), 0.0),
                              minlength=n)
            idcg = np.bincount(qi, weights=np.where(ideal_pos < k, grade / np.log2(ideal_pos + 2), 0.0), minlength=n)
            out[str(m)] = np.divide(dcg, idcg, out=np.zeros(n), where=idcg > 0)
    return out


def _ranked(entry) -> list[str]:
    """Ids by score, highest first; equal scores by id, descending, as trec_eval orders them."""
    if isinstance(entry, dict):
        items = sorted(entry.items(), reverse=True)  # id descending...
        items.sort(key=itemgetter(1), reverse=True)  # ...kept within equal scores (the sort is stable)
        return [d for d, _ in items]
    return list(entry)
