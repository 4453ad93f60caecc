"""sweep and compare_chunking on the sample documents; the uber golden set against the PDF."""
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import PDFS, require
from vectrixdb.cli.commands import app
from vectrixdb.evaluation import (CompareConfig, Question, check_golden, compare_chunking, load_questions, sweep,
                                  sweep_markdown)
from vectrixdb.evaluation.chunking.compare import _hand_over
from vectrixdb.evaluation.chunking.handed import join_spans as _join
from vectrixdb.chunking import plain
from vectrixdb.evaluation.runs.stats import mcnemar_exact

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir())
GOLDEN = str(ROOT / "data" / "golden" / "sample.jsonl")


@pytest.mark.slow
def test_sweep_ranks_builds_and_leaves_collections_alone(tmp_path, policies):
    before = policies.info()
    report = sweep(SAMPLE, load_questions(GOLDEN), chunk=["recursive", "markdown"], chunk_size=[200, 1000],
                   embed_heading=[False, True], search=[{"mode": "dense"}, {"mode": "keyword"}], k=(1, 3), progress=False)
    assert len(report.frame) == 16 and report["rows"] == 16
    ndcg = list(report.frame["ndcg@3"])
    assert ndcg == sorted(ndcg, reverse=True)
    assert report["best"]["ndcg@3"] == ndcg[0] and report["best"]["chunk"] in {"recursive", "markdown"}
    assert (report.frame["chunks"] > 0).all() and (report.frame["build_s"] > 0).all()
    table = sweep_markdown(report)
    assert table.count("\n") == 17 and table.startswith("| chunk | chunk_size")
    assert policies.info() == before


def test_sweep_takes_ids_and_texts():
    docs = {"deferment": "# Deferment\n\nCustomers in disaster areas can defer loan payments with no late fees.",
            "emergency-fund": "# Emergency fund\n\nExpedited access to funds and waived fees for displaced customers."}
    q = [Question("Can a customer postpone a loan payment after a wildfire?", None, ["deferment"], "q1")]
    report = sweep(docs, q, chunk=["recursive", "markdown"], chunk_size=[1000], embed_heading=[False, True],
                   progress=False)
    assert report["best"]["recall@1"] == 1.0 and len(report.frame) == 4


def test_mcnemar_by_hand():
    # 6 questions only A got right, 0 only B: two-sided exact p = 2 * 0.5**6
    result = mcnemar_exact([True] * 6 + [True, False], [False] * 6 + [True, False])
    assert result == {"a_only": 6, "b_only": 0, "p_value": pytest.approx(2 * 0.5 ** 6)}
    assert mcnemar_exact([True, False], [True, False])["p_value"] == 1.0


def test_hand_over_spends_the_budget_best_first():
    spans = [(0, 0, 100), (0, 100, 300), (0, 0, 100), (0, 500, 900)]
    handed = _hand_over(__import__("numpy").array([0.9, 0.8, 0.7, 0.1]), spans, 250)
    assert handed == [(0, 0, 100), (0, 100, 250)]  # the repeated parent is handed once; the last is cut
    assert _join([(0, 10), (12, 20), (30, 40)], "x" * 10 + "  " + "y" * 8 + "z" * 10 + "w" * 10) == [(0, 20), (30, 40)]


def test_a_quote_cut_across_two_handed_chunks_counts():
    from vectrixdb.evaluation.chunking.compare import _found
    from vectrixdb.reading import read

    doc = read("alpha beta gamma delta epsilon zeta", doc_id="d")
    q = Question("q?", None, ["d"], "q", evidence=["gamma delta epsilon"])
    assert _found(q, [doc], [(0, 0, 17), (0, 17, 35)])      # "alpha beta gamma " + "delta epsilon zeta"
    assert not _found(q, [doc], [(0, 0, 17)])


