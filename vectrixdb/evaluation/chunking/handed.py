"""What each build of a chunking comparison handed over, kept in its saved run (issue 50.4).

compare_chunking hands each build's best spans of document text to every question until the budget
is spent. Kept as text, a full run (36 builds x 40 questions x 6,000 characters) would be 8.6 MB,
mostly the same passages again: a build with its heading path embedded hands spans of the same
chunks as the one without, and close builds hand the same pages. So `report["handed"]` keeps
references, and each handed character once:

    documents  [collection, doc_id] of each document anything was handed from; spans name it by index
    texts      the union of every span any build handed, per document, cut where a page starts:
               {"document", "start" (offset in its Markdown), "page" (its number, or null), "text"},
               in order, none overlapping
    questions  the question ids, in the order of each build's list
    builds     {build label: one {"handed", "evidence"} per question}: the spans it handed, best
               first, and where what made the question found lies (each evidence quote; for a row
               without evidence, the handed text on an expected page or document); "" for none

A list of spans is one string, `D:A-B D:A-B` (document index, start, end): report.json is indented,
and a JSON list would take a line per number. `passages` reads one build's hand-over back for a page.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any, Callable, Iterable

from vectrixdb.evaluation.golden.labels import folded, normal
from vectrixdb.evaluation.golden.questions import Question, split_label

Span = tuple[int, int, int]  # document index, start, end
SPAN = re.compile(r"(\d+):(\d+)-(\d+)")


def spans_text(spans: Iterable[Span]) -> str:
    return " ".join(f"{d}:{a}-{b}" for d, a, b in spans)


def read_spans(text: Any) -> list[Span]:
    return [(int(d), int(a), int(b)) for d, a, b in SPAN.findall(text if isinstance(text, str) else "")]


def join_spans(spans: list[tuple[int, int]], md: str) -> list[tuple[int, int]]:
    """Merge spans that overlap or are separated only by whitespace."""
    out: list[list[int]] = []
    for a, b in spans:
        if out and (a <= out[-1][1] or not md[out[-1][1] : a].strip()):
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def regions(docs: list, handed: list[Span]) -> list[Span]:
    """The handed spans joined per document: a quote cut across two handed chunks lies in one region."""
    out: list[Span] = []
    for d in sorted({d for d, _, _ in handed}):
        spans = sorted((a, b) for dd, a, b in handed if dd == d)
        out += [(d, a, b) for a, b in join_spans(spans, docs[d].markdown)]
    return out


def evidence_marks(q: Question, docs: list, handed: list[Span],
                   fold: Callable[[int], tuple[str, list[int]]]) -> list[Span]:
    """Where, in what a build handed for a found question, what made it found lies (compare._found's
    rules): each evidence quote, else the handed text on an expected page, else on an expected
    document. fold(d) is labels.folded of document d, made once per document by the caller."""
    if q.evidence:
        out: list[Span] = []
        joined = regions(docs, handed)
        for quote in q.evidence:  # found on the folded text alone: no region is normalised again
            needle = normal(quote)
            at = next((where for d, a, b in joined if needle and (where := _locate(fold(d), d, a, b, needle))), None)
            if at is not None:
                out.append(at)
        return out
    pages = set(q.pages)
    whole = set(q.documents) if not pages else {e for e in q.expected if split_label(e)[1] is None}
    out = []
    for d, a, b in handed:
        doc = docs[d]
        if doc.doc_id in whole:
            out.append((d, a, b))
        else:
            out += [(d, max(a, p.start), min(b, p.end)) for p in doc.pages
                    if (doc.doc_id, p.number) in pages and p.start < b and a < p.end]
    return out


def _locate(fold: tuple[str, list[int]], d: int, a: int, b: int, needle: str) -> Span | None:
    """The quote's place in document d's text between a and b, found on its folded form."""
    text, origin = fold
    lo, hi = bisect_left(origin, a), bisect_left(origin, b)
    at = text.find(needle, lo, hi)
    if at < 0:
        return None
    return d, origin[at], origin[at + len(needle) - 1] + 1


def record(handed: dict[str, list[list[Span]]], found: dict[str, list[bool]], assigned: list[tuple[Question, str]],
           collections: dict[str, list]) -> dict[str, Any]:
    """The `handed` record of a comparison (the module docstring): handed and found by build label,
    one entry per assigned (question, collection)."""
    numbers: dict[tuple[str, int], int] = {}  # (collection, doc index) -> its index in the record
    folds: dict[tuple[str, int], tuple[str, list[int]]] = {}
    used: dict[int, list[tuple[int, int]]] = {}

    def fold_of(name: str) -> Callable[[int], tuple[str, list[int]]]:
        def fold(d: int) -> tuple[str, list[int]]:
            if (name, d) not in folds:
                folds[(name, d)] = folded(collections[name][d].markdown)
            return folds[(name, d)]
        return fold

    builds: dict[str, list[dict[str, str]]] = {}
    for label, per_question in handed.items():
        rows = []
        for (q, name), spans, ok in zip(assigned, per_question, found[label], strict=True):
            marks = evidence_marks(q, collections[name], spans, fold_of(name)) if ok else []
            named = [(numbers.setdefault((name, d), len(numbers)), a, b) for d, a, b in spans]
            for n, a, b in named:
                used.setdefault(n, []).append((a, b))
            rows.append({"handed": spans_text(named),
                         "evidence": spans_text((numbers[(name, d)], a, b) for d, a, b in marks)})
        builds[label] = rows
    documents = sorted(numbers, key=numbers.__getitem__)
    texts = [piece for n, (name, d) in enumerate(documents)
             for a, b in _union(used.get(n, [])) for piece in _cut(n, collections[name][d], a, b)]
    return {"documents": [[name, collections[name][d].doc_id] for name, d in documents], "texts": texts,
            "questions": [q.key() for q, _ in assigned], "builds": builds}


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans merged where they overlap or touch; empty ones dropped."""
    out: list[list[int]] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _cut(n: int, doc: Any, a: int, b: int) -> list[dict[str, Any]]:
    """Document text a..b as pieces that each lie on one page (a page's number, or None outside pages)."""
    cuts = [a, *sorted(p.start for p in doc.pages if a < p.start < b), b]
    return [{"document": n, "start": s, "page": next((p.number for p in doc.pages if p.start <= s < p.end), None),
             "text": doc.markdown[s:e]} for s, e in zip(cuts, cuts[1:])]


