"""Providers: the kernels that compute the measure families declared in measures.py.

As in ir_measures, a provider reads one form of input and says which families it computes
(`provider.kernels`); asked for any other it refuses, naming the families it does compute. No
path substitutes one measure for another. Two providers:

- RANKED reads `Judged` arrays (metrics.judge): ranked ids or tuples of labels (an evidence chunk
  satisfying two quotes), in label slots. retrieval_report and runs given as lists use it, and so
  do {id: score} runs that ask for a family SPARSE does not compute.
- SPARSE reads `Ranks`: the rank of every relevant label in an {id: score} run
  (metrics._relevant_ranks), so 100,000 queries x 100 results cost about one read of the scores.

A kernel is `fn(data, k) -> one value per question` (k is None for the whole ranking). A new
measure: declare its family in measures.py, then `@RANKED.provides("name")` (which is what
metrics.kernel does) and, for speed on scored runs, `@SPARSE.provides("name")`; a test checks the
two agree on the same run.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, cast

import numpy as np

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.retrieval.measures import FAMILIES, Measure

Kernel = Callable[[Any, "int | None"], np.ndarray]


class Provider:
    """Computes the families in `kernels` from one form of input (`reads`)."""

    def __init__(self, name: str, reads: str):
        self.name, self.reads = name, reads
        self.kernels: dict[str, Kernel] = {}

    def provides(self, family: str) -> Callable[[Kernel], Kernel]:
        """Register a kernel for a declared family (a decorator)."""
        def add(fn: Kernel) -> Kernel:
            if family not in FAMILIES:
                raise BadInput(f"declare the measure family {family!r} first (measures.declare); "
                                 f"declared: {sorted(FAMILIES)}")
            if family in self.kernels:
                raise BadInput(f"the {self.name} provider computes {family!r} twice")
            self.kernels[family] = fn
            return fn
        return add

    def computes(self, measures: list[Measure]) -> bool:
        return all(m.name in self.kernels for m in measures)

    def compute(self, data: Any, measures: list[Measure]) -> dict[str, np.ndarray]:
        for m in measures:
            if m.name not in self.kernels:
                refuse(m, f"the {self.name} provider (reading {self.reads}) does not compute {m}; "
                          f"it computes {sorted(self.kernels)}")
        return {str(m): np.asarray(self.kernels[m.name](data, m.k), dtype=float) for m in measures}


RANKED = Provider("ranked", "ranked results judged into label slots")
SPARSE = Provider("sparse", "the ranks of the relevant labels in {id: score} runs")
PROVIDERS = (RANKED, SPARSE)


def computed() -> list[str]:
    """The families some provider computes."""
    return sorted({name for p in PROVIDERS for name in p.kernels})


def refuse(measure: Measure, why: str | None = None) -> None:
    """Stop on a measure no provider can compute here, naming those that can be."""
    if measure.name not in FAMILIES:
        raise BadInput(f"unknown measure {str(measure)!r}; known: {sorted(FAMILIES)}")
    raise BadInput(why or f"{measure}: the family {measure.name!r} is declared but no provider computes it; "
                          f"computed: {computed()}")


def check(measures: list[Measure]) -> None:
    """Refuse the first measure no provider computes."""
    for m in measures:
        if not any(m.name in p.kernels for p in PROVIDERS):
            refuse(m)


# RANKED: Judged arrays ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Judged:
    """Ranked results judged, one row per question:

    - `found[q, i]`: labels the i-th result satisfies for the first time (a label earns once, at
      its first rank; a result repeating earned labels counts as not relevant, as a repeated
      document does in trec_eval);
    - `gains[q, s]`: grades in label slots: a result fills one slot, or one per label it newly
      satisfies, best first; `slot_end[q, i]` is how many slots the first i + 1 results fill (None
      when every result fills one slot, as plain ids do);
    - `ideal[q, j]`: q's relevant grades, best first (0-padded), and `n_rel[q]` their number;
    - `judged[q, i]`: 2 when the i-th result satisfies a relevant label (earned before or not), 1
      when its labels are all judged not relevant (grade 0), 0 when no label judges it, -1 past
      the last result; `n_nonrel[q]`: q's labels of grade 0 (None when not judged this way: the
      judgement-hole measures are then refused)."""

    gains: np.ndarray
    found: np.ndarray
    ideal: np.ndarray
    n_rel: np.ndarray
    slot_end: np.ndarray | None = None
    judged: np.ndarray | None = None
    n_nonrel: np.ndarray | None = None


def pad(a: np.ndarray, width: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2:
        a = a.reshape(len(a), -1)
    if a.shape[1] >= width:
        return a
    return np.pad(a, ((0, 0), (0, width - a.shape[1])))


@RANKED.provides("precision")
def precision(j: Judged, k):
    return (j.found[:, :k] > 0).sum(axis=1) / k


@RANKED.provides("recall")
def recall(j: Judged, k):
    return np.divide(j.found[:, :k].sum(axis=1), j.n_rel, out=np.zeros(len(j.n_rel)), where=j.n_rel > 0)


@RANKED.provides("f1")
def f1(j: Judged, k):
    return _f1(precision(j, k), recall(j, k))


@RANKED.provides("hit_rate")
def hit_rate(j: Judged, k):
    return (j.found[:, :k] > 0).any(axis=1).astype(float)


@RANKED.provides("mrr")
def mrr(j: Judged, k):
    rel = j.found[:, :k] > 0 if k else j.found > 0
    return np.where(rel.any(axis=1), 1.0 / (rel.argmax(axis=1) + 1), 0.0)


@RANKED.provides("ndcg")
def ndcg(j: Judged, k):
    if j.slot_end is None:  # one slot per result: the top k slots are the top k results
        width, mask = k, None
    else:
        filled = j.slot_end[:, k - 1]
        width = int(filled.max()) if len(filled) else k
        mask = np.arange(width) < filled[:, None]
    discount = 1.0 / np.log2(np.arange(2, width + 2))
    gains, ideal = pad(j.gains, width)[:, :width], pad(j.ideal, width)[:, :width]
    if mask is not None:
        gains, ideal = gains * mask, ideal * mask
    dcg, idcg = gains @ discount, ideal @ discount
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def _holes(j: Judged, k) -> np.ndarray:
    if j.judged is None or j.n_nonrel is None:
        raise BadInput("unjudged, ndcg_judged and bpref need results judged with their grade-0 labels "
                       "(metrics.judge); these arrays were built without them")
    return j.judged[:, :k] if k else j.judged


@RANKED.provides("unjudged")
def unjudged(j: Judged, k):
    held = _holes(j, k)
    returned = (held >= 0).sum(axis=1)
    return np.divide((held == 0).sum(axis=1), returned, out=np.full(len(returned), np.nan), where=returned > 0)


@RANKED.provides("ndcg_judged")
def ndcg_judged(j: Judged, k):
    """ndcg@k of each ranking with its unjudged results dropped (later ones move up)."""
    held = _holes(j, None)
    n, width = held.shape
    found, slot_end, rows = np.zeros((n, width)), np.zeros((n, width), dtype=int), []
    ends = j.slot_end if j.slot_end is not None else np.tile(np.arange(1, width + 1), (n, 1))
    for q in range(n):
        slots, at = [], 0
        for i in np.flatnonzero(held[q] >= 1):
            start = int(ends[q, i - 1]) if i else 0
            slots += list(j.gains[q, start:int(ends[q, i])]) or [0.0]
            found[q, at], slot_end[q, at] = j.found[q, i], len(slots)
            at += 1
        slot_end[q, at:] = len(slots) + np.arange(1, width - at + 1)  # a missing result fills one empty slot
        rows.append(slots)
    gains = np.zeros((n, max([len(s) for s in rows] + [width])))
    for q, s in enumerate(rows):
        gains[q, :len(s)] = s
    return ndcg(Judged(gains, found, j.ideal, j.n_rel, slot_end), k)


@RANKED.provides("bpref")
def bpref(j: Judged, k):
    held = _holes(j, k)
    found = j.found[:, :held.shape[1]]
    nonrel = held == 1
    above = np.cumsum(nonrel, axis=1) - nonrel  # judged non-relevant results ranked above each one
    n_nonrel = cast(np.ndarray, j.n_nonrel)  # _holes refused None
    r, cap = j.n_rel[:, None], np.minimum(n_nonrel, j.n_rel)[:, None]
    term = 1.0 - np.divide(np.minimum(above, r), cap, out=np.zeros(above.shape), where=cap > 0)
    return np.divide((found * term).sum(axis=1), j.n_rel, out=np.zeros(len(j.n_rel)), where=j.n_rel > 0)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    return np.divide(2 * p * r, p + r, out=np.zeros(len(p)), where=(p + r) > 0)


# SPARSE: ranks of the relevant labels ------------------------------------------------------------
@dataclass
class Ranks:
    """Every relevant label of `n` questions: its question `qi`, its `rank` in the run (inf when it
    was not returned) and its `grade`. A question with no relevant label has no entry."""

    qi: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    n: int

    @cached_property
    def n_rel(self) -> np.ndarray:
        return np.bincount(self.qi, minlength=self.n).astype(float)

    @cached_property
    def ideal_pos(self) -> np.ndarray:
        """Each label's 0-based place in its question's ideal ranking (grades best first)."""
        order = np.lexsort((-self.grade, self.qi))
        starts = np.cumsum(self.n_rel) - self.n_rel
        pos = np.empty(len(self.qi))
        pos[order] = np.arange(len(self.qi)) - np.repeat(starts, self.n_rel.astype(np.int64))
        return pos

    @cached_property
    def first(self) -> np.ndarray:
        first = np.full(self.n, np.inf)
        np.minimum.at(first, self.qi, self.rank)
        return first

    def hits(self, k: int | None) -> np.ndarray:
        return np.bincount(self.qi, weights=self.rank <= (k or np.inf), minlength=self.n)

    def recall(self, k: int | None) -> np.ndarray:
        return np.divide(self.hits(k), self.n_rel, out=np.zeros(self.n), where=self.n_rel > 0)


SPARSE.provides("precision")(lambda r, k: r.hits(k) / k)
SPARSE.provides("recall")(lambda r, k: r.recall(k))
SPARSE.provides("f1")(lambda r, k: _f1(r.hits(k) / k, r.recall(k)))
SPARSE.provides("hit_rate")(lambda r, k: (r.hits(k) > 0).astype(float))
SPARSE.provides("mrr")(lambda r, k: np.where(r.first <= (k or np.inf), 1.0 / r.first, 0.0))


@SPARSE.provides("ndcg")
def _sparse_ndcg(r: Ranks, k):
    inside = r.rank <= k
    gain = np.where(inside, r.grade / np.log2(np.minimum(r.rank, 1e18) + 1), 0.0)
    dcg = np.bincount(r.qi, weights=gain, minlength=r.n)
    ideal = np.where(r.ideal_pos < k, r.grade / np.log2(r.ideal_pos + 2), 0.0)
    idcg = np.bincount(r.qi, weights=ideal, minlength=r.n)
    return np.divide(dcg, idcg, out=np.zeros(r.n), where=idcg > 0)