@pytest.mark.slow
def test_compare_chunking_plan_ties_and_saved_run(tmp_path):
    report = compare_chunking(SAMPLE, GOLDEN, budget=400, sizes=[200, 400], save_to=str(tmp_path), progress=False)
    assert report["cost"]["builds"] == 6 * 2 * 2 and len(report.frame) == 24
    names = [t["name"] for t in report["techniques"]]
    assert sorted(names) == sorted(plain())  # every registered technique that needs no option of its own
    best = report["techniques"][0]
    assert report["best"] == best and best["tie"] is False and best["p_value"] is None
    for t in report["techniques"][1:]:
        assert t["right"] <= best["right"]
        assert t["tie"] == (t["p_value"] >= 0.05)
    cost = report["cost"]
    assert cost["unique_texts"] < cost["chunks_made"]  # identical texts across builds were embedded once
    assert cost["texts_embedded"] <= cost["unique_texts"]
    assert {s["name"] for s in report["skipped"]} == {"llm", "contextual", "late"}  # no chat model given
    saved = json.loads((tmp_path / "chunking" / "runs" / report["run_id"] / "report.json").read_text())
    assert saved["values"]["best"]["name"] == best["name"]
    per_question = (tmp_path / "chunking" / "runs" / report["run_id"] / "questions.csv").read_text().splitlines()
    assert per_question[0].startswith("id,") and len(per_question) == report["questions"] + 1  # outcomes, not builds
    again = compare_chunking(SAMPLE, GOLDEN, budget=400, sizes=[200, 400], progress=False)
    assert again["cost"]["texts_embedded"] == 0  # the second run costs nothing: every text is cached


def test_compare_chunking_with_collections_and_kept_markdown(policies):
    docs = {"bank": {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}}
    q = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
         Question("Stolen card liability?", None, ["card-fraud#page=1"], "2"),
         Question("Unknown document", None, ["elsewhere"], "3")]
    report = compare_chunking(docs, q, budget=150, techniques=["recursive", "fixed"], sizes=[100], headings=[False],
                              progress=False)
    assert report["questions"] == 2 and report["unassigned"] == 1
    assert report["best"]["right"] == 2


def test_cli_sweep_and_compare(tmp_path):
    done = CliRunner().invoke(app, ["sweep", *SAMPLE, "--golden", GOLDEN, "--chunk", "recursive", "--chunk",
                                    "markdown", "--size", "300", "--size", "1000"])
    assert done.exit_code == 0, done.output
    assert done.output.count("\n| ") >= 4
    done = CliRunner().invoke(app, ["compare-chunking", *SAMPLE, "--golden", GOLDEN, "--budget", "500",
                                    "--technique", "recursive", "--technique", "sentence", "--size", "300"])
    assert done.exit_code == 0, done.output
    assert "builds" in done.output and "recursive" in done.output


@pytest.mark.slow
def test_the_uber_golden_set_is_checked_against_the_pdf():
    import pdfplumber

    from vectrixdb.evaluation.golden.labels import normal
    from vectrixdb.reading import read

    path = ROOT / "data" / "golden" / "uber_2021.jsonl"
    check = check_golden(str(path))
    assert check.ok and check.ready >= 40
    doc = read(str(require(PDFS / "uber_2021.pdf")))
    with pdfplumber.open(str(PDFS / "uber_2021.pdf")) as pdf:
        for q in check.golden:
            assert q.evidence and q.pages
            page = q.pages[0][1]
            for quote in q.evidence:
                assert normal(quote) in normal(doc.page_text(page)), (q.id, page)
                if "|" not in quote:  # table cells are ours; prose is checked against pdfplumber too
                    assert normal(quote) in normal(pdf.pages[page - 1].extract_text()), (q.id, page)


def test_compare_chunking_with_a_model_decides_by_answered_right(policies):
    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    qs = [Question("Can I defer loan payments after a disaster?", "no late fees", ["deferment"], "1"),
          Question("Am I liable after reporting a stolen card?", "not liable", ["card-fraud"], "2")]
    asked = []

    def answer(question, context):
        asked.append(context)
        return context  # an extractive reader: the handed text itself

    def judge(metric, question, reference, answer_text, sources):
        assert metric == "correctness" and sources == [answer_text]
        return 1.0 if reference in answer_text else 0.0

    report = compare_chunking(docs, qs, budget=40, techniques=["fixed", "recursive"], sizes=[200], headings=[False],
                              config=CompareConfig(answer=answer, judge=judge), progress=False)
    assert report["decided_by"] == "answered right" and len(asked) == 4
    assert all(len(c) <= 40 + 2 for c in asked)  # only the handed characters reach the answer
    for t in report["techniques"]:  # an extractive reader is right only where the right document was handed
        assert t["right"] <= t["found"] and t["right"] == report.outcomes[f"{t['name']}/200/plain"].sum()
    assert "right" in report.frame and report["model"]["outcomes"] == {"ok": 4}
    # every answer and its verdict, build by build and in the questions' order, to read the judge against
    rows = report["verdicts"]
    assert [(r["build"], r["question"]) for r in rows] == [(b, q) for b in ("fixed/200/plain", "recursive/200/plain")
                                                           for q in ("1", "2")]
    assert [r["answer"] for r in rows] == asked and all(r["outcome"] == "ok" for r in rows)
    assert all(r["right"] == (r["score"] == 1.0) for r in rows) and sum(r["right"] for r in rows) == \
        sum(t["right"] for t in report["techniques"])
    with pytest.raises(ValueError, match="both a way to answer and a judge"):
        compare_chunking(docs, qs, config=CompareConfig(answer=answer), progress=False)


