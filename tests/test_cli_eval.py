"""`vectrixdb report` and `evaluate` as a CI gate, and `vectrixdb runs`."""
import json

from typer.testing import CliRunner

from vectrixdb.cli import app
from vectrixdb.evaluation import Question, run_evaluation, save_questions

QS = [Question("Can I defer loan payments after a disaster?", None, ["deferment"], "1"),
      Question("Am I liable after reporting a stolen card?", None, ["card-fraud"], "2"),
      Question("How much can I overpay on my mortgage without penalty?", None, ["mortgage"], "3")]


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_report_prints_figures_and_gates(policies, tmp_path):
    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    where = ["--path", policies.folder.parent]
    done = run("report", "test", "--golden", golden, "-k", 1, "-k", 3, *where)
    assert done.exit_code == 0, done.output
    assert "3 questions by doc" in done.output and "mrr@100" in done.output
    data = json.loads(run("report", "test", "--golden", golden, "--json", *where).output)
    assert data["kind"] == "retrieval" and data["values"]["questions"] == 3
    assert run("report", "test", "--golden", golden, "--csv", *where).output.startswith("id,")
    passed = run("report", "test", "--golden", golden, "--fail-under", "recall@3=0.5", *where)
    assert passed.exit_code == 0, passed.output
    failed = run("report", "test", "--golden", golden, "--fail-under", "recall@3=1.01", "--fail-under", "mrr=0", *where)
    assert failed.exit_code == 1 and "recall@3 = 1.0000 is under 1.01" in failed.output and "mrr" not in \
        failed.output.split("fail:")[-1]
    unknown = run("report", "test", "--golden", golden, "--fail-under", "recall@7=0.5", "-k", 1, *where)
    assert unknown.exit_code == 1 and "no 'recall@7'" in unknown.output


def test_evaluate_gates_on_the_best_setup(policies, tmp_path):
    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    done = run("evaluate", "test", "--golden", golden, "-k", 3, "--fail-under", "ndcg@3=1.5", "--path",
               policies.folder.parent)
    assert done.exit_code == 1 and "gate on the best setup" in done.output and "ndcg@3" in done.output


def test_runs_list_show_and_compare(tmp_path):
    a = run_evaluation(lambda q: ["deferment"], QS, save_to=str(tmp_path), name="one doc")
    b = run_evaluation(lambda q: ["deferment", "card-fraud", "mortgage"], QS, save_to=str(tmp_path), name="three")
    listed = run("runs", "list", tmp_path)
    assert listed.exit_code == 0 and "one doc" in listed.output and "completed" in listed.output
    shown = run("runs", "show", a["run_id"], "--folder", tmp_path)
    assert shown.exit_code == 0 and "status: completed" in shown.output
    compared = run("runs", "compare", a["run_id"], b["run_id"], "--folder", tmp_path)
    assert compared.exit_code == 0 and "doc_recall" in compared.output
    missing = run("runs", "show", "nope", "--folder", tmp_path)
    assert missing.exit_code == 1 and "no run 'nope'" in missing.output
