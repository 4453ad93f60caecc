"""compare_chunking's model-backed builds: LLM cut points, contextual notes, late chunking.

- LLM-based (cut_with=llm_cutter(chat), given by chat=): the model says where each topic starts, at
  every size of the plan.
- Contextual (context_with=context_writer(chat), given by chat=): each technique once more at its
  middle size, with the model's note in front of every chunk for the embedder (one call a chunk,
  so not at every size). Named `<technique>+notes`.
- Late (late=True, and by default with chat=, when the embedding model pools the mean of its
  tokens): recursive chunks at the middle size, each vector the mean of its tokens read in the
  whole document.

Each is given or refused on its own (False refuses); what was not built is in `skipped` with the
true reason: no chat model, a model that pools its first token, or the service's refusal (the
model-free builds are still compared). Model calls go through the writer's cache, so a rerun costs
nothing; each build's calls, tokens, cost and seconds are in `report["model_builds"]`: `seconds` adds
up every call's own time (calls sent at once overlap, so it can exceed the build's), `wall_s` is the
build's time from start to end, cutting and embedding included. A model-backed build
whose every call failed is not compared (it would be a model-free build under a model's name): it is
under `skipped`, with how many calls failed.

With a model that answers (answered(), unscored_values()), an answer or verdict that did not come
back counts as not right and is counted per build (the frame's `scored` and `unscored` columns); a
build with no scored answer is not compared, and when no answer at all was scored, `best` is None
with the reason and the first failure's words: a failed model never decides a comparison.
"""
from __future__ import annotations

import time
from typing import Any

from vectrixdb.errors import Refused, Unsupported
from vectrixdb.roles import Answerer, ChatModel, Cutter, Embedder, Judge, NoteWriter

MIDDLE = {"parent_child": 500}
DEFAULT_MIDDLE = 1000


def plan_model_builds(chat: ChatModel | None, cut_with: Cutter | bool | None, context_with: NoteWriter | bool | None, late: bool | None, embedder: Embedder) -> tuple[dict, list]:
    """What to build ({"llm": cutter, "notes": writer, "late": True}) and what is skipped, with why."""
    from vectrixdb.chunk_models import context_writer, llm_cutter

    give, skipped = {}, []
    for kind, given, make, why in (("llm", cut_with, llm_cutter, "needs a chat model: chat= or cut_with=llm_cutter(chat)"),
                                   ("contextual", context_with, context_writer,
                                    "needs a chat model: chat= or context_with=context_writer(chat)")):
        if given is False:
            skipped.append({"name": kind, "why": "refused by the caller (False)"})
        elif given is not None:
            give[kind] = given
        elif chat is not None:
            give[kind] = make(chat)
        else:
            skipped.append({"name": kind, "why": why})
    if late is False:
        skipped.append({"name": "late", "why": "refused by the caller (late=False)"})
    elif late is None and chat is None:
        skipped.append({"name": "late", "why": "built with the model-backed builds: chat= (or late=True)"})
    else:
        from vectrixdb.late import check_late

        try:
            check_late(embedder)
            give["late"] = True
        except Unsupported as exc:
            if late is True:
                raise
            skipped.append({"name": "late", "why": str(exc)})
    return give, skipped


def model_builds(collections: dict[str, list], give: dict, techniques: list[str], sizes: list[int], headings: list[bool],
                 embedder: Embedder, progress: bool = False) -> tuple[list, list, list]:
    """(builds, skipped, costs): the model-backed builds of `give`, each a chunking Build."""
    from vectrixdb.evaluation.chunking.builds import Build

    builds: list = []
    skipped: list[dict] = []
    costs: list = []
    jobs = [("llm", size, h) for size in sizes for h in headings] if "llm" in give else []
    jobs += [(f"{t}+notes", MIDDLE.get(t, DEFAULT_MIDDLE), False) for t in techniques] if "contextual" in give else []
    jobs += [("late", DEFAULT_MIDDLE, False)] if "late" in give else []
    from tqdm.auto import tqdm

    for name, size, heading in tqdm(jobs, desc="model-backed builds", disable=not progress or not jobs):
        kind = "llm" if name == "llm" else "late" if name == "late" else "contextual"
        if any(s["name"] == kind for s in skipped):
            continue
        model = give.get(kind) if kind != "late" else None
        before = _totals(model)
        # one cutter or note writer serves every build of its kind: its counters run on, so take the difference
        calls, failed = (model.calls, model.failed) if model is not None else (0, 0)
        started = time.perf_counter()
        try:
            build = Build(name, size, heading, {}, {})
            _fill(build, collections, kind, model, size, heading, embedder)
        except Refused as exc:
            skipped.append({"name": kind, "why": f"refused by the service: {exc}"})
            continue
        label = build.label
        costs.append({"build": label,
                      **({"calls": model.calls - calls, "failed": model.failed - failed} if model is not None else {}),
                      **_delta(_totals(model), before), "wall_s": round(time.perf_counter() - started, 3)})
        if model is not None and model.calls > calls and model.failed - failed == model.calls - calls:
            # every cut or note failed: the build would be a model-free one under a model's name
            skipped.append({"name": kind, "why": f"every one of the {model.calls - calls} model calls of {label} "
                                                 "failed, so it is not compared (see model_builds)"})
            continue
        builds.append(build)
    return builds, skipped, costs


