"""What production retrieved, scored against labels: retrieval spans from traces as a retrieval run.

Two conventions are read, whichever a span follows:

- OpenTelemetry's GenAI semantic conventions: a span whose `gen_ai.operation.name` is "retrieval",
  the query in `gen_ai.retrieval.query.text`, the documents in `gen_ai.retrieval.documents` (a list
  of {"id", "score"}, structured or as a JSON string, as the conventions allow on spans).
- OpenInference: a span whose `openinference.span.kind` is "RETRIEVER", the query in `input.value`,
  the documents flattened as `retrieval.documents.N.document.id / .score / .content / .metadata`
  (metadata a JSON string), as OpenInference's instrumentations write them.

A document's id names the document it came from (a `doc#page=N` or `doc::n` id is split as a label
is); where metadata is recorded, `doc_id`, else `source`, `file_path` or `file_name` (the file name
alone: a vectrixdb document id is its file name) names it instead, and its page is read from
`page_label` when that is a number, else `pages` / `page_number` (1-based) or `page` (0-based, as
LangChain's PDF loaders write it). A span without a query, or with documents that cannot be read,
is listed in `skipped` with the reason, never scored.

Spans come from OTLP JSON files (one ExportTraceServiceRequest per file, or one per line as the
collector's file exporter writes them), from any iterable of SDK spans, or from TraceCollector, an
exporter a user adds to their tracer provider. traces_report matches each retrieval to a golden
question by id (the span attribute `vectrixdb.question.id`, or another named, on the retrieval span
or a span enclosing it) or by the same text
once whitespace and case are folded, and scores the matched ones at any grain with
retrieval_report; a question traced more than once is scored on its latest retrieval (the others
are counted). traces_pool pools what production retrieved for questions no golden row holds, for
the review widget, so production questions become labelled ones. write_verdicts sends each scored
retrieval's verdict back as a `gen_ai.evaluation.result` event parented to its span, through the
OpenTelemetry logs API, where a collector takes it (OpenInference defines no event of its own for
this; the same event is written for its spans).
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from vectrixdb.errors import BadInput, NotFound
from vectrixdb.evaluation.golden.labels import Result
from vectrixdb.evaluation.golden.questions import Question, split_label
from vectrixdb.extras import needs

QUESTION_ID = "vectrixdb.question.id"  # the span attribute that names a golden question, when set
GENAI_QUERY, GENAI_DOCUMENTS = "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"
OI_KIND, OI_QUERY, OI_DOCUMENTS = "openinference.span.kind", "input.value", "retrieval.documents."
EVENT = "gen_ai.evaluation.result"


@dataclass(frozen=True)
class Retrieval:
    """One traced retrieval: the span's ids, the query and the ranked results."""
    trace_id: str
    span_id: str
    query: str
    results: tuple[Result, ...]
    convention: str  # "gen_ai" or "openinference"
    end_ns: int = 0
    attributes: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass
class Traces:
    """What was read: the retrievals, and the spans that looked like retrievals but were skipped."""
    retrievals: list[Retrieval]
    skipped: list[dict]
    parents: dict = field(default_factory=dict, repr=False)  # span id -> (parent span id, attributes)

    def inherit(self) -> "Traces":
        """Each retrieval also carries its enclosing spans' attributes it does not set itself (the
        nearest enclosing span first): an application that names the golden question on its request
        span names it for the retrieval inside."""
        for i, r in enumerate(self.retrievals):
            merged, parent = dict(r.attributes), self.parents.get(r.span_id, (None, {}))[0]
            while parent:
                above, attributes = self.parents.get(parent, (None, {}))
                merged = {**attributes, **merged}
                parent = above
            self.retrievals[i] = replace(r, attributes=merged)
        return self


# -- reading spans ---------------------------------------------------------------------------------