def passages(record: Any, build: str, qid: str) -> list[dict[str, Any]] | None:
    """What `build` handed to question `qid`, best first, from a run's `handed` record: each passage's
    document, pages, span and its text as parts ({"text", "evidence"}: whether the part is where what
    made the question found lies). None when the run did not record it (runs saved before it was kept)."""
    if not isinstance(record, dict):
        return None
    questions = [str(x) for x in record.get("questions") or []]
    rows = (record.get("builds") or {}).get(build)
    if qid not in questions or not isinstance(rows, list) or len(rows) != len(questions) \
            or not isinstance(rows[questions.index(qid)], dict):
        return None
    row = rows[questions.index(qid)]
    documents = record.get("documents") or []
    pieces: dict[int, list[dict]] = {}
    for p in record.get("texts") or []:
        pieces.setdefault(p["document"], []).append(p)
    starts = {d: [p["start"] for p in held] for d, held in pieces.items()}  # saved in order, none overlapping
    marks = read_spans(row.get("evidence"))
    out = []
    for d, a, b in read_spans(row.get("handed")):
        held = _overlapping(pieces.get(d, []), starts.get(d, []), a, b)
        cuts = sorted({a, b, *(x for m, ma, mb in marks if m == d for x in (ma, mb) if a < x < b)})
        parts = [{"text": _text(held, s, e), "evidence": any(m == d and ma <= s and e <= mb for m, ma, mb in marks)}
                 for s, e in zip(cuts, cuts[1:])]
        name = documents[d] if d < len(documents) else ["?", "?"]
        out.append({"document": name[1], "collection": name[0], "start": a, "end": b,
                    "pages": sorted({p["page"] for p in held if p.get("page") is not None}),
                    "parts": [p for p in parts if p["text"]], "evidence": any(p["evidence"] for p in parts)})
    return out


def _overlapping(pieces: list[dict], starts: list[int], a: int, b: int) -> list[dict]:
    i = max(bisect_right(starts, a) - 1, 0)
    out = []
    while i < len(pieces) and pieces[i]["start"] < b:
        if pieces[i]["start"] + len(pieces[i]["text"]) > a:
            out.append(pieces[i])
        i += 1
    return out


def _text(pieces: list[dict], a: int, b: int) -> str:
    return "".join(p["text"][max(a - p["start"], 0) : max(b - p["start"], 0)] for p in pieces)
