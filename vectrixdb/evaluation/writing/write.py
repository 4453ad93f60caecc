"""write_golden: questions drafted by a chat model from a collection's own chunks, checked before a
person reads them (DeepEval's synthesizer steps, in vectrixdb's terms).

    written = write_golden(db, "drafts.jsonl", n=50, writer=ChatWriter(...), examples=["..."])
    print(written.summary())

1. Passages (evaluation.writing.passages): chunks passed over without a model by reason, the rest spread over
   collections, documents and sections; a critic picks the best of up to 3 per slot (bar 0.7).
2. Kinds (evaluation.writing.summary.plan_kinds): the mix over search / fact / how-why / two-place / long;
   a two-place question takes passages alike by the collection's own model, on other pages.
3. Checks no model makes (evaluation.writing.checks): the passages go to the model as numbered sentences
   (evaluation.writing.spans) and it names the ones that answer, so its evidence is cut by code, word for
   word (or, when the named ones miss the answer's figures and one shown sentence of prose holds them all,
   that one: a note counts these), and a style example returned as a question is sent back; 4. the question critic;
   5. one rewrite each (evolve=): a draft that fails a check or the critic is sent back with the
   reason, up to CriticConfig.tries drafts; one that never passes is set aside and the slot tries
   another passage. A rewrite that fails keeps the question before it.

Nothing is written until the end and `path` is checked before any model call, so a refusal
(`Refused`, raised by ChatWriter with what the service said) stops the run with nothing written,
and an existing file is never touched. `cache=` keeps every answer as it comes: a run that stopped
resumes, and the same run again makes no calls (every prompt depends only on its inputs) but for the
asks whose replies failed (not the JSON asked for, an error): those are never cached, so they are asked again.
"""
from __future__ import annotations

import copy
import os
import threading
import time
from collections import Counter
from typing import Any, Mapping, Sequence

from vectrixdb.chat.parallel import concurrently, width
from vectrixdb.errors import AlreadyExists, BadInput, BadType
from vectrixdb.evaluation.writing import prompts
from vectrixdb.evaluation.writing.checks import check_draft, pick, repeat_key, row_parts
from vectrixdb.evaluation.writing.config import (DEFAULT_WRITING, MIX, MOVED, CriticConfig, KindConfig, PassageConfig,
                                                 WritingConfig, check_mix)
from vectrixdb.evaluation.writing.passages import Alike, Passage, Slot, list_passages, plan_slots
from vectrixdb.evaluation.writing.summary import Written, merge_usage, plan_kinds
from vectrixdb.roles import ChatModel, Collection
from vectrixdb.settings import moved

DRAFT_TOKENS, SCORE_TOKENS = 400, 160


@moved("write_golden", MOVED)
def write_golden(db: Collection | Sequence[Collection], path: str, n: int = 50, writer: ChatModel | None = None, examples: Sequence[str] = (), *,
                 critic: ChatModel | None = None, cache: str | os.PathLike | None = None, mix: Mapping[str, float] = MIX, evolve: int = 1,
                 config: WritingConfig = DEFAULT_WRITING) -> Written:
    """Draft up to n checked questions from db (a collection, a principal's view, or a list of them)
    into a new golden file at path, every row a draft. Returns a Written (see .summary()).
    writer: the ChatWriter that drafts (default: ChatWriter.from_environment()); examples: questions
    as people ask them, shown as style; critic: the ChatWriter that scores (default: the writer);
    cache: a SQLite file of answers for this run; mix: the share of each kind; evolve: rewrites per
    question; config: the steps' settings, scenario / task, executor and check_model (WritingConfig).
    executor="ray" embeds the passages for two-place questions on a Ray cluster (embed_corpus);
    every model call stays here, through the one writer, its limiter and its cache.
    check_model: one small call to the writer (and critic) before a single passage is read
    (model_ready.check_answers), refused at once when it does not answer; None (the default) checks
    a writer taken from the settings (writer=None), True any writer, False none. A collection
    with no passage to draft from says why in the notes, with no model call for drafting."""
    from vectrixdb import io

    started = time.perf_counter()
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise BadInput(f"n is the number of questions to write, a whole number from 1, not {n!r}")
    if isinstance(evolve, bool) or not isinstance(evolve, int) or evolve < 0:
        raise BadInput(f"evolve is the number of rewrites per question, a whole number from 0, not {evolve!r}")
    shares = check_mix(mix)
    if not isinstance(config, WritingConfig):
        raise BadType(f"config is a WritingConfig(passages=..., scenario=..., ...), not {type(config).__name__}")
    c = config
    if io.exists(path):
        raise AlreadyExists(f"{path} already exists; write_golden never writes over a file (it may hold checked rows)")
    if isinstance(examples, str):
        examples = [examples]
    sources = list(db) if isinstance(db, (list, tuple)) else [db]
    check_model = writer is None if c.check_model is None else c.check_model
    if writer is None:
        from vectrixdb.chat.writer import ChatWriter

        writer = ChatWriter.from_environment()
    from vectrixdb.chat.cache import AnswerCache

    store = AnswerCache(cache) if cache is not None else None
    try:
        run = Run(_for_run(writer, store), _for_run(critic, store) if critic is not None else None,
                  [str(e) for e in examples], c.scenario, c.task, c.kinds, c.checks, c.critic_config, c.evolution, evolve)
        if check_model:
            from vectrixdb.evaluation.generation.model_ready import check_answers

            for one in run.writers():
                check_answers(one, "before a single passage was read")
        return _write(sources, path, n, run, shares, c.passages, c.kinds, started, c.executor)
    finally:
        if store is not None:
            store.close()


