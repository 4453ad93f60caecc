"""Production traces as runs (issue 49 item 2), with the real OpenTelemetry SDK making the spans:
GenAI retrieval spans written with the semantic conventions' own attribute names, OpenInference
RETRIEVER spans written by OpenInference's LangChain instrumentation around a real LangChain
retriever, and the same spans through an OTLP JSON file encoded by OpenTelemetry's own protobuf
encoder. Verdicts go back as gen_ai.evaluation.result log records through the SDK's logs pipeline."""
from __future__ import annotations

import json

import pytest

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GA

from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, retrieval_report
from vectrixdb.evaluation.retrieval.traces import (TraceCollector, read_traces, traces_pool, traces_report,
                                         write_verdicts)

GOLDEN = [Question("How many people did Uber employ?", expected=["uber_2021.pdf#page=10"], id="staff"),
          Question("What was Uber's revenue in 2021?", expected=["uber_2021.pdf#page=53"], id="revenue"),
          Question("Where is Lyft based?", expected=["lyft_2021.pdf#page=1"], id="lyft-home")]


def genai_span(tracer, query: str, docs: list[dict], **extra) -> None:
    with tracer.start_as_current_span("retrieval") as span:
        span.set_attribute(GA.GEN_AI_OPERATION_NAME, "retrieval")
        if query is not None:
            span.set_attribute(GA.GEN_AI_RETRIEVAL_QUERY_TEXT, query)
        span.set_attribute(GA.GEN_AI_RETRIEVAL_DOCUMENTS, json.dumps(docs))  # a list of objects: JSON on a span
        for key, value in extra.items():
            span.set_attribute(key, value)


@pytest.fixture
def traced():
    """Spans made by the SDK: four GenAI retrievals (the staff question twice, first wrong then
    right; the revenue question with its words respaced and upper-cased; one production question no
    golden row holds), one span with no query, and two OpenInference RETRIEVER spans from a LangChain
    retriever (the Lyft question in other words, inside a span naming its id; another production
    question)."""
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from openinference.instrumentation.langchain import LangChainInstrumentor

    collector, provider = TraceCollector(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    tracer = provider.get_tracer("app")
    genai_span(tracer, "How many people did Uber employ?", [{"id": "uber_2021.pdf#page=53", "score": 0.9}])
    genai_span(tracer, "How many people did Uber employ?", [{"id": "uber_2021.pdf#page=9", "score": 0.8},
                                                            {"id": "uber_2021.pdf#page=10", "score": 0.7}])
    genai_span(tracer, "  WHAT was Uber's revenue   in 2021? ", [{"id": "uber_2021.pdf::12", "score": 0.5}])
    genai_span(tracer, "Who audits Uber?", [{"id": "uber_2021.pdf#page=80", "score": 0.4}])
    genai_span(tracer, None, [{"id": "x", "score": 1.0}])

    class Filings(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            if "Lyft" in query:  # PyPDFLoader's metadata: a path, a 0-based page and its label
                return [Document("Lyft is based in San Francisco", metadata={"source": "/data/lyft_2021.pdf", "page": 0,
                                                                              "page_label": "1"}),
                        Document("Risk factors", metadata={"source": "/data/lyft_2021.pdf", "page": 20})]
            return [Document("Board of directors", metadata={"source": "/data/uber_2021.pdf", "page": 140})]

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with tracer.start_as_current_span("ask") as parent:  # the question's id on the span around the retrieval
            parent.set_attribute("vectrixdb.question.id", "lyft-home")
            Filings().invoke("Where is Lyft headquartered?")
        Filings().invoke("Who sits on Uber's board?")
    finally:
        instrumentor.uninstrument()
    return collector


def test_both_conventions_are_read_from_the_sdk_and_from_an_otlp_file_alike(traced, tmp_path):
    got = read_traces(traced)
    conventions = [r.convention for r in got.retrievals]
    assert conventions.count("gen_ai") == 4 and conventions.count("openinference") == 2
    assert [s["reason"] for s in got.skipped] == ["it records no query text"]
    staff = got.retrievals[1]
    assert [(r.doc_id, r.pages, r.score) for r in staff.results] == [("uber_2021.pdf", (9,), 0.8),
                                                                      ("uber_2021.pdf", (10,), 0.7)]
    lyft = next(r for r in got.retrievals if "Lyft" in r.query)
    assert [(r.doc_id, r.pages) for r in lyft.results] == [("lyft_2021.pdf", (1,)), ("lyft_2021.pdf", (21,))]
    assert lyft.results[0].text == "Lyft is based in San Francisco"

    request = MessageToDict(encode_spans(traced.spans))  # OpenTelemetry's own encoder; ids in base64 here
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(request) + "\n" + json.dumps(request) + "\n")  # the collector's file exporter: a line each
    from_file = read_traces(path)
    assert [r.results for r in from_file.retrievals] == [r.results for r in got.retrievals] * 2
    assert {(r.trace_id, r.span_id) for r in from_file.retrievals} == {(r.trace_id, r.span_id) for r in got.retrievals}

    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": [')
    with pytest.raises(BadInput, match="bad.json: not OTLP JSON"):
        read_traces(bad)


def test_matched_traces_score_as_the_same_results_given_directly(traced):
    """The staff question is scored on its latest retrieval (right at rank 2), the revenue question
    matches by its folded text, the Lyft one by the id attribute on the span enclosing the
    instrumented retriever (the instrumentation does not copy it onto the RETRIEVER span, and the
    words differ). The figures equal retrieval_report's on the same results handed over directly."""
    report = traces_report(traced, GOLDEN, k=(1, 3), by="page")
    t = report["traces"]
    assert (t["read"], t["matched"], t["questions"], t["repeats"]) == (6, 4, 3, 1)
    assert sorted(t["unmatched"]) == ["Who audits Uber?", "Who sits on Uber's board?"]
    given = {"How many people did Uber employ?": ["uber_2021.pdf#page=9", "uber_2021.pdf#page=10"],
             "What was Uber's revenue in 2021?": ["uber_2021.pdf::12"],
             "Where is Lyft based?": ["lyft_2021.pdf#page=1", "lyft_2021.pdf#page=21"]}
    direct = retrieval_report(lambda q: given[q], GOLDEN, k=(1, 3), by="page")
    assert report["recall"] == direct["recall"] and report["mrr"] == direct["mrr"] == pytest.approx(0.5)
    assert report.meta["name"] == "production traces"
    assert report.meta["system"] == {"adapter": "traces", "source": "TraceCollector", "retrievals": 6}, report.meta["system"]


def test_the_id_attribute_on_the_retrieval_span_matches_and_no_match_is_refused(tmp_path):
    collector, provider = TraceCollector(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collector))
    tracer = provider.get_tracer("app")
    genai_span(tracer, "where is it?", [{"id": "lyft_2021.pdf#page=1", "score": 1.0}], **{"vectrixdb.question.id": "lyft-home"})
    report = traces_report(collector, GOLDEN, k=1, by="page", save_to=str(tmp_path), name="prod, Dec 4")
    assert report["recall"][1] == 1.0 and report["traces"]["questions"] == 1 and report["run_id"]
    assert report.meta["name"] == "prod, Dec 4"
    collector.clear()
    genai_span(tracer, "nothing anyone labelled", [{"id": "a.pdf", "score": 1.0}])
    with pytest.raises(BadInput, match="none of the 1 traced retrievals matches a golden question"):
        traces_report(collector, GOLDEN)