def test_model_backed_builds_in_the_comparison(policies, tmp_path):
    import json as _json

    from tests.llama_server import Scripted
    from vectrixdb.chat.writer import ChatWriter
    from vectrixdb.chunk_models import context_writer, llm_cutter

    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    qs = [Question("Can I defer loan payments after a disaster?", "no late fees", ["deferment"], "1"),
          Question("Am I liable after reporting a stolen card?", "not liable", ["card-fraud"], "2")]
    server = Scripted()
    try:
        for _ in range(4):  # one cut per document section (one section each)
            server.answer(_json.dumps({"starts": [0]}))
        for _ in range(4):  # one note per chunk; both techniques make the same chunks: the second is cached
            server.answer(_json.dumps({"note": "A bank policy."}))
        chat = ChatWriter(server.url, model="m", max_retries=0, cache=str(tmp_path / "c.sqlite"))
        report = compare_chunking(docs, qs, budget=300, techniques=["fixed", "recursive"], sizes=[200],
                                  headings=[False], progress=False,
                                  config=CompareConfig(cut_with=llm_cutter(chat), context_with=context_writer(chat),
                                                       late=True))
        names = {t["name"] for t in report["techniques"]}
        assert {"llm", "fixed+notes", "recursive+notes", "late"} <= names and report["skipped"] == []
        assert len(server.requests) == 8
        costs = {c["build"]: c for c in report["model_builds"]}
        assert costs["llm/200/plain"]["calls"] == 4 and costs["fixed+notes/1000/plain"]["requests"] == 4
        assert costs["recursive+notes/1000/plain"]["requests"] == 0 and costs["recursive+notes/1000/plain"]["cached"] == 4
        # one note writer serves both notes builds: each build counts its own calls, not the writer's running total
        assert costs["fixed+notes/1000/plain"]["calls"] == costs["recursive+notes/1000/plain"]["calls"] == 4
        # each build's own wall time, beside the calls' summed seconds (which overlap when calls run at once)
        assert all(c["wall_s"] > 0 for c in costs.values()) and set(costs) >= {"late/1000/plain"}
        quiet = compare_chunking(docs, qs, budget=300, techniques=["fixed"], sizes=[200], headings=[False],
                                 progress=False)
        assert {s["name"] for s in quiet["skipped"]} == {"llm", "contextual", "late"}
        server.fail(403, "deployment disabled")
        refused = compare_chunking(docs, qs, budget=300, techniques=["fixed"], sizes=[300], headings=[False],
                                   chat=ChatWriter(server.url, model="m", max_retries=0), progress=False,
                                   config=CompareConfig(answer=lambda q, c: c, judge=lambda *a: 1.0, late=False))
        assert any(s["name"] == "llm" and "deployment disabled" in s["why"] for s in refused["skipped"])
    finally:
        server.close()


# a comparison whose model failed says so (issue 26 item 6) ------------------------------------

class Ruled:
    """An OpenAI-compatible server on loopback that answers each request by a rule on its body, so
    which requests fail does not depend on their order or on caching."""

    def __init__(self, rule):
        from tests.llama_server import _Handler, _Loopback

        ruled = self
        self.requests = []

        class Handler(_Handler):
            def do_POST(self) -> None:
                raw = self.body()
                ruled.requests.append(raw)
                self.send(*rule(raw.decode("utf-8")))

        self.server = _Loopback(Handler)
        self.url = f"http://127.0.0.1:{self.server.port}/v1/chat/completions"

    def close(self) -> None:
        self.server.close()


OVERLOADED = (500, {"error": {"message": "the model is overloaded, try later", "type": "server_error"}})


