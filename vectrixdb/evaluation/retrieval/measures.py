"""Measure families as declarations: a name, a cut-off rule, what it reads, and its formula.

As in ir_measures, a measure family says what it is and nothing about how it is computed; the
code that computes it lives in providers.py, where each provider says which families it computes.
A family declared here that no provider computes is refused when asked for, with the list of the
families that are computed; it is never replaced by another.

A new measure is one class here (its docstring is its formula, with a citation) registered with
`@declare`, plus a kernel in providers.py. Definitions follow trec_eval (and so pytrec_eval and
ir_measures); the tests check each against them. Each family reads:

- `relevance`: a label counts as relevant when its grade is above 0 (binary measures);
- `grades`: the grades are the gains (trec_eval's linear gain, BEIR qrels' 0/1/2).

A question whose judgements are all grade 0 is scored (every measure is 0 there: nothing can be
found); metric_table and retrieval_report say which questions they leave out for want of labels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from vectrixdb.errors import BadInput

CUTOFFS = ("required", "optional")  # optional: without a cut-off the measure reads the whole ranking
NEEDS = ("relevance", "grades")


class Family:
    """A measure family; subclass it, set the three attributes, write the formula as the docstring."""

    name: ClassVar[str]
    cutoff: ClassVar[str] = "required"
    needs: ClassVar[str] = "relevance"


FAMILIES: dict[str, type[Family]] = {}


def declare(family: type[Family]) -> type[Family]:
    """Register a family under its name (a class decorator); a name is declared once."""
    name = getattr(family, "name", None)
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z_0-9]*", name):
        raise BadInput(f"{family.__name__}: a measure family's name is lower-case letters, digits and _")
    if name in FAMILIES:
        raise BadInput(f"measure family {name!r} is declared twice")
    if family.cutoff not in CUTOFFS or family.needs not in NEEDS:
        raise BadInput(f"{name}: cutoff is one of {CUTOFFS}, needs one of {NEEDS}")
    if not (family.__doc__ or "").strip():
        raise BadInput(f"{name}: write the formula as the family's docstring")
    FAMILIES[name] = family
    return family


@dataclass(frozen=True)
class Measure:
    """A family at a cut-off; str() is its canonical name (`ndcg@10`, `mrr@10`, `mrr`), parse() reads it back."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @classmethod
    def parse(cls, text: str) -> "Measure":
        match = re.fullmatch(r"([a-z_0-9]+?)(?:@(\d+))?", str(text).strip().lower())
        if not match or match[1] not in FAMILIES:
            raise BadInput(f"unknown measure {text!r}; known: {sorted(FAMILIES)}")
        k = int(match[2]) if match[2] else None
        if k is None and FAMILIES[match[1]].cutoff == "required":
            raise BadInput(f"{text!r}: {match[1]} needs a cut-off, e.g. {match[1]}@10")
        if k == 0:
            raise BadInput(f"{text!r}: a cut-off counts results from 1")
        return cls(match[1], k)


@declare
class Precision(Family):
    """precision@k = results in the top k that earn a label / k (k, not the number returned;
    trec_eval's P_k)."""

    name = "precision"


@declare
class Recall(Family):
    """recall@k = labels earned in the top k / relevant labels; 0 when there are none (trec_eval's
    recall_k)."""

    name = "recall"


@declare
class F1(Family):
    """f1@k = 2 P R / (P + R) with P = precision@k and R = recall@k; 0 when both are 0."""

    name = "f1"


@declare
class HitRate(Family):
    """hit_rate@k = 1 if any result in the top k earns a label, else 0 (trec_eval's success_k)."""

    name = "hit_rate"


@declare
class ReciprocalRank(Family):
    """mrr@k = 1 / rank of the first result that earns a label, within the top k, else 0;
    mrr without a cut-off reads the whole ranking given (trec_eval's recip_rank) [Voorhees 1999]."""

    name = "mrr"
    cutoff = "optional"


@declare
class NDCG(Family):
    """ndcg@k = sum over the top k results' label slots s of grade_s / log2(s + 1), divided by the
    same sum over as many slots of the ideal ranking (grades best first); 0 when the ideal sums to 0
    (trec_eval's ndcg_cut_k, linear gain) [Jarvelin & Kekalainen 2002]."""

    name = "ndcg"
    needs = "grades"


# Judgement holes: measures that tell judged results from results nobody judged (a label of grade 0
# is judged not relevant; a result with no label at all is unjudged).
@declare
class Unjudged(Family):
    """unjudged@k = results in the top k that no label judges (neither relevant nor grade 0) /
    results returned in the top k; undefined (NaN) when nothing was returned. 1 - ir_measures'
    Judged@k when k results are returned."""

    name = "unjudged"


@declare
class CondensedNDCG(Family):
    """ndcg_judged@k = ndcg@k of the condensed ranking: the unjudged results are dropped and the
    judged ones keep their order (Sakai 2007, "Alternatives to bpref"; trec_eval -J /
    ir_measures' judged_docs_only). The ideal ranking is ndcg@k's."""

    name = "ndcg_judged"
    needs = "grades"


@declare
class Bpref(Family):
    """bpref = 1/R * sum over the relevant results r of (1 - min(n_r, R) / min(N, R)), where R is
    the number of relevant labels, N the number of labels judged not relevant, and n_r the judged
    non-relevant results ranked above r (the term is 1 when n_r = 0); unjudged results are skipped;
    0 when R = 0 (Buckley & Voorhees 2004; trec_eval's m_bpref.c). bpref@k reads the top k only."""

    name = "bpref"
    cutoff = "optional"
