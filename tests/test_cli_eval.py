"""`vectrixdb report` and `evaluate` as a CI gate, and `vectrixdb runs`."""
import json

from typer.testing import CliRunner

from vectrixdb.cli.commands import app
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
    failed = run("report", "test", "--golden", golden, "--fail-under", "precision@3=0.9", "--fail-under", "mrr=0",
                 *where)
    assert failed.exit_code == 1 and "precision@3 = 0.3333 is under 0.9" in failed.output and "mrr" not in \
        failed.output.split("fail:")[-1]


def test_a_bad_gate_or_output_choice_is_refused_before_anything_runs(policies, tmp_path):
    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    where = ["--path", policies.folder.parent]
    for bad, said in ((["--fail-under", "recall@7=0.5", "-k", 1], "'recall@7' is not measured: the cut-offs are -k 1"),
                      (["--fail-under", "recall@3=1.1", "-k", 3], "every figure lies in [0, 1]"),
                      (["--fail-under", "recal@3=0.5", "-k", 3], "'recal@3' is not a figure of the report"),
                      (["--fail-under", "mrr@3=0.5", "-k", 3], "mrr takes no @K"),
                      (["--fail-under", "foo"], "takes NAME=NUMBER"),
                      (["--json", "--csv"], "give one")):
        done = run("report", "test", "--golden", golden, *bad, *where)
        assert done.exit_code == 2 and said in done.output and "questions by" not in done.output, (bad, done.output)


def test_rows_without_a_relevant_label_are_counted_and_a_chunk_grain_without_chunk_ids_warns(policies, tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"question": "Can I defer loan payments?", "expected": ["deferment"]}\n'
                     '{"question": "Where is the branch?", "expected": {"mortgage": 0}}\n')
    where = ["--path", policies.folder.parent]
    done = run("report", "test", "--golden", mixed, "-k", 1, *where)
    assert done.exit_code == 0 and "1 question by doc (from the labels) (1 unlabelled)" in done.output, done.output
    by_chunk = run("report", "test", "--golden", mixed, "-k", 1, "--by", "chunk", *where)
    assert "by='chunk' but no row names a chunk id" in by_chunk.output and "miss " in by_chunk.output
    assert "expected deferment; got test" not in by_chunk.output and "deferment::" in by_chunk.output.split("miss ")[1]
    folder = run("golden", "check", tmp_path)
    assert folder.exit_code == 2 and f"{tmp_path}: is a folder, not a file" in folder.output  # BadInput
    assert "Traceback" not in folder.output


def test_evaluate_gates_on_the_best_setup(policies, tmp_path):
    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    done = run("evaluate", "test", "--golden", golden, "-k", 3, "--fail-under", "ndcg@3=1.5", "--path",
               policies.folder.parent)
    assert done.exit_code == 2 and "every figure lies in [0, 1]" in done.output  # a bad gate: BadInput
    done = run("evaluate", "test", "--golden", golden, "-k", 3, "--fail-under", "precision@3=0.9", "--path",
               policies.folder.parent)
    assert done.exit_code == 1 and "gate on the best setup" in done.output and "precision@3 = 0.3333" in done.output
    assert "best: mode=" in done.output and "fastest_close: mode=" in done.output and "best_per_ms: mode=" in done.output


def test_runs_list_show_and_compare(tmp_path):
    a = run_evaluation(lambda q: ["deferment"], QS, save_to=str(tmp_path), name="one doc")
    b = run_evaluation(lambda q: ["deferment", "card-fraud", "mortgage"], QS, save_to=str(tmp_path), name="three")
    listed = run("runs", "list", tmp_path)
    assert listed.exit_code == 0 and "one doc" in listed.output and "completed" in listed.output
    shown = run("runs", "show", a["run_id"], "--folder", tmp_path)
    assert shown.exit_code == 0 and "status: completed" in shown.output
    assert "[low, high]" not in shown.output  # no intervals, no legend
    compared = run("runs", "compare", a["run_id"], b["run_id"], "--folder", tmp_path)
    assert compared.exit_code == 0 and "doc_recall" in compared.output
    missing = run("runs", "show", "nope", "--folder", tmp_path)
    assert missing.exit_code == 3 and "no run 'nope'" in missing.output  # NotFound
    for wrong, said in ((tmp_path / "nosuch", "no such folder"), (tmp_path / "f.txt", "is a file, not a folder")):
        (tmp_path / "f.txt").write_text("x")
        listed = run("runs", "list", wrong)
        assert listed.exit_code == 3 and said in listed.output