def _write(sources: list, path: str, n: int, run: "Run", shares: dict, passages: PassageConfig, kinds: KindConfig,
           started: float, executor: str = "local") -> Written:
    """Steps 1 to 5 and the file (see the module doc)."""
    eligible, skipped, seen = list_passages(sources, passages)
    out = Written(None, n=n, passages={"chunks": seen, "eligible": sum(map(len, eligible)), "tried": 0, "used": 0,
                                       "skipped": dict(skipped)})
    if not out.passages["eligible"]:  # say why, and ask the model nothing
        from vectrixdb.evaluation.writing.passages import none_eligible

        out.notes.append(none_eligible(skipped, seen, passages) + "; no file was written")
        out.usage = merge_usage([w.totals() for w in run.writers()])
        out.seconds = time.perf_counter() - started
        return out
    alike = [Alike(s, e, executor) if shares["two_place"] > 0 else None for s, e in zip(sources, eligible)]
    slots = plan_slots(eligible, n, passages.tries)
    if len(slots) < n:
        out.notes.append(f"only {len(slots)} passage slot(s) for n={n}: the collection has {out.passages['eligible']} "
                         "eligible chunk(s)")
    tried: set[str] = set()
    # every slot's first passage at once when no two slots could score the same one: what one by one gives
    chosen = concurrently(lambda slot: run.choose(slot, passages, tried, None, within=True), slots,
                          workers=width(run.critic) if apart(slots, passages.tries) else 1)
    paired = [bool(c and (near := alike[s.source]) and near.partners(c, kinds)) for c, s in zip(chosen, slots)]
    plan, wanted, notes = plan_kinds(shares, paired)
    out.notes += notes
    for slot, first, kind in zip(slots, chosen, plan):
        passage, attempts = first, 0
        while passage is not None:
            near = alike[slot.source]  # there is one whenever a slot was planned two-place
            group = [passage] + ([p for p, _ in near.partners(passage, kinds)]
                                 if kind == "two_place" and near is not None else [])
            out.asked += 1
            kept = run.ask_question(group, kind)
            if kept is not None:
                out.questions.append(kept)
                break
            out.set_aside += 1
            attempts += 1
            if attempts > passages.replacements:
                break
            need = alike[slot.source] if kind == "two_place" else None
            passage = run.choose(slot, passages, tried,  # the filter is used within this iteration only
                                 (lambda p: bool(need.partners(p, kinds))) if need else None)  # noqa: B023
    out.passages.update(tried=run.tried, used=out.asked)
    out.sent_back, out.evolution = run.sent_back, run.evolved
    achieved = Counter(q.kind for q in out.questions)
    moved = sum(q.moved is not None for q in out.questions)
    if moved:
        out.notes.append(f"{moved} kept question(s) cite the one shown sentence holding every figure of the answer, "
                         "not the sentence(s) the model named (checks.pick: evidence moved)")
    out.kinds = {k: {"mix": shares[k], "wanted": wanted[k], "planned": plan.count(k), "kept": achieved[k]}
                 for k in shares}
    rows = [q.row(i) for i, q in enumerate(out.questions, start=1)]
    out.questions = rows
    out.usage = merge_usage([w.totals() for w in run.writers()])
    if rows:
        from vectrixdb.evaluation.golden.questions import save_questions
        from vectrixdb.evaluation.golden.schema import check_golden

        try:
            out.path = save_questions(rows, path)
        except FileExistsError:
            raise AlreadyExists(f"{path} appeared during the run; it is never written over") from None
        out.check = check_golden(out.path, sources[0]) if len(sources) == 1 else None
    else:
        out.notes.append("no question was kept, so no file was written")
    out.seconds = time.perf_counter() - started
    return out


