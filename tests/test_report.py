"""The report contract: every kind registered once, saved and loaded back equal, plottable after."""
import json
from dataclasses import replace

import matplotlib
import pandas as pd
import pytest

from tests.conftest import ROOT
from vectrixdb import registry
from vectrixdb.evaluation import (Question, answer_cutoff, answer_report, audit_golden, calibrate, compare_chunking,
                                  compare_runs, evaluate, list_runs, load_run, ppi_mean, questions_needed,
                                  retrieval_report, run_evaluation, sweep)
from vectrixdb.evaluation.runs.report import KINDS, Kind, Report, register

# the package's own kinds: an outside kind installed beside the tests (by an entry point or VECTRIXDB_KINDS) is not pinned
BUILT_IN = {name for name in KINDS if registry.origin("report_kinds", name).startswith("vectrixdb.")}

matplotlib.use("Agg")
SAMPLE = [str(p) for p in sorted((ROOT / "data" / "sample").glob("*.md"))][:2]
OUTSIDE = ["How do zebras sleep?", "Who won the 1966 football world cup?", "What is the boiling point of ethanol?",
           "How many moons does Jupiter have?", "Best recipe for sourdough bread"]
QUESTIONS = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
             Question("Are there late fees when payments are deferred?", None, ["deferment"], "2"),
             Question("Is there fast access to funds for displaced customers?", None, ["emergency-fund"], "3"),
             Question("Are fees waived for people displaced by a disaster?", None, ["emergency-fund"]),
             Question("Am I liable for charges after reporting a stolen card?", None, ["card-fraud"], "5"),
             Question("How much can I overpay on my mortgage without penalty?", None, ["mortgage"], "7")]


def assert_same(loaded: Report, saved: Report):
    assert loaded.kind == saved.kind and dict(loaded) == dict(saved)
    if saved.frame is None:
        assert loaded.frame is None
    else:
        pd.testing.assert_frame_equal(loaded.frame, saved.frame, check_dtype=False, check_index_type=False)
    assert set(loaded.tables) == set(saved.tables)
    for name, table in saved.tables.items():
        pd.testing.assert_frame_equal(loaded.tables[name], table, check_dtype=False, check_index_type=False)
    for key in ("schema_version", "vectrixdb", "status", "started", "finished", "duration_s", "questions", "run_id"):
        assert loaded.meta[key] == saved.meta[key], key
    assert loaded.meta["status"] == "completed" and loaded.meta["duration_s"] >= 0


