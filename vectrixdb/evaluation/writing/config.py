"""The settings of write_golden, grouped the way DeepEval's synthesizer groups its own
(`ContextConstructionConfig`, `FiltrationConfig`, `EvolutionConfig`): a few small frozen
dataclasses, each holding the defaults the spec gives, so write_golden's signature stays short.

The numbers the spec names are here and nowhere else: the passage critic's 0.7 and 3 tries; the
mix 0.2 / 0.3 / 0.2 / 0.15 / 0.15; long questions of 20 to 45 words; a second place at similarity
0.5 or more, up to two of them; the question critic's "answered" 0.7 and "standing alone" 0.6; one
rewrite. The mean the question critic must reach is not given a number by the spec: 0.5 is
DeepEval's own default (`synthetic_input_quality_threshold`), with its 3 tries.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from vectrixdb.errors import BadInput

#: The five kinds of question, short to long, with what the drafting prompt asks for.
KINDS = MappingProxyType({
    "search": "a search as typed into a search box: a few keywords naming what is looked for, no question mark, "
              "no full sentence",
    "fact": "a short question asking for one fact the passage states",
    "how_why": "a short question asking how or why, answered by the passage's explanation",
    "two_place": "a question that needs BOTH passages to answer: it must combine a fact from each of them",
    "long": "a long question that first describes the asker's own situation in a sentence or two, then asks",
})
MIX = MappingProxyType({"search": 0.2, "fact": 0.3, "how_why": 0.2, "two_place": 0.15, "long": 0.15})
#: Skip reasons for passages, decided without a model.
SKIPS = ("picture", "contents", "numbers", "scrap", "garbled", "poor page")


@dataclass(frozen=True)
class PassageConfig:
    """Step 1. critic_threshold / tries: the passage critic's bar and how many passages of a section
    are scored before the best is kept; poor_below: a page the reading scored under this is skipped;
    replacements: how many more passages a slot may try after its question was set aside."""

    critic_threshold: float = 0.7
    tries: int = 3
    poor_below: float = 0.5
    replacements: int = 2
    max_chars: int = 2500  # a passage longer than this is cut at a paragraph end for the prompt

    def __post_init__(self):
        _unit("critic_threshold", self.critic_threshold)
        _unit("poor_below", self.poor_below)
        _at_least("tries", self.tries, 1)
        _at_least("replacements", self.replacements, 0)
        _at_least("max_chars", self.max_chars, 200)


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """mix as a share per kind, summing to 1; BadInput for an unknown kind or a share under 0."""
    if not isinstance(mix, Mapping):
        raise BadInput(f"mix is {{kind: share}} over {sorted(KINDS)}, not {type(mix).__name__}")
    unknown = set(mix) - set(KINDS)
    if unknown:
        raise BadInput(f"unknown kind(s) {sorted(unknown)} in mix; known: {sorted(KINDS)}")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in mix.values()) \
            or sum(mix.values()) <= 0:
        raise BadInput(f"mix shares are numbers from 0 with a positive sum, not {dict(mix)}")
    total = float(sum(mix.values()))
    return {k: float(mix.get(k, 0.0)) / total for k in KINDS}


@dataclass(frozen=True)
class KindConfig:
    """Step 2 (the shares themselves are write_golden's mix=). long_words: the long kind's length in
    words; search_words: the most words a search may have; similar_at / more_places: a two-place
    question takes up to this many more passages, on other pages, at this cosine similarity or more."""

    long_words: tuple[int, int] = (20, 45)
    search_words: int = 8
    similar_at: float = 0.5
    more_places: int = 2

    def __post_init__(self):
        low, high = self.long_words
        if not 1 <= low <= high:
            raise BadInput(f"long_words is (fewest, most) words, not {self.long_words}")
        _unit("similar_at", self.similar_at)
        _at_least("more_places", self.more_places, 1)
        _at_least("search_words", self.search_words, 1)


@dataclass(frozen=True)
class CheckConfig:
    """Step 3, the checks no model makes. A question copies its passage when the longest run of
    words it shares with its passages (case and punctuation folded) is copy_run words or more, or
    is at least copy_share of the question's words with at least copy_min of them. A quote must
    have quote_words words or more, so that a check on it means something."""

    copy_run: int = 8
    copy_share: float = 0.7
    copy_min: int = 4
    quote_words: int = 3

    def __post_init__(self):
        _unit("copy_share", self.copy_share)
        _at_least("copy_run", self.copy_run, 2)
        _at_least("copy_min", self.copy_min, 1)
        _at_least("quote_words", self.quote_words, 1)


@dataclass(frozen=True)
class CriticConfig:
    """Step 4. A question is sent back when the mean of standing alone, clarity and answered is
    under threshold, answered under answered_at, or standing alone under standing_at; after tries
    drafts that do not pass it is set aside."""

    threshold: float = 0.5
    answered_at: float = 0.7
    standing_at: float = 0.6
    tries: int = 3

    def __post_init__(self):
        for name in ("threshold", "answered_at", "standing_at"):
            _unit(name, getattr(self, name))
        _at_least("tries", self.tries, 1)


@dataclass(frozen=True)
class EvolutionConfig:
    """Step 5 (how many rewrites is write_golden's evolve=, 1). ways: the rewrites, taken in turn
    ("both_places" only for a two-place question; a search is only made more concrete or turned to
    another angle, so it stays a search)."""

    ways: tuple[str, ...] = ("concrete", "comparison", "angle", "both_places")

    def __post_init__(self):
        unknown = set(self.ways) - set(EVOLUTIONS)
        if unknown or not self.ways:
            raise BadInput(f"ways are some of {sorted(EVOLUTIONS)}, not {list(self.ways)}")


EVOLUTIONS = MappingProxyType({
    "concrete": "more concrete: name the exact thing, period or party the answer is about",
    "comparison": "a comparison: ask how two things the passages state differ or relate",
    "angle": "from another angle: ask it as somebody with a different reason to need the answer would",
    "both_places": "needing both places: make it impossible to answer without a fact from each passage",
})


def _unit(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise BadInput(f"{name} is a number from 0 to 1, not {value!r}")


def _at_least(name: str, value: int, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise BadInput(f"{name} is a whole number from {least}, not {value!r}")