def test_unlabelled_production_questions_are_pooled_for_review(traced):
    pooled = traces_pool(traced, GOLDEN, depth=5, by="page")
    rows = pooled.frame.to_dict("records")
    assert pooled["questions"] == 2 and {r["found_by"][0] for r in rows} == {"production"}
    assert {r["label"] for r in rows} == {"uber_2021.pdf#page=80", "uber_2021.pdf#page=141"}


def test_verdicts_go_back_as_evaluation_events_parented_to_their_spans(traced):
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    report = traces_report(traced, GOLDEN, k=(1, 3), by="page")
    logs, exporter = LoggerProvider(), InMemoryLogRecordExporter()
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    assert write_verdicts(report, traced, logger_provider=logs) == 3
    records = [r.log_record for r in exporter.get_finished_logs()]
    assert {r.event_name for r in records} == {"gen_ai.evaluation.result"}
    staff = next(r for r in records if "staff" in r.attributes["gen_ai.evaluation.explanation"])
    latest = report["traces"]["spans"]["staff"][-1]
    assert (f"{staff.trace_id:032x}", f"{staff.span_id:016x}") == latest  # the latest retrieval's span
    assert dict(staff.attributes) == {"gen_ai.evaluation.name": "vectrixdb.recall@3", "gen_ai.evaluation.score.value": 1.0,
                                      "gen_ai.evaluation.score.label": "found",
                                      "gen_ai.evaluation.explanation": "golden question staff: first right page at rank 2"}
    revenue = next(r for r in records if "revenue" in r.attributes["gen_ai.evaluation.explanation"])
    assert revenue.attributes["gen_ai.evaluation.score.label"] == "missed"