def apart(slots: list[Slot], tries: int) -> bool:
    """Whether the slots may choose their first passages at once: the first `tries` candidates of each
    slot's section are distinct and no other slot's, so no slot can score (or skip) a passage another
    scored, and each chooses what it would choose one slot after another."""
    seen: set[str] = set()
    for slot in slots:
        ids = [c.chunk_id for c in slot.candidates[:slot.section][:tries]]
        if len(set(ids)) < len(ids) or seen.intersection(ids):
            return False
        seen.update(ids)
    return True


def _for_run(writer: Any, store: Any) -> Any:
    """A copy of the writer for this run: its own usage ledger (so the summary counts this run) and,
    with cache=, that answer cache (one connection, shared with the critic). The caller's writer is
    not changed."""
    if not (hasattr(writer, "ask") and callable(writer.ask)):
        raise BadInput(f"writer and critic are ChatWriters (anything with ask(messages, schema)), not {type(writer).__name__}")
    if not hasattr(writer, "ledger"):
        return writer
    from vectrixdb.chat.cache import Ledger

    mine = copy.copy(writer)
    mine.ledger = Ledger()
    if store is not None:
        mine.cache = store
    return mine


class Draft:
    """A question that passed: its kind, text, answer and located quotes."""

    def __init__(self, kind: str, question: str, answer: str, found: list, moved: str | None = None):
        self.kind, self.question, self.answer, self.found = kind, question, answer, found
        self.moved = moved  # why the evidence is not the sentences the model named (checks.pick), or None

    def row(self, number: int):
        from vectrixdb.evaluation.golden.questions import Question

        expected, evidence, hint = row_parts(self.found)
        return Question(self.question, self.answer, tuple(expected), f"draft-{number:03d}", tuple(evidence), hint, True)