def _verdict(score: float):
    from tests.llama_server import completion

    return 200, completion(json.dumps({"score": score, "reason": "as the reference says"}))


def _two_questions():
    return [Question("Can I defer loan payments after a disaster?", "no late fees", ["deferment"], "1"),
            Question("Am I liable after reporting a stolen card?", "not liable", ["card-fraud"], "2")]


def _saved(folder, report):
    from vectrixdb.evaluation import list_runs, load_run

    (row,) = list_runs(str(folder), kind="chunking").itertuples()
    return row, load_run(str(folder), row.run_id)


@pytest.mark.parametrize("failing", ["answer", "judge"])
def test_a_comparison_whose_every_answer_or_verdict_failed_has_no_best(policies, tmp_path, failing):
    from vectrixdb.chat.writer import ChatWriter
    from vectrixdb.errors import Refused

    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    server = Ruled(lambda body: OVERLOADED)
    try:
        chat = ChatWriter(server.url, model="m", max_retries=0)
        roles = {"answer": chat, "judge": chat} if failing == "answer" else {"answer": lambda q, c: c, "judge": chat}
        try:
            report = compare_chunking(docs, _two_questions(), budget=300, techniques=["fixed", "recursive"],
                                      sizes=[200], headings=[False], save_to=str(tmp_path), progress=False,
                                      config=CompareConfig(cut_with=False, context_with=False, late=False, **roles))
        except Refused as exc:  # a writer may stop the run at once when every request fails: then the run failed
            assert "overloaded" in str(exc)
            row, saved = _saved(tmp_path, None)
            assert row.status == "failed" and "overloaded" in saved.meta["error"] and saved["best"] is None
            return
    finally:
        server.close()
    assert report["best"] is None and report["decided_by"] is None and report["techniques"] == []
    assert f"all 4 answers or their verdicts failed ({failing if failing == 'answer' else 'verdict'} error: 4)" \
        in report["reason"] and "overloaded" in report["reason"]
    assert list(report.frame["scored"]) == [0, 0] and list(report.frame["unscored"]) == [2, 2]
    assert report["model"]["outcomes"] == {f"{'answer' if failing == 'answer' else 'verdict'} error": 4}
    # each failed row says where it failed; an answer that came back is kept even when its verdict did not
    assert all(r["score"] is None and not r["right"] and r["outcome"].endswith(" error") for r in report["verdicts"])
    assert all((r["answer"] is None) == (failing == "answer") for r in report["verdicts"])
    row, saved = _saved(tmp_path, report)
    assert row.status == "completed" and saved["best"] is None and "overloaded" in saved["reason"]
    assert saved.meta["run_id"] == report["run_id"] == row.run_id


def test_a_partial_model_failure_is_counted_per_build_and_shown(policies, tmp_path):
    from vectrixdb.chat.writer import ChatWriter

    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    server = Ruled(lambda body: OVERLOADED if "Am I liable after reporting" in body else _verdict(1.0))  # q2's fail
    try:
        report = compare_chunking(docs, _two_questions(), budget=300, techniques=["fixed", "recursive"], sizes=[200],
                                  headings=[False], progress=False,
                                  config=CompareConfig(answer=lambda q, c: c,
                                                       judge=ChatWriter(server.url, model="m", max_retries=0)))
    finally:
        server.close()
    assert list(report.frame["scored"]) == [1, 1] and list(report.frame["unscored"]) == [1, 1]
    assert list(report.frame["right"]) == [1, 1]  # question 1 judged right, question 2 unscored (not right)
    assert report["unscored"] == 2 and report["answers"] == 4 and report["decided_by"] == "answered right"
    assert all(t["unscored"] == 1 for t in report["techniques"])
    (warning,) = report["warnings"]
    assert warning.startswith("2 of 4 answers could not be scored (verdict error: 2)") and "overloaded" in warning
    assert "2 of 4 answers could not be scored" in repr(report)  # shown where the verdict is shown
    # both builds answered one right: the tie goes to fewer chunks, then to the plan's order (fixed first)
    chunks = dict(zip(report.frame["technique"], report.frame["chunks"]))
    assert report["best"]["name"] == ("fixed" if chunks["fixed"] <= chunks["recursive"] else "recursive")


