"""Ranking metrics as NumPy kernels over a gain matrix, one row per question.

Every metric is computed from the same two arrays, so a report of 100,000 questions costs a few
array operations, not a Python loop per metric:

- `gains[q, i]`: the gain of the i-th result of question q (0 when it is not relevant, or when the
  ranking is shorter than the depth); a relevant label earns its gain once, at its first rank.
- `found[q, i]`: how many relevant labels the i-th result satisfies for the first time (1 or 0 for
  ordinary ids; an evidence chunk can hold two quotes). Recall counts labels, precision results.
- `ideal[q, j]`: the gains of q's relevant labels sorted descending (0-padded), and `n_rel[q]`.

Definitions follow trec_eval (and so ir_measures/pytrec_eval), checked against them in the tests:

    precision@k = relevant in top k / k                  (k, not the number returned)
    recall@k    = relevant in top k / number relevant
    f1@k        = 2 P R / (P + R), 0 when both are 0
    hit_rate@k  = 1 if anything relevant is in the top k
    mrr         = 1 / rank of the first relevant result (0 if none is returned)    [Voorhees 1999]
    ndcg@k      = sum_i gain_i / log2(i + 1) over the top k, divided by the same sum over the
                  ideal ranking                                               [Jarvelin & Kekalainen 2002]
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from operator import itemgetter
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Measure:
    """A metric at a cut-off; str() is its canonical name (`ndcg@10`, `mrr`), parse() reads it back."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @classmethod
    def parse(cls, text: str) -> "Measure":
        match = re.fullmatch(r"([a-z_0-9]+?)(?:@(\d+))?", text.strip().lower())
        if not match or match[1] not in KERNELS:
            raise ValueError(f"unknown measure {text!r}; known: {sorted(KERNELS)}")
        k = int(match[2]) if match[2] else None
        if (k is None) != (match[1] == "mrr"):
            raise ValueError(f"{text!r}: {'mrr takes no' if match[1] == 'mrr' else match[1] + ' needs a'} cut-off")
        return cls(match[1], k)


@dataclass(frozen=True)
class Judged:
    """The arrays every kernel reads (see the module docstring)."""

    gains: np.ndarray
    found: np.ndarray
    ideal: np.ndarray
    n_rel: np.ndarray


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
    rel = j.found > 0
    return np.where(rel.any(axis=1), 1.0 / (rel.argmax(axis=1) + 1), 0.0)


@kernel("ndcg")
def ndcg(j: Judged, k):
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = j.gains[:, :k] @ discount[: j.gains[:, :k].shape[1]]
    top = j.ideal[:, :k]
    idcg = top @ discount[: top.shape[1]]
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def compute(judged: Judged, measures: list[Measure]) -> dict[str, np.ndarray]:
    """Per-question values of each measure; the arrays are padded to the deepest cut-off."""
    depth = max([m.k for m in measures if m.k] + [1])
    j = Judged(_pad(judged.gains, depth), _pad(judged.found, depth), _pad(judged.ideal, depth), judged.n_rel)
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
    gains, found = np.zeros((n, depth)), np.zeros((n, depth))
    for row, (ranking, judged) in enumerate(zip(rankings, qrels)):
        _judge_slow(ranking, judged, gains[row], found[row])
    return Judged(gains, found, ideal, n_rel)


def _judge_slow(ranking: list, judged: dict, gains: np.ndarray, found: np.ndarray) -> None:
    seen: set = set()
    for i, item in enumerate(ranking):
        for label in item if isinstance(item, tuple) else (item,):
            grade = judged.get(label, 0)
            if grade > 0 and label not in seen:
                gains[i] += grade
                found[i] += 1
                seen.add(label)


def metric_table(run: dict[str, list[str] | dict[str, float]], qrels: dict[str, dict[str, float]],
                 measures: list[str]) -> "object":
    """Per-query measures for a TREC-style run and qrels (dicts), as a pandas DataFrame.

    `run[q]` is a ranked list of ids, or {id: score} (ranked by score, ties by id as trec_eval
    does: descending). Queries without judgements are left out, as trec_eval leaves them."""
    import pandas as pd

    parsed = [Measure.parse(m) for m in measures]
    depth = max([m.k for m in parsed if m.k] + [1])
    ids = [q for q in run if q in qrels]
    rankings = [_ranked(run[q]) for q in ids]
    if any(m.k is None for m in parsed):
        depth = max(depth, max((len(r) for r in rankings), default=1))
    values = compute(judge(rankings, [qrels[q] for q in ids], depth), parsed)
    return pd.DataFrame(values, index=pd.Index(ids, name="query"))


def _ranked(entry) -> list[str]:
    """Ids by score, highest first; equal scores by id, descending, as trec_eval orders them."""
    if isinstance(entry, dict):
        items = sorted(entry.items(), reverse=True)  # id descending...
        items.sort(key=itemgetter(1), reverse=True)  # ...kept within equal scores (the sort is stable)
        return [d for d, _ in items]
    return list(entry)
