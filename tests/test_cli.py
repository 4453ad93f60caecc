import json

from typer.testing import CliRunner

from vectrixdb.cli import app

runner = CliRunner()


def test_add_search_info(tmp_path):
    root = tmp_path / "cols"
    doc = tmp_path / "deferment.md"
    doc.write_text("# Deferment\n\nCustomers in disaster areas can defer loan payments.")
    done = runner.invoke(app, ["add", "pol", str(doc), "--path", str(root)])
    assert done.exit_code == 0, done.output
    assert "1 documents, 1 chunks" in done.output
    done = runner.invoke(app, ["search", "pol", "defer a loan", "--path", str(root), "--json", "-k", "1"])
    assert done.exit_code == 0, done.output
    hit = json.loads(done.output.strip().splitlines()[-1])
    assert hit["doc_id"] == "deferment.md" and hit["rank"] == 1
    done = runner.invoke(app, ["info", "pol", "--path", str(root)])
    assert json.loads(done.output)["documents"] == 1


def test_errors_exit_1_with_a_message(tmp_path):
    done = runner.invoke(app, ["add", "pol", str(tmp_path / "nope.md"), "--path", str(tmp_path)])
    assert done.exit_code == 1 and "no such file" in done.output
    done = runner.invoke(app, ["search", "pol", "x", "--mode", "fuzzy", "--path", str(tmp_path)])
    assert done.exit_code == 1 and "unknown search mode" in done.output