def read_traces(source: Any) -> Traces:
    """Retrievals from an OTLP JSON file (or a folder of them, or a list of paths), from SDK spans
    (ReadableSpan), or from a TraceCollector."""
    if isinstance(source, Traces):
        return source
    if isinstance(source, TraceCollector):
        return _from_spans(source.spans, "the collector")
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.exists():
            raise NotFound(f"no trace file at {path}")
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl")) if path.is_dir() else [path]
        out = Traces([], [])
        for f in files:
            got = _from_otlp_file(f)
            out.retrievals += got.retrievals
            out.skipped += got.skipped
        return out
    if isinstance(source, Iterable):
        items = list(source)
        if all(isinstance(x, (str, Path)) for x in items):
            return _merge([read_traces(x) for x in items])
        return _from_spans(items, "the spans given")
    raise BadInput(f"read_traces reads OTLP JSON files, SDK spans or a TraceCollector, not {type(source).__name__}")


def _merge(parts: list[Traces]) -> Traces:
    return Traces([r for p in parts for r in p.retrievals], [s for p in parts for s in p.skipped],
                  {k: v for p in parts for k, v in p.parents.items()})


def _from_spans(spans: Iterable[Any], where: str) -> Traces:
    out = Traces([], [])
    for span in spans:
        ctx = span.get_span_context() if hasattr(span, "get_span_context") else span.context
        attributes = dict(span.attributes or {})
        out.parents[f"{ctx.span_id:016x}"] = (f"{span.parent.span_id:016x}" if span.parent else None, attributes)
        _add(out, f"{ctx.trace_id:032x}", f"{ctx.span_id:016x}", attributes, span.end_time or 0, where)
    return out.inherit()