class Run:
    """One run's model side: the passage critic, drafting, checks, the question critic and rewrites,
    with the counts the summary reports."""

    def __init__(self, writer, critic, examples, scenario, task, kinds, checks, critic_config, evolution, evolve):
        self.writer, self.critic = writer, critic or writer
        self.examples, self.scenario, self.task = examples, scenario, task
        self.kinds, self.checks, self.critic_config, self.evolution, self.evolve = kinds, checks, critic_config, evolution, evolve
        self.written: set[str] = set()
        self.sent_back: Counter = Counter()
        self.evolved: dict[str, Any] = {"asked": 0, "rewritten": 0, "kept_before": Counter()}
        self.tried = 0
        self.turn = 0
        self.counting = threading.Lock()

    def writers(self) -> list:
        return [self.writer] if self.critic is self.writer else [self.writer, self.critic]

    def choose(self, slot: Slot, config: PassageConfig, tried: set[str], fits=None, within: bool = False) -> Passage | None:
        """The slot's next passage: candidates not tried yet (of its own section when `within`) are
        scored in order until one reaches the bar or `tries` were scored; the best is kept (the first
        when none could be scored)."""
        best, best_score, scored = None, -1.0, 0
        for candidate in slot.candidates[:slot.section] if within else slot.candidates:
            if candidate.chunk_id in tried or (fits is not None and not fits(candidate)):
                continue
            with self.counting:  # slots choose at once (apart)
                tried.add(candidate.chunk_id)
                self.tried += 1
            scored += 1
            outcome = self.critic.ask(prompts.passage_critic(candidate, self.scenario, self.task),
                                      prompts.PASSAGE_SCORES, max_tokens=SCORE_TOKENS)
            score = sum(outcome.value.values()) / 4 if outcome.ok else -0.5
            if best is None or score > best_score:
                best, best_score = candidate, score
            if score >= config.critic_threshold or scored == config.tries:
                break
        return best

    def ask_question(self, group: list[Passage], kind: str) -> Draft | None:
        """Draft until a question passes the checks and the critic (CriticConfig.tries drafts), then
        rewrite it evolve times; None when it never passed (set aside)."""
        history: list[tuple[str, str]] = []
        for _ in range(self.critic_config.tries):
            messages, spans = prompts.draft(group, kind, self.examples, self.scenario, self.task, self.kinds.long_words,
                                            self.kinds.search_words, history)
            passed, question, why = self._attempt(messages, spans, kind, group, self.written)
            if passed is not None:
                passed = self._rewrite(passed, group)
                self.written.add(repeat_key(passed.question))
                return passed
            history.append((question, why))
        return None

    def _attempt(self, messages, spans, kind, group, written) -> tuple[Draft | None, str, str]:
        """One draft through the checks and the critic: (the draft or None, its question, why not).
        The evidence is the text of the sentences the model chose (evaluation.writing.spans), cut by code."""
        outcome = self.writer.ask(messages, prompts.draft_schema(len(spans)), max_tokens=DRAFT_TOKENS)
        if not outcome.ok:
            self.sent_back[f"unreadable ({outcome.status})"] += 1
            return None, "", f"the answer was not the JSON asked for ({outcome.reason})"
        value = outcome.value
        question, answer = str(value["question"]), str(value["answer"])
        reason, why, found = pick(list(value["sentences"]), spans, answer, self.checks)
        moved = why if not reason else None
        if not reason:
            reason, why, found = check_draft(question, answer, found, kind, group, written, self.checks, self.kinds,
                                             self.examples)
        if reason:
            self.sent_back[reason] += 1
            return None, question, why or reason  # a check that names a reason says why
        verdict = self.critic.ask(prompts.question_critic(question, answer, kind, group, [f.quote for f in found]),
                                  prompts.QUESTION_SCORES, max_tokens=SCORE_TOKENS)
        if not verdict.ok:
            self.sent_back[f"critic unreadable ({verdict.status})"] += 1
            return None, question, "the critic could not score it"
        reason = critic_reason(verdict.value, self.critic_config)
        if reason:
            self.sent_back[reason] += 1
            return None, question, str(verdict.value.get("feedback") or reason)
        return Draft(kind, question.strip(), answer.strip(), found, moved), question, ""

    def _rewrite(self, draft: Draft, group: list[Passage]) -> Draft:
        """evolve rewrites, each a way in turn; one that fails a check or the critic keeps the one before."""
        ways = [w for w in self.evolution.ways if w != "both_places" or draft.kind == "two_place"]
        if draft.kind == "search":
            ways = [w for w in ways if w in ("concrete", "angle")] or ["concrete"]
        for _ in range(self.evolve):
            way = ways[self.turn % len(ways)]
            self.turn += 1
            self.evolved["asked"] += 1
            messages, spans = prompts.rewrite(draft.question, draft.kind, way, group, self.examples, self.scenario,
                                              self.task, self.kinds.long_words, self.kinds.search_words)
            before = Counter(self.sent_back)
            better, _, _ = self._attempt(messages, spans, draft.kind, group, self.written | {repeat_key(draft.question)})
            failed = self.sent_back - before
            self.sent_back = before  # a rewrite's failure is counted as the rewrite's, not as a draft sent back
            if better is None:
                self.evolved["kept_before"].update(failed)
            else:
                self.evolved["rewritten"] += 1
                draft = better
        return draft


def critic_reason(scores: dict, config: CriticConfig) -> str | None:
    """Why the critic sends a question back: the answer not given (answered under answered_at), not
    standing alone (under standing_at), or the mean of the three under threshold; None to pass."""
    mean = (scores["standing_alone"] + scores["clarity"] + scores["answered"]) / 3
    if scores["answered"] < config.answered_at:
        return "critic: not answered"
    if scores["standing_alone"] < config.standing_at:
        return "critic: not standing alone"
    if mean < config.threshold:
        return "critic: mean under threshold"
    return None
