"""The settings of write_golden, grouped the way DeepEval's synthesizer groups its own
(`ContextConstructionConfig`, `FiltrationConfig`, `EvolutionConfig`, `StylingConfig`): a few small
frozen dataclasses, each holding the defaults the spec gives, gathered in one WritingConfig so
write_golden keeps ten keywords (db, path, n, writer, examples, critic, cache, mix, evolve, config).

The numbers the spec names are here and nowhere else: the passage critic's 0.7 and 3 tries; the
mix 0.2 / 0.3 / 0.2 / 0.15 / 0.15; long questions of 20 to 45 words; a second place at similarity
0.5 or more, up to two of them; the question critic's "answered" 0.7 and "standing alone" 0.6; one
rewrite. The mean the question critic must reach is not given a number by the spec: 0.5 is
DeepEval's own default (`synthetic_input_quality_threshold`), with its 3 tries.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vectrixdb import settings as check
from vectrixdb.errors import BadInput, BadType

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
SKIPS = ("picture", "contents", "numbers", "scrap", "garbled", "boilerplate", "poor page")
#: Phrases of a filing's form text, which nobody asks a search box about: the cover's check boxes, pointers
#: to other documents, signatures and powers of attorney, the auditor's and the controls' standard wording,
#: items marked not applicable, the forward-looking-statements notice (PassageConfig.boilerplate's default;
#: case is ignored). Chosen on uber_2021.pdf; see scripts/boilerplate_bench.py for what they skip there and in
#: lyft_2021.pdf.
FILING_BOILERPLATE = (
    r"[\u2610\u2611\u2612]", r"indicate by check mark", r"incorporated (?:herein )?by reference", r"/s/",
    r"power of attorney", r"duly (?:caused|authorized)", r"pursuant to the requirements of", r"reasonable assurance",
    r"presents? fairly,? in all material respects", r"our responsibility is to express",
    r"in accordance with the standards of the pcaob", r"\bnot applicable\b", r"forward-looking statements",
)


@dataclass(frozen=True)
class PassageConfig:
    """Step 1, choosing passages.

    critic_threshold: the passage critic's bar, 0 to 1; the first passage reaching it is kept (default 0.7).
    tries: passages of a section scored before the best is kept (default 3).
    poor_below: a page the reading's quality check scored under this, 0 to 1, is skipped (default 0.5).
    replacements: more passages a slot may try after its question was set aside (default 2).
    max_chars: a passage longer than this, in characters, is cut at a paragraph end for the prompt (default 2500).
    boilerplate: regular expressions (case ignored) that mark a sentence as form text (default FILING_BOILERPLATE, a
        filing's check boxes, signatures, pointers and standard wording; () turns the rule off).
    boilerplate_share: a chunk whose marked sentences hold this share of its characters or more, above 0 up to 1,
        is skipped as boilerplate (default 0.6).
    """

    critic_threshold: float = 0.7
    tries: int = 3
    poor_below: float = 0.5
    replacements: int = 2
    max_chars: int = 2500
    boilerplate: tuple[str, ...] = FILING_BOILERPLATE
    boilerplate_share: float = 0.6

    def __post_init__(self):
        _unit("PassageConfig.critic_threshold", self.critic_threshold)
        _unit("PassageConfig.poor_below", self.poor_below)
        _at_least("PassageConfig.tries", self.tries, 1)
        _at_least("PassageConfig.replacements", self.replacements, 0)
        _at_least("PassageConfig.max_chars", self.max_chars, 200)
        _unit("PassageConfig.boilerplate_share", self.boilerplate_share)
        if not self.boilerplate_share:
            raise BadInput("PassageConfig.boilerplate_share is above 0 (at 0 every chunk is boilerplate); "
                           "boilerplate=() turns the rule off")
        if isinstance(self.boilerplate, str) or not isinstance(self.boilerplate, (tuple, list)) \
                or not all(isinstance(p, str) for p in self.boilerplate):
            raise BadType(f"PassageConfig.boilerplate is a tuple of regular expressions, not {self.boilerplate!r}")
        for pattern in self.boilerplate:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise BadInput(f"PassageConfig.boilerplate has {pattern!r}, not a regular expression ({exc})") from None
        object.__setattr__(self, "boilerplate", tuple(self.boilerplate))


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
    """Step 2, the kinds (the shares themselves are write_golden's mix=).

    long_words: (fewest, most) words of a long question (default (20, 45)).
    search_words: the most words a search may have (default 8).
    similar_at: the cosine similarity, 0 to 1, a two-place question's other passages reach (default 0.5).
    more_places: the most other passages, on other pages, a two-place question takes (default 2).
    """

    long_words: tuple[int, int] = (20, 45)
    search_words: int = 8
    similar_at: float = 0.5
    more_places: int = 2

    def __post_init__(self):
        pair = self.long_words
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                   for x in pair) and 1 <= pair[0] <= pair[1]):
            raise BadInput(f"KindConfig.long_words is (fewest, most) words, not {self.long_words}")
        _unit("KindConfig.similar_at", self.similar_at)
        _at_least("KindConfig.more_places", self.more_places, 1)
        _at_least("KindConfig.search_words", self.search_words, 1)


@dataclass(frozen=True)
class CheckConfig:
    """Step 3, the checks no model makes (words compared with case and punctuation folded).

    copy_run: a question sharing a run of this many words with its passages copies it (default 8).
    copy_share: ... or sharing this share, 0 to 1, of its words with them (default 0.7),
    copy_min: ... when that is at least this many words (default 4).
    quote_words: the fewest words an evidence quote may have, so a check on it means something (default 3).
    """

    copy_run: int = 8
    copy_share: float = 0.7
    copy_min: int = 4
    quote_words: int = 3

    def __post_init__(self):
        _unit("CheckConfig.copy_share", self.copy_share)
        _at_least("CheckConfig.copy_run", self.copy_run, 2)
        _at_least("CheckConfig.copy_min", self.copy_min, 1)
        _at_least("CheckConfig.quote_words", self.quote_words, 1)


@dataclass(frozen=True)
class CriticConfig:
    """Step 4, the question critic (scores 0 to 1); a question under any bar is sent back.

    threshold: the bar for the mean of standing alone, clarity and answered (default 0.5, DeepEval's).
    answered_at: the bar for "answered": the passages answer it (default 0.7).
    standing_at: the bar for "standing alone": it makes sense without the passage (default 0.6).
    tries: drafts per question before it is set aside (default 3).
    """

    threshold: float = 0.5
    answered_at: float = 0.7
    standing_at: float = 0.6
    tries: int = 3

    def __post_init__(self):
        for name in ("threshold", "answered_at", "standing_at"):
            _unit(f"CriticConfig.{name}", getattr(self, name))
        _at_least("CriticConfig.tries", self.tries, 1)


@dataclass(frozen=True)
class EvolutionConfig:
    """Step 5, rewrites (how many is write_golden's evolve=, 1).

    ways: the rewrites taken in turn, some of EVOLUTIONS (default all four; "both_places" only for a
        two-place question; a search is only made more concrete or turned to another angle).
    """

    ways: tuple[str, ...] = ("concrete", "comparison", "angle", "both_places")

    def __post_init__(self):
        unknown = set(self.ways) - set(EVOLUTIONS)
        if unknown or not self.ways:
            raise BadInput(f"EvolutionConfig.ways are some of {sorted(EVOLUTIONS)}, not {list(self.ways)}")


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


@dataclass(frozen=True)
class WritingConfig:
    """Everything write_golden is told beyond its ten keywords, one step's settings each.

    scenario: who asks and why, put in every drafting prompt (DeepEval's StylingConfig; default None).
    task: what the questions are for, put in every drafting prompt (default None).
    passages: step 1, choosing passages (PassageConfig: critic bar 0.7, 3 tries, ...).
    kinds: step 2, the kinds' lengths and two-place partners (KindConfig; the shares are write_golden's mix=).
    checks: step 3, the checks no model makes (CheckConfig: copied runs, quote length).
    critic_config: step 4, the question critic's bars and drafts per question (CriticConfig).
    evolution: step 5, the ways a rewrite goes (EvolutionConfig; how many is write_golden's evolve=).
    executor: "local", "ray" or a Ray address, for embedding the two-place passages (default "local").
    check_model: one small call to the writer and critic before any passage is read; None (default)
        checks a writer taken from the settings (writer=None), True any writer, False none.
    """

    scenario: str | None = None
    task: str | None = None
    passages: PassageConfig = PassageConfig()
    kinds: KindConfig = KindConfig()
    checks: CheckConfig = CheckConfig()
    critic_config: CriticConfig = CriticConfig()
    evolution: EvolutionConfig = EvolutionConfig()
    executor: str = "local"
    check_model: bool | None = None

    def __post_init__(self):
        check.kind("WritingConfig", "scenario", self.scenario, str, "a sentence or None", optional=True)
        check.kind("WritingConfig", "task", self.task, str, "a sentence or None", optional=True)
        for name, cls in (("passages", PassageConfig), ("kinds", KindConfig), ("checks", CheckConfig),
                          ("critic_config", CriticConfig), ("evolution", EvolutionConfig)):
            if not isinstance(getattr(self, name), cls):
                raise BadType(f"WritingConfig.{name} is a {cls.__name__}(...), not {type(getattr(self, name)).__name__}")
        check.kind("WritingConfig", "executor", self.executor, str, '"local", "ray" or a Ray address')
        check.kind("WritingConfig", "check_model", self.check_model, bool, "True, False or None", optional=True)


DEFAULT_WRITING = WritingConfig()  # the default write_golden's signature shows

#: Where write_golden's former keywords went.
MOVED = {name: f"config=WritingConfig({name}=...)" for name in
         ("scenario", "task", "passages", "kinds", "checks", "critic_config", "evolution", "executor", "check_model")}