def test_a_killed_comparison_shows_as_failed(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    code = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from vectrixdb.evaluation import CompareConfig, compare_chunking
def answer(question, context):
    print("started", flush=True)
    time.sleep(600)
compare_chunking({SAMPLE!r}, {GOLDEN!r}, budget=300, techniques=["fixed"], sizes=[300], headings=[False],
                 config=CompareConfig(answer=answer, judge=lambda *a: 1.0), save_to=sys.argv[1], progress=False)
"""
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        row, saved = _saved(tmp_path, None)
        assert row.status == "running" and saved["stage"] == "answering"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    row, saved = _saved(tmp_path, None)
    assert row.status == "failed" and "ended without finishing" in saved.meta["error"]


# same inputs, same verdict (issue 26 item 11) --------------------------------------------------

def test_sweep_ties_go_to_fewer_chunks_then_the_settings_order_never_to_timings():
    import pandas as pd

    from vectrixdb.evaluation.retrieval.sweep import rank_rows

    rows = pd.DataFrame({"chunk": ["a", "b", "c", "d", "e"], "ndcg@3": [0.5, 0.7, 0.7, 0.7 + 1e-16, 0.7],
                         "mrr@3": [0.9, 0.6, 0.6, 0.6, 0.6], "chunks": [1, 30, 20, 20, 20],
                         "median_search_ms": [0.1, 0.1, 9.0, 5.0, 0.2]})
    # c, d, e tie (d's nDCG differs only by float noise): fewer chunks than b, then the order given;
    # the fastest of them (e) gains nothing from its speed, and a has the best MRR but a lower nDCG
    assert list(rank_rows(rows, "ndcg@3", "mrr@3")["chunk"]) == ["c", "d", "e", "b", "a"]
    reversed_rows = rows.iloc[::-1].reset_index(drop=True)
    assert list(rank_rows(reversed_rows, "ndcg@3", "mrr@3")["chunk"]) == ["e", "d", "c", "b", "a"]

    docs = {"deferment": "# Deferment\n\nCustomers in disaster areas can defer loan payments with no late fees.",
            "card-fraud": "# Card fraud\n\nReport a stolen card at once; you are not liable after the report."}
    q = [Question("Can a customer postpone a loan payment after a wildfire?", None, ["deferment"], "q1")]
    for sizes in ([2000, 1000], [1000, 2000]):  # both sizes make the same single chunk per document: a tie
        report = sweep(docs, q, chunk=["recursive"], chunk_size=sizes, k=(1,), progress=False)
        assert list(report.frame["chunk_size"]) == sizes and report["best"]["chunk_size"] == sizes[0]
        assert report["ranked_by"].startswith("ndcg@1, then MRR, then fewer chunks")


def test_a_comparison_that_raises_is_saved_as_failed(policies, tmp_path):
    from vectrixdb.errors import BadInput

    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    with pytest.raises(BadInput, match="a score is a number from 0 to 1"):
        compare_chunking(docs, _two_questions(), budget=300, techniques=["fixed"], sizes=[200], headings=[False],
                         config=CompareConfig(answer=lambda q, c: c, judge=lambda *a: 2.0), save_to=str(tmp_path),
                         progress=False)
    row, saved = _saved(tmp_path, None)
    assert row.status == "failed" and saved.meta["error"].startswith("BadInput: the judge gave 2.0")
    assert saved["best"] is None and "the comparison stopped" in saved["reason"]


def test_a_model_backed_build_whose_every_call_failed_is_not_compared(policies):
    from vectrixdb.chat.writer import ChatWriter
    from vectrixdb.chunk_models import llm_cutter

    docs = {d["doc_id"]: policies.document(d["doc_id"]) for d in policies.documents()}
    server = Ruled(lambda body: OVERLOADED)
    try:
        report = compare_chunking(docs, _two_questions(), budget=300, techniques=["fixed"], sizes=[200],
                                  headings=[False], progress=False,
                                  config=CompareConfig(cut_with=llm_cutter(ChatWriter(server.url, model="m", max_retries=0)),
                                                       context_with=False, late=False))
    finally:
        server.close()
    assert [t["name"] for t in report["techniques"]] == ["fixed"]  # no "llm" build that is recursive in disguise
    (why,) = [s["why"] for s in report["skipped"] if s["name"] == "llm"]
    assert "model calls of llm/200/plain failed" in why or "overloaded" in why  # all failed, or the writer stopped
    assert len(server.requests) > 0