def test_every_kind_round_trips_through_save_and_load(tmp_path, policies):
    reports = [retrieval_report(policies, QUESTIONS, k=(1, 3)),
               evaluate(policies, QUESTIONS, k=(1, 3), progress=False),
               answer_cutoff(policies, QUESTIONS, OUTSIDE, n_resamples=200)]
    golden = [Question("How long can a deferment last?", None, ["deferment.md"], "d")]
    reports.append(sweep(SAMPLE, golden, chunk=["recursive", "fixed"], chunk_size=[400], progress=False))
    reports.append(compare_chunking(SAMPLE, golden, budget=300, techniques=["recursive", "fixed"], sizes=[300],
                                    headings=[False], progress=False))
    judge = lambda metric, question, reference, answer, sources: 0.5 if "fee" in answer else 1.0  # noqa: E731
    answers = {q.key(): {"answer": f"answer about {q.question}", "sources": []} for q in QUESTIONS}
    # these questions have no reference answer, so a metric that reads none (correctness would be refused)
    reports.append(answer_report(QUESTIONS, answers, judge, metrics=["helpfulness"]))
    reports.append(calibrate(judge, [{"metric": "accuracy", "question": q.question, "answer": q.question,
                                      "reference": "the policy's answer", "human": i % 2}
                                     for i, q in enumerate(QUESTIONS)]))
    a = run_evaluation(lambda q: ([h.to_dict() for h in policies.search(q, 2)], "no fees"), QUESTIONS, judge=judge)
    b = run_evaluation(lambda q: ([h.to_dict() for h in policies.search(q, 1)], "yes"), QUESTIONS, judge=judge)
    reports += [a, compare_runs(a, b), audit_golden(QUESTIONS, policies)]
    reports += [questions_needed(a, b), ppi_mean(reports[5].frame["helpfulness"], {QUESTIONS[0].key(): 1.0,
                                                                                   QUESTIONS[1].key(): 0.0})]
    from vectrixdb.evaluation.retrieval.pooling import pool

    reports.append(pool({"dense": reports[0], "keyword": lambda q: policies.search(q, 3, mode="keyword")}, QUESTIONS,
                        depth=3))
    from vectrixdb.evaluation import compare_embedders

    reports.append(compare_embedders(policies, QUESTIONS, ["all-MiniLM-L6-v2@fp32"], k=(1, 3)))
    assert {r.kind for r in reports} == BUILT_IN  # the package's own kinds (an outside one installed beside is not pinned)
    for report in reports:
        run_id = report.save(str(tmp_path))
        loaded = load_run(str(tmp_path), run_id)
        assert_same(loaded, report)
        assert loaded.plot().axes
        data = json.loads(report.to_json())
        assert data["kind"] == report.kind and data["run_id"] == run_id
    assert 1 in load_run(str(tmp_path), reports[0]["run_id"])["recall"]  # integer k keys come back as integers
    assert list(load_run(str(tmp_path), reports[2]["run_id"]).candidates.columns)[:2] == ["cutoff", "right_when_answers"]
    runs = list_runs(str(tmp_path))
    assert len(runs) == len(BUILT_IN) and set(runs["kind"]) == BUILT_IN and set(runs["status"]) == {"completed"}
    assert list(list_runs(str(tmp_path), "chunking")["kind"]) == ["chunking"]
    same = {r.meta["questions_sha256"] for r in reports if r.kind not in ("calibration", "experiment", "sweep",
                                                                         "chunking", "power", "ppi")}
    assert len(same) == 1  # every report over QUESTIONS names the same question set
    assert reports[0].meta["collection"] == policies.name and reports[0].meta["embedding_model"] == {
        "default": policies.spaces["default"]["model"]}


def test_a_report_records_the_golden_file_its_hash_and_the_collection(tmp_path, policies):
    import hashlib

    from vectrixdb.evaluation import save_questions

    golden = save_questions(QUESTIONS, str(tmp_path / "golden.jsonl"))
    report = retrieval_report(policies, golden, k=3)
    in_memory = retrieval_report(policies, QUESTIONS, k=3)
    meta = load_run(str(tmp_path), report.save(str(tmp_path))).meta
    assert meta["golden"] == str((tmp_path / "golden.jsonl").resolve())
    assert meta["golden_sha256"] == hashlib.sha256((tmp_path / "golden.jsonl").read_bytes()).hexdigest()
    assert meta["questions_sha256"] == in_memory.meta["questions_sha256"] and "golden" not in in_memory.meta
    assert meta["collection"] == "test" and meta["collection_generation"] == policies.info()["generation"]
    policies.add_document("Branches open at nine on weekdays.", doc_id="hours")
    assert retrieval_report(policies, golden, k=3).meta["collection_generation"] > meta["collection_generation"]
    from vectrixdb.present.views import manifest

    rows = dict(manifest(load_run(str(tmp_path), report["run_id"])))
    assert rows["golden file SHA-256"] == meta["golden_sha256"] and rows["collection"] == "test"
    assert rows["embedding model"] != "not recorded by this run"


