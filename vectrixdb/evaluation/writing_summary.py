"""The kinds plan of write_golden (step 2) and what a run comes to (`Written` and its summary).

`plan_kinds` turns the mix into one kind per slot: each kind's count is its share of the slots,
rounded by largest remainders; two-place questions go only to slots whose passage has a partner
(evenly spread among them), and any two-place shortfall is shared out over the other kinds by their
shares and said in a note. The other kinds are dealt in turn, each slot taking the kind furthest
behind its share, so every stretch of the collection gets a mix rather than a block of one kind.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from vectrixdb.evaluation.writing.config import KINDS


def counts_for(n: int, shares: dict[str, float]) -> dict[str, int]:
    """n split by shares with largest remainders (ties in KINDS order)."""
    total = sum(shares.values()) or 1.0
    exact = {k: n * shares.get(k, 0.0) / total for k in KINDS}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(KINDS, key=lambda k: -(exact[k] - out[k]))[: n - sum(out.values())]:
        out[k] += 1
    return out


def plan_kinds(mix: dict[str, float], paired: list[bool]) -> tuple[list[str], dict[str, int], list[str]]:
    """(kind per slot, wanted counts, notes) for slots whose passages have a partner where paired is True."""
    n = len(paired)
    wanted = counts_for(n, mix)
    notes: list[str] = []
    candidates = [i for i, ok in enumerate(paired) if ok]
    two = min(wanted["two_place"], len(candidates))
    kinds: list[str | None] = [None] * n
    for j in range(two):
        kinds[candidates[int((j + 0.5) * len(candidates) / two)]] = "two_place"
    if two < wanted["two_place"]:
        notes.append(f"two-place: {wanted['two_place']} wanted, {len(candidates)} passage(s) had another alike enough "
                     "on another page; the rest went to the other kinds")
    rest = {k: v for k, v in mix.items() if k != "two_place"}
    target = counts_for(n - two, rest) if sum(rest.values()) > 0 else counts_for(n - two, {"fact": 1.0})
    dealt: Counter = Counter()
    for i in range(n):
        if kinds[i] is None:
            kind = max((k for k in KINDS if target.get(k, 0) > dealt[k]),
                       key=lambda k: (target[k] - dealt[k]) / max(target[k], 1))
            kinds[i] = kind
            dealt[kind] += 1
    return [k for k in kinds if k is not None], wanted, notes


@dataclass
class Written:
    """What write_golden did: the rows it wrote (`questions`, to `path`) and every count behind them.

    asked = kept + set_aside: a question is asked once per passage given to the drafting step;
    `sent_back` counts every draft returned with its reason (a question may be sent back and then
    kept); `set_aside` ones never passed. `usage` is the writer's and the critic's ledger for this run
    (requests: HTTP requests really sent, retries included; answers: completions received; answers
    from the cache cost nothing)."""

    path: str | None
    questions: list[Any] = field(default_factory=list)
    n: int = 0
    asked: int = 0
    set_aside: int = 0
    sent_back: Counter = field(default_factory=Counter)
    passages: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, dict[str, Any]] = field(default_factory=dict)
    evolution: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    check: Any = None

    @property
    def kept(self) -> int:
        return len(self.questions)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "n": self.n, "asked": self.asked, "kept": self.kept, "set_aside": self.set_aside,
                "sent_back": dict(self.sent_back), "passages": self.passages, "kinds": self.kinds,
                "evolution": self.evolution, "usage": self.usage, "seconds": round(self.seconds, 3),
                "notes": list(self.notes), "check_ok": None if self.check is None else self.check.ok}

    def summary(self) -> str:
        p, u = self.passages, self.usage
        cost = "n/a" if u.get("cost") is None else f"${u['cost']:.4f}"
        lines = [f"{self.path or '(no file written)'}: {self.kept} kept of {self.asked} asked (n={self.n}), "
                 f"{self.set_aside} set aside",
                 f"sent back: {_counts(self.sent_back)}",
                 f"passages: {p.get('chunks', 0)} chunks, {p.get('eligible', 0)} eligible, {p.get('tried', 0)} tried "
                 f"by the critic, {p.get('used', 0)} drafted from; skipped: {_counts(p.get('skipped', {}))}",
                 "kinds (kept / planned / mix): " + ", ".join(
                     f"{k} {v['kept']}/{v['planned']}/{v['mix']:.0%}" for k, v in self.kinds.items()),
                 f"rewrites: {self.evolution.get('rewritten', 0)} of {self.evolution.get('asked', 0)} kept; "
                 f"kept before: {_counts(self.evolution.get('kept_before', {}))}",
                 f"model: {u.get('requests', 0)} requests sent (retries included), {u.get('answers', 0)} answers "
                 f"received, {u.get('cached', 0)} from the cache; "
                 f"{u.get('prompt_tokens', 0)} + {u.get('completion_tokens', 0)} tokens, cost {cost}, "
                 f"{self.seconds:.1f} s"]
        lines += [f"note: {note}" for note in self.notes]
        if self.check is not None:
            lines.append(f"check_golden: {'ok' if self.check.ok else 'ERRORS'} ({len(self.check.notes)} note(s), "
                         "drafts until a person checks them)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Written(path={self.path!r}, kept={self.kept}, asked={self.asked}, set_aside={self.set_aside})"


def _counts(counter: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def merge_usage(ledgers: list[dict]) -> dict[str, Any]:
    """The totals of several ChatWriter ledgers added together (cost None when none had a price)."""
    out: dict[str, Any] = {"asks": 0, "cached": 0, "requests": 0, "answers": 0, "prompt_tokens": 0,
                           "completion_tokens": 0, "seconds": 0.0, "cost": None}
    for t in ledgers:
        for key in ("asks", "cached", "requests", "answers", "prompt_tokens", "completion_tokens", "seconds"):
            out[key] += t.get(key, 0) or 0
        if t.get("cost") is not None:
            out["cost"] = (out["cost"] or 0.0) + t["cost"]
    out["seconds"] = round(out["seconds"], 3)
    return out