def _from_otlp_file(path: Path) -> Traces:
    text = path.read_text(encoding="utf-8")
    try:
        requests = [json.loads(text)] if text.lstrip().startswith("{") and "\n{" not in text.strip() else \
            [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: not OTLP JSON ({exc.msg} at line {exc.lineno})") from exc
    out = Traces([], [])
    for number, request in enumerate(requests, 1):
        if not isinstance(request, dict) or "resourceSpans" not in request:
            raise BadInput(f"{path}, request {number}: not an OTLP trace export (no resourceSpans)")
        for resource in request["resourceSpans"]:
            for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
                for span in scope.get("spans", []):
                    attributes = {a["key"]: _value(a.get("value", {})) for a in span.get("attributes", [])}
                    span_id = _hex(span.get("spanId", ""), 16)
                    out.parents[span_id] = (_hex(span.get("parentSpanId", ""), 16) or None, attributes)
                    _add(out, _hex(span.get("traceId", ""), 32), span_id, attributes,
                         int(span.get("endTimeUnixNano") or 0), f"{path}, span {span.get('name')!r}")
    return out.inherit()


def _hex(raw: str, width: int) -> str:
    """OTLP/JSON writes ids as hex; protobuf's own JSON mapping as base64: read both."""
    if len(raw) == width and all(c in "0123456789abcdefABCDEF" for c in raw):
        return raw.lower()
    return base64.b64decode(raw).hex() if raw else ""


def _value(v: dict) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: _value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    return None


def _add(out: Traces, trace_id: str, span_id: str, attributes: dict, end_ns: int, where: str) -> None:
    if attributes.get("gen_ai.operation.name") == "retrieval" or GENAI_DOCUMENTS in attributes:
        convention, query = "gen_ai", attributes.get(GENAI_QUERY)
    elif str(attributes.get(OI_KIND, "")).upper() == "RETRIEVER":
        convention, query = "openinference", attributes.get(OI_QUERY)
    else:
        return  # not a retrieval span
    try:
        if not isinstance(query, str) or not query.strip():
            raise BadInput("it records no query text")
        results = _genai_results(attributes) if convention == "gen_ai" else _openinference_results(attributes)
    except (BadInput, TypeError) as exc:  # this span is listed as skipped; the rest are read
        out.skipped.append({"where": where, "trace_id": trace_id, "span_id": span_id, "reason": str(exc)})
        return
    out.retrievals.append(Retrieval(trace_id, span_id, query, tuple(results), convention, end_ns, attributes))


def _genai_results(attributes: dict) -> list[Result]:
    docs = attributes.get(GENAI_DOCUMENTS, [])
    if isinstance(docs, str):
        try:
            docs = json.loads(docs)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{GENAI_DOCUMENTS} is not JSON ({exc.msg})") from exc
    if not isinstance(docs, list) or not all(isinstance(d, dict) and d.get("id") not in (None, "") for d in docs):
        raise BadInput(f"{GENAI_DOCUMENTS} is not a list of documents each with an id")
    return [_result(str(d["id"]), d.get("score"), "", {}, rank) for rank, d in enumerate(docs, 1)]


def _openinference_results(attributes: dict) -> list[Result]:
    found: dict[int, dict] = {}
    for key, value in attributes.items():
        if key.startswith(OI_DOCUMENTS):
            index, _, name = key[len(OI_DOCUMENTS):].partition(".")
            if index.isdigit():
                found.setdefault(int(index), {})[name.removeprefix("document.")] = value
    results = []
    for rank, index in enumerate(sorted(found), 1):
        doc = found[index]
        meta = doc.get("metadata") or {}
        if isinstance(meta, str):
            try:
                meta = json.loads(meta)
            except json.JSONDecodeError as exc:
                raise BadInput(f"document {index}'s metadata is not JSON ({exc.msg})") from exc
        results.append(_result(doc.get("id"), doc.get("score"), str(doc.get("content") or ""), meta, rank))
    return results


def _result(doc_id: Any, score: Any, text: str, meta: dict, rank: int) -> Result:
    """One document as a Result: its document from metadata where recorded, else from its id."""
    from vectrixdb.evaluation.retrieval.adapters import pages_of

    named = meta.get("doc_id") or next((Path(str(meta[k])).name for k in ("source", "file_path", "file_name")
                                        if meta.get(k)), None)
    chunk = str(meta.get("chunk_id") or doc_id or f"{named}::{rank}")
    if named is None:
        if doc_id in (None, ""):
            raise BadInput(f"document {rank} has neither an id nor metadata naming its document")
        named, page = split_label(str(doc_id))
        named = named.rsplit("::", 1)[0]
        pages: tuple[int, ...] = () if page is None else (page,)
    else:
        label = str(meta.get("page_label") or "")
        pages = (int(label),) if label.isdigit() else pages_of(meta)
    return Result(chunk, str(named), pages, text, None if score is None else float(score))


class TraceCollector:
    """An OpenTelemetry span exporter that keeps the spans it is given, in this process:

        provider.add_span_processor(SimpleSpanProcessor(collector := TraceCollector()))
        ... the application runs ...
        traces_report(collector, "golden.jsonl", by="page")

    It keeps every span it sees (read_traces picks the retrieval ones); `clear()` empties it."""

    def __init__(self) -> None:
        self.spans: list[Any] = []

    def export(self, spans: Sequence[Any]):
        with needs("traces"):
            from opentelemetry.sdk.trace.export import SpanExportResult

        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def clear(self) -> None:
        self.spans.clear()


# -- scoring ---------------------------------------------------------------------------------------

def match(traces: Traces, questions: list[Question], id_attribute: str = QUESTION_ID
          ) -> tuple[dict[str, list[Retrieval]], list[Retrieval]]:
    """{question key: its retrievals, oldest first} and the retrievals no question matches."""
    by_id = {str(x.id): x for x in questions if x.id is not None}
    by_text: dict[str, Question] = {}
    for question in questions:
        by_text.setdefault(question.folded(), question)
    matched: dict[str, list[Retrieval]] = {}
    unmatched: list[Retrieval] = []
    for r in sorted(traces.retrievals, key=lambda r: r.end_ns):
        named = r.attributes.get(id_attribute)
        q: Question | None = by_id.get(str(named)) if named is not None else None
        q = q or by_text.get(Question(r.query).folded())
        if q is None:
            unmatched.append(r)
        else:
            matched.setdefault(q.key(), []).append(r)
    return matched, unmatched


def traces_report(source: Any, questions: Any, k: Sequence[int] | int = (1, 3, 5, 10), by: str | None = None, *,
                  id_attribute: str = QUESTION_ID, save_to: str | None = None, name: str | None = None, **options):
    """The traced retrievals that match a golden question, scored as a retrieval run (retrieval_report
    at any grain), with report["traces"]: how many were read, matched, repeated, skipped, and the
    unmatched queries. No match at all is refused: an empty run never scores."""
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.retrieval.scoring import retrieval_report

    traces = read_traces(source)
    golden = questions_of(questions)
    matched, unmatched = match(traces, golden, id_attribute)
    if not matched:
        raise BadInput(f"none of the {len(traces.retrievals)} traced retrievals matches a golden question by "
                       f"{id_attribute!r} or by its text ({len(traces.skipped)} span(s) skipped)")
    scored = [q for q in golden if q.key() in matched]
    latest = {q.folded(): list(matched[q.key()][-1].results) for q in scored}
    report = retrieval_report(lambda query: latest[Question(query).folded()], scored, k=k, by=by, **options)
    report["traces"] = {
        "read": len(traces.retrievals), "matched": sum(len(v) for v in matched.values()),
        "questions": len(scored), "repeats": sum(len(v) - 1 for v in matched.values()),
        "unmatched": [r.query for r in unmatched], "skipped": traces.skipped,
        "spans": {key: [(r.trace_id, r.span_id) for r in matched[key]] for key in matched},
        "rule": f"a retrieval matches a golden question by the span attribute {id_attribute!r}, else by its text "
                "with whitespace and case folded; a question traced more than once is scored on its latest"}
    report.meta["name"] = name or "production traces"
    report.meta["system"] = {"adapter": "traces", "source": source if isinstance(source, str) else type(source).__name__,
                             "retrievals": len(traces.retrievals)}  # what production retrieved, not a function of ours
    if save_to:
        report.save(save_to)
    return report


def traces_pool(source: Any, questions: Any = (), *, depth: int = 10, by: str = "page",
                id_attribute: str = QUESTION_ID):
    """Production questions no golden row holds, with what production retrieved for them pooled to
    `depth` for review (pooling.review), one question per distinct query (its latest retrieval)."""
    from vectrixdb.evaluation.golden.files import questions_of
    from vectrixdb.evaluation.retrieval.pooling import pool

    traces = read_traces(source)
    _, unmatched = match(traces, questions_of(questions) if questions else [], id_attribute)
    latest: dict[str, Retrieval] = {}
    for r in unmatched:  # oldest first: the last one kept is the latest
        latest[Question(r.query).folded()] = r
    if not latest:
        raise BadInput("every traced retrieval matches a golden question: nothing to pool")
    asked = [Question(r.query) for r in latest.values()]
    run = {q.key(): list(r.results) for q, r in zip(asked, latest.values())}
    return pool({"production": run}, asked, depth=depth, by=by)


def write_verdicts(report: Any, source: Any, *, measure: str | None = None, logger_provider: Any = None) -> int:
    """One `gen_ai.evaluation.result` event per scored retrieval, parented to its span: the name
    `vectrixdb.<measure>` (recall at the report's largest k unless named), the score, the label
    "found" or "missed" (a right result within that k), and an explanation naming the golden
    question and the rank of the first right result. Returns how many were emitted."""
    with needs("traces"):
        from opentelemetry import trace
        from opentelemetry._logs import get_logger_provider
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    if report.kind != "retrieval" or "traces" not in report:
        raise BadInput("write_verdicts takes the report traces_report made")
    k = max(report["k"])
    measure = measure or f"recall@{k}"
    if measure not in report.frame:
        raise BadInput(f"the report has no {measure!r}; it has {[c for c in report.frame.columns if '@' in c]}")
    logger = (logger_provider or get_logger_provider()).get_logger("vectrixdb")
    emitted = 0
    for key, row in report.frame.iterrows():  # indexed by question key
        key, first = str(key), row["first_right"]
        found = first is not None and first == first and int(first) <= k  # NaN when none was right
        for trace_id, span_id in report["traces"]["spans"].get(key, [])[-1:]:
            context = trace.set_span_in_context(NonRecordingSpan(SpanContext(
                int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))))
            logger.emit(event_name=EVENT, context=context, attributes={
                "gen_ai.evaluation.name": f"vectrixdb.{measure}",
                "gen_ai.evaluation.score.value": float(row[measure]),
                "gen_ai.evaluation.score.label": "found" if found else "missed",
                "gen_ai.evaluation.explanation": (
                    f"golden question {key}: first right {report['by']} at rank {int(first)}" if first == first and
                    first is not None else f"golden question {key}: no right {report['by']} in the results")})
            emitted += 1
    return emitted