def test_report_says_its_search_mode_and_saved_runs_carry_their_name(policies, tmp_path):
    from vectrixdb.evaluation import list_runs

    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    where = ["--path", policies.folder.parent]
    done = run("report", "test", "--golden", golden, "--mode", "keyword", "--save-to", tmp_path / "runs",
               "--name", "keyword baseline", *where)
    assert done.exit_code == 0, done.output
    assert "searched with mode=keyword" in done.output
    done = run("evaluate", "test", "--golden", golden, "-k", 3, "--save-to", tmp_path / "runs", "--name", "all setups",
               *where)
    assert done.exit_code == 0, done.output
    listed = list_runs(str(tmp_path / "runs")).set_index("name")
    assert listed.loc["keyword baseline", "kind"] == "retrieval" and listed.loc["all setups", "kind"] == "evaluate"
    best = listed.loc["all setups", "best"]  # the best setup in words, not JSON with None in it
    assert "None" not in best and "ndcg@3" in best and best.split(" · ")[0] in ("dense", "keyword", "hybrid")
    shown = run("runs", "show", listed.loc["keyword baseline", "run_id"], "--folder", tmp_path / "runs")
    assert shown.exit_code == 0 and "ci={confidence: 0.9500" in shown.output.splitlines()[0], shown.output
    assert shown.output.splitlines()[1].startswith("ci [low, high]: 95% interval over questions: Wilson")  # under it
    refused = run("report", "test", "--golden", golden, "--name", "unsaved", *where)
    assert refused.exit_code == 2 and "--save-to" in refused.output


def test_runs_compare_prints_its_rule(tmp_path):
    a = run_evaluation(lambda q: ["deferment"], QS, save_to=str(tmp_path))
    b = run_evaluation(lambda q: ["deferment", "card-fraud", "mortgage"], QS, save_to=str(tmp_path))
    compared = run("runs", "compare", a["run_id"], b["run_id"], "--folder", tmp_path)
    assert compared.exit_code == 0 and "Holm-Bonferroni" in compared.output and "could be luck" in compared.output


def test_evaluate_prints_an_aligned_table_with_mode_k_and_intervals_and_json_keeps_its_shape(policies, tmp_path):
    golden = save_questions(QS, str(tmp_path / "g.jsonl"))
    where = ["--path", policies.folder.parent]
    done = run("evaluate", "test", "--golden", golden, "-k", 1, "-k", 3, *where)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith("3 search setups on 3 questions by doc; k = 1, 3;") and "95% interval over questions" in lines[0]
    header = lines[1]
    assert header.split()[:3] == ["mode", "vectors", "rerank"] and "ndcg@3 [95% CI]" in header and "p95 ms" in header
    rows = lines[2:5]
    assert sorted(r.split()[0] for r in rows) == ["dense", "hybrid", "keyword"]
    for row in rows:  # every column ends where its header ends (numbers right-aligned), so the table reads down
        assert len(row) == len(header)
        for name in ("ndcg@3 [95% CI]", "recall@1", "median ms"):
            end = header.index(name) + len(name)
            assert row[end - 1] != " " and row[end] == " ", (name, row)
        assert row.count("[") == 3  # ndcg, mrr and recall each with its interval
    as_json = json.loads(run("evaluate", "test", "--golden", golden, "-k", 1, "-k", 3, "--json", *where).output)
    from vectrixdb.evaluation import evaluate
    from vectrixdb.collection import Vectrix

    direct = json.loads(evaluate(Vectrix("test", path=policies.folder.parent), golden, k=(1, 3), progress=False).to_json())
    assert set(as_json) == set(direct) and set(as_json["values"]) == set(direct["values"])
    assert as_json["tables"].keys() == direct["tables"].keys()


def test_runs_list_prints_one_line_per_run_and_json_for_scripts(tmp_path):
    from vectrixdb.evaluation import list_runs

    run_evaluation(lambda q: ["deferment"], QS, save_to=str(tmp_path), name="one doc")
    run_evaluation(lambda q: ["deferment", "card-fraud"], QS, save_to=str(tmp_path))
    listed = run("runs", "list", tmp_path)
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    frame = list_runs(str(tmp_path))
    assert len(lines) == 1 + len(frame) == 3
    assert lines[0].split() == ["name", "kind", "status", "headline", "started", "(UTC)", "run", "id"]
    for line, (_, row) in zip(lines[1:], frame.iterrows()):
        assert line.endswith(row["run_id"]) and "evaluation (Retrieval)" in line and "completed" in line
        assert f"doc_f1@10 {row['doc_f1@10']:.3f}" in line and row["started"].replace("T", " ").rstrip("Z") in line
        named = isinstance(row["name"], str) and row["name"]
        assert line.startswith(f"{row['name']} " if named else "— ")  # an unnamed run: a dash
    assert sorted(line.split()[0] for line in lines[1:]) == ["one", "—"]  # in list_runs' order (newest first)
    assert len({line.index("completed") for line in lines[1:]}) == 1  # aligned
    records = json.loads(run("runs", "list", tmp_path, "--json").output)
    assert [r["run_id"] for r in records] == list(frame["run_id"]) and "one doc" in [r["name"] for r in records]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("runs", "list", empty).output.strip() == f"no runs under {empty}"
    assert json.loads(run("runs", "list", empty, "--json").output) == []
