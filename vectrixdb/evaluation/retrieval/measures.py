"""Measure families as declarations: a name, a cut-off rule, what it reads, and its formula.

As in ir_measures, a measure family says what it is and nothing about how it is computed; the
code that computes it lives in providers.py, where each provider says which families it computes.
A family declared here that no provider computes is refused when asked for, with the list of the
families that are computed; it is never replaced by another.

A new measure is one class (its docstring is its formula, with a citation) registered with
`@declare`, and its kernel registered with a provider (`@RANKED.provides("name")`, providers.py).
Both may live here and in metrics.py, or together in a module of their own. Families are the
"measures" kind of vectrixdb/registry.py (FAMILIES is its table): Measure.parse looks a name up
there, which loads this module and metrics.py (the registry's homes for measures) and the entry
points in the group `vectrixdb.measures` (`rbp = "mypkg.rbp:RBP"`, the module declaring the family
and its kernel); a module outside the package may also be imported before the measure is named. A declared measure is
computed by metric_table (and compute); retrieval_report and evaluate report the built-in families
(scoring.AT_EACH_K and HOLES) and, asked by name (`measures=("rbp@10",)`), any other the RANKED
provider computes, as a frame column and a mean (scoring.report_measures). Definitions follow
trec_eval (and so pytrec_eval and ir_measures); the tests check each against them. The docstring
says whether a family reads binary relevance (a label counts as relevant when its grade is above
0) or the grades themselves as gains (trec_eval's linear gain, BEIR qrels' 0/1/2). That is not a
declared field: every qrels has grades (binary qrels are grades 0 and 1), so no input could be
refused for lacking what a family reads, and a field nothing reads would only look like a check.

A question whose judgements are all grade 0 is scored (every measure is 0 there: nothing can be
found); metric_table and retrieval_report say which questions they leave out for want of labels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from vectrixdb import registry
from vectrixdb.errors import BadInput

CUTOFFS = ("required", "optional")  # optional: without a cut-off the measure reads the whole ranking
# What a change means: "higher" (higher is better), "lower" (lower is better), or "coverage" (a
# share that describes the judgements, with no better direction: a "better" or "worse" verdict, a
# heat colour, a grade or an SLA never reads it as quality).
DIRECTIONS = ("higher", "lower", "coverage")


class Family:
    """A measure family; subclass it, set its name (and cutoff, when optional; direction, when higher
    is not better), write the formula as the docstring. `best(k, relevant)` is the highest value a
    ranking can reach for a question with `relevant` relevant labels at cut-off k (1.0 unless the
    family says otherwise: precision and F1 cannot reach 1 when k and the labels differ in number).
    `condensed`: its value at k reads the ranking past k (the unjudged results are dropped first),
    so the whole ranking is judged for it."""

    name: ClassVar[str]
    cutoff: ClassVar[str] = "required"
    direction: ClassVar[str] = "higher"
    condensed: ClassVar[bool] = False  # reads past its cut-off: the top k after dropping unjudged results

    @staticmethod
    def best(k: int | None, relevant: int) -> float:
        return 1.0


FAMILIES: dict[str, type[Family]] = registry.table("measures")  # the registry's table of families


def declare(family: type[Family]) -> type[Family]:
    """Register a family under its name (a class decorator): registry.register("measures", ...); a
    name is declared once."""
    return registry.register("measures", getattr(family, "name", None) or family.__name__, family)


@registry.contract("measures")
def _fits(name: str, family: Any) -> None:
    if not (isinstance(family, type) and issubclass(family, Family)):
        raise BadInput(f"measure {name!r}: a measure is a Family subclass, not {family!r}")
    if not isinstance(family.__dict__.get("name", getattr(family, "name", None)), str) \
            or not re.fullmatch(r"[a-z][a-z_0-9]*", name):
        raise BadInput(f"{family.__name__}: a measure family's name is lower-case letters, digits and _")
    if family.name != name:
        raise BadInput(f"measure family {family.name!r} registered as {name!r}: register it under its own name")
    if family.cutoff not in CUTOFFS:
        raise BadInput(f"{name}: cutoff is one of {CUTOFFS}, not {family.cutoff!r}")
    if not (family.__doc__ or "").strip():
        raise BadInput(f"{name}: write the formula as the family's docstring")
    if family.direction not in DIRECTIONS:
        raise BadInput(f"{name}: direction is one of {DIRECTIONS}, not {family.direction!r}")


def family_of(figure: str) -> type[Family] | None:
    """The declared family of a figure as reports name it: `ndcg@10`, `mrr`, or a set figure with its
    level in front (`doc_f1@10`, `page_precision@5`); None for a name no family declares (accuracy,
    latency_ms)."""
    base = str(figure).split("@")[0].split(" ")[0]
    for name in (base, base.split("_", 1)[-1] if base.split("_", 1)[0] in ("doc", "page", "chunk") else None):
        if name in FAMILIES:
            return FAMILIES[name]
    return None


def direction_of(figure: str) -> str:
    """"higher", "lower" or "coverage" for a figure (family_of); a figure no family declares is read as
    a score, higher is better (accuracy, groundedness, a kind's own 0..1 figures)."""
    family = family_of(figure)
    return family.direction if family is not None else "higher"


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
        if not match or match[1] not in registry.names("measures"):
            raise BadInput(f"unknown measure {text!r}; known: {sorted(FAMILIES)} (a new one is declared with "
                           "@declare, its kernel @RANKED.provides; from outside vectrixdb its module is imported "
                           "first or named by an entry point in the group 'vectrixdb.measures')")
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

    @staticmethod
    def best(k: int | None, relevant: int) -> float:
        return min(k, relevant) / k if k else 1.0


@declare
class Recall(Family):
    """recall@k = labels earned in the top k / relevant labels; 0 when there are none (trec_eval's
    recall_k)."""

    name = "recall"


@declare
class F1(Family):
    """f1@k = 2 P R / (P + R) with P = precision@k and R = recall@k; 0 when both are 0."""

    name = "f1"

    @staticmethod
    def best(k: int | None, relevant: int) -> float:
        return 2 * min(k, relevant) / (k + relevant) if k and relevant else 1.0


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


# Judgement holes: measures that tell judged results from results nobody judged (a label of grade 0
# is judged not relevant; a result with no label at all is unjudged).
@declare
class Unjudged(Family):
    """unjudged@k = results in the top k that no label judges (neither relevant nor grade 0) /
    results returned in the top k; undefined (NaN) when nothing was returned. 1 - ir_measures'
    Judged@k when k results are returned."""

    name = "unjudged"
    direction = "coverage"  # how much of the ranking nobody judged: a fact about the labels, not quality


@declare
class CondensedNDCG(Family):
    """ndcg_judged@k = ndcg@k of the condensed ranking: the unjudged results are dropped and the
    judged ones keep their order (Sakai 2007, "Alternatives to bpref"; trec_eval -J /
    ir_measures' judged_docs_only). The ideal ranking is ndcg@k's."""

    name = "ndcg_judged"
    condensed = True


@declare
class Bpref(Family):
    """bpref = 1/R * sum over the relevant results r of (1 - min(n_r, R) / min(N, R)), where R is
    the number of relevant labels, N the number of labels judged not relevant, and n_r the judged
    non-relevant results ranked above r (the term is 1 when n_r = 0); unjudged results are skipped;
    0 when R = 0 (Buckley & Voorhees 2004; trec_eval's m_bpref.c). bpref@k reads the top k only."""

    name = "bpref"
    cutoff = "optional"