def test_a_kind_is_registered_once_and_saving_never_overwrites(tmp_path):
    with pytest.raises(ValueError, match="registered twice"):
        register(Kind("retrieval", "retrieval", None))
    report = retrieval_report(lambda q: ["a"], [Question("q?", None, ["a"], "q")], k=1)
    first, second = report.save(str(tmp_path)), report.save(str(tmp_path))
    assert first != second and len(list_runs(str(tmp_path))) == 2
    with pytest.raises(FileNotFoundError):
        load_run(str(tmp_path), "../../etc")


def test_a_runs_model_statuses_are_its_own_when_one_writer_judges_several_runs():
    """One ChatWriter (a real HTTP server on loopback answering) judges two runs: each run's
    model figures - asks and statuses alike - are what that run asked, not the writer's totals."""
    from tests.llama_server import Scripted, completion
    from vectrixdb.chat.writer import ChatWriter

    server = Scripted()
    try:
        qs = [replace(q, reference="an answer") for q in QUESTIONS[:3]]  # accuracy reads a reference
        server.script.extend((200, completion(json.dumps({"score": 1, "reason": "fine"})), {}) for _ in range(4 * len(qs)))
        writer = ChatWriter(server.url, model="m", max_retries=0)
        first = run_evaluation(lambda q: "an answer", qs, judge=writer)
        second = run_evaluation(lambda q: "another answer", qs, judge=writer)
    finally:
        server.close()
    asks = 2 * len(qs)  # accuracy and groundedness for each question
    for report in (first, second):
        assert report["model"]["asks"] == asks and report["model"]["statuses"] == {"ok": asks}, report["model"]
    assert writer.totals()["statuses"] == {"ok": 2 * asks}


def test_a_run_saved_before_set_columns_carried_k_loads_and_shows_with_them(tmp_path):
    """Set figures name their k in the frame (`page_f1@10`); a report.json (or a running run's
    progress log) written with the old names (`page_f1`) loads under today's, read at the run's k."""
    from vectrixdb.evaluation.runs import progress
    from vectrixdb.present.views import question_detail

    report = run_evaluation(lambda q: ["deferment", "mortgage"], QUESTIONS, k=5, save_to=str(tmp_path))
    assert {"doc_precision@5", "doc_recall@5", "doc_f1@5", "page_f1@5"} <= set(report.frame.columns)
    path = next(tmp_path.glob("evaluations/runs/*/report.json"))
    data = json.loads(path.read_text())
    for field in data["tables"]["frame"]["schema"]["fields"]:
        field["name"] = field["name"].split("@")[0] if field["name"].startswith("doc_") else field["name"]
    for row in data["tables"]["frame"]["data"]:
        for column in [c for c in row if c.startswith("doc_")]:
            row[column.split("@")[0]] = row.pop(column)
    assert "doc_f1" in json.dumps(data) and "doc_f1@5" not in json.dumps(data)
    path.write_text(json.dumps(data))
    old = load_run(str(tmp_path), report["run_id"])
    assert "doc_f1" not in old.frame.columns
    pd.testing.assert_series_equal(old.frame["doc_f1@5"], report.frame["doc_f1@5"], check_index_type=False)
    assert question_detail(old, "1")["levels"][-1]["prf"] == question_detail(report, "1")["levels"][-1]["prf"]
    assert question_detail(old, "1")["levels"][-1]["prf"] == ["0.500", "1.000", "0.667"]  # deferment of 2 returned
    # a run still running whose progress log has the old names: its levels are rebuilt from them
    data["status"], data["values"]["levels"] = "running", None
    path.write_text(json.dumps(data))
    for row in data["tables"]["frame"]["data"]:
        progress.append(str(path), 1, {"row": {"id": row["index"] if "index" in row else row["id"], **{
            c: v for c, v in row.items() if c not in ("index", "id")}}, "judged": None})
    running = load_run(str(tmp_path), report["run_id"])
    assert running["levels"]["doc"] == pytest.approx(report["levels"]["doc"])
    assert "doc_f1@5" in running.frame.columns and "doc_f1" not in running.frame.columns