def answered(builds: list, handed: dict, assigned: list, collections: dict, answer: Answerer, judge: Judge,
             threshold: float, progress: bool) -> tuple[dict, dict, dict, list]:
    """(right, scored, cost, answers) per build and question: right is answered right; scored is
    whether the answer and its verdict both came back (one that did not counts as not right and is
    counted); cost holds the model's calls, tokens and cost, the outcomes and the first failure's
    words; answers has one row per build and question: the answer, its score and the judge's reason,
    so a person can read the verdicts that decided."""
    from tqdm.auto import tqdm

    from vectrixdb.chat.parallel import concurrently, width
    from vectrixdb.evaluation.generation.answers import model_delta, model_totals
    from vectrixdb.evaluation.generation.reader import answer_and_judge

    before = {"answer": model_totals(answer), "judge": model_totals(judge)}
    started = time.perf_counter()
    right: dict = {}
    scored: dict = {}
    statuses: dict = {}
    first = None

    def one(job):  # a question's answer from the handed text, then its verdict
        (q, name), spans = job
        context = "\n\n".join(collections[name][d].markdown[a:c] for d, a, c in spans)
        return answer_and_judge(answer, judge, q.question, q.reference, context, threshold)

    answers: list[dict] = []
    for b in tqdm(builds, desc="answering", disable=not progress):
        key = (b.technique, b.size, b.heading)
        right[key], scored[key] = [], []
        # a build's questions at once, up to the writers' max_concurrency, in order (chat.parallel)
        jobs = list(zip(assigned, handed[key]))
        for ((q, _), _), got in zip(jobs, concurrently(one, jobs, workers=width(answer, judge)), strict=True):
            statuses[got.status] = statuses.get(got.status, 0) + 1
            if got.status != "ok" and first is None:
                first = f"{got.status}: {got.why}" if got.why else got.status
            right[key].append(got.right)
            scored[key].append(got.status == "ok")
            answers.append({"build": b.label, "question": q.id,
                            "answer": got.answer, "score": got.score, "right": got.right, "outcome": got.status,
                            "judge_reason": got.reason})
    cost = {"outcomes": statuses, "first_failure": first, "answer": model_delta(answer, before["answer"]),
            "wall_s": round(time.perf_counter() - started, 3)}  # the answers' and verdicts' own seconds overlap
    if judge is not answer:
        cost["judge"] = model_delta(judge, before["judge"])
    return right, scored, cost, answers


def unscored_values(builds: list, scored: dict, cost: dict, ranked: list) -> dict:
    """What the report says of answers that could not be scored: how many, per build not compared,
    a warning when some failed, and the reason when none was scored (then no build is best)."""
    total = sum(len(v) for v in scored.values())
    failed = total - sum(sum(v) for v in scored.values())
    out: dict[str, Any] = {"unscored": failed, "answers": total}
    if not failed:
        return out
    kinds = ", ".join(f"{s}: {n}" for s, n in sorted(cost["outcomes"].items()) if s != "ok")
    said = f"; the first failure: {cost['first_failure']}" if cost.get("first_failure") else ""
    if not ranked:
        out["reason"] = (f"no answer could be scored: all {total} answers or their verdicts failed ({kinds}){said}; "
                         "answered right decides nothing, so no build is best")
        out["warnings"] = [out["reason"]]  # shown where the run is shown
        return out
    kept = {id(b) for b in ranked}
    dropped = [b.label for b in builds if id(b) not in kept]
    out["unscored_builds"] = dropped
    out["warnings"] = [f"{failed} of {total} answers could not be scored ({kinds}){said}; each counts as not right "
                       "(per build in the frame's unscored column)"
                       + (f"; builds with no scored answer are not compared: {', '.join(dropped)}" if dropped else "")]
    return out


def _fill(build, collections: dict[str, list], kind: str, model: Any, size: int, heading: bool, embedder: Any) -> None:
    import numpy as np

    from vectrixdb.chunk_models import notes_of
    from vectrixdb.chunking import chunk_document
    from vectrixdb.ingest import embed_text
    from vectrixdb.late import late_vectors_many

    technique = "llm" if kind == "llm" else "recursive" if kind == "late" else build.technique.split("+")[0]
    vectors: dict[str, Any] = {}
    for name, docs in collections.items():
        spans, texts, late_items = [], [], []
        for d, doc in enumerate(docs):
            options = {"cut_with": model} if kind == "llm" else {"embedder": embedder}
            chunks = chunk_document(doc, technique, chunk_size=size, **options)
            notes = notes_of(model, doc.markdown, [(c.start, c.end) for c in chunks]) if kind == "contextual" else []
            for i, c in enumerate(chunks):
                handed = c.parent or c
                spans.append((d, handed.start, handed.end))
                text = embed_text(c, heading)
                if kind == "contextual":
                    note = notes[i]  # asked at once, up to the writer's max_concurrency (chunk_models.notes_of)
                    text = f"{note}\n\n{text}" if note else text
                texts.append(text)
            if kind == "late":
                late_items.append((doc.markdown, [(c.start, c.end) for c in chunks]))
        build.spans[name], build.texts[name] = spans, texts
        build.chunks += len(spans)
        if kind == "late":
            rows = late_vectors_many(embedder, late_items) if late_items else []
            vectors[name] = np.vstack(rows) if rows else np.zeros((0, embedder.dim), np.float32)
    if kind == "late":
        build.vectors = vectors


def _totals(model: Any) -> dict:
    chat = getattr(model, "chat", None)
    return dict(chat.totals()) if chat is not None and hasattr(chat, "totals") else {}


def _delta(after: dict, before: dict) -> dict:
    keys = ("requests", "cached", "prompt_tokens", "completion_tokens", "seconds", "cost")
    return {k: (after.get(k) or 0) - (before.get(k) or 0) if after.get(k) is not None else None
            for k in keys if k in after}
