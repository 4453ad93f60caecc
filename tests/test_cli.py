import json
import os

import pytest
from typer.testing import CliRunner

from vectrixdb.cli.commands import app

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


def test_errors_exit_with_their_kinds_status_and_a_message(tmp_path):
    done = runner.invoke(app, ["add", "pol", str(tmp_path / "nope.md"), "--path", str(tmp_path)])
    assert done.exit_code == 3 and "no such file" in done.output  # NotFound (cli.EXIT_CODES)
    assert not (tmp_path / "pol").exists()  # a refused first add creates nothing
    doc = tmp_path / "a.md"
    doc.write_text("Some text.")
    assert runner.invoke(app, ["add", "pol", str(doc), "--path", str(tmp_path)]).exit_code == 0
    done = runner.invoke(app, ["search", "pol", "x", "--mode", "fuzzy", "--path", str(tmp_path)])
    assert done.exit_code == 2 and "unknown search mode" in done.output  # BadInput


def test_add_takes_every_argument_as_a_file(tmp_path):
    (tmp_path / "sample").mkdir()
    for arg, words, code in (("notes", "notes: no such file", 3), (str(tmp_path / "sample"), "is a folder", 2),
                             ("report.docx", "report.docx: no such file", 3)):
        done = runner.invoke(app, ["add", "pol", arg, "--path", str(tmp_path / "cols")])
        assert done.exit_code == code and words in done.output and done.exception is not None
        assert done.output.count("\n") == 1 and done.output.startswith("error: ")
    assert not (tmp_path / "cols" / "pol").exists()


def test_reads_on_a_missing_collection_create_nothing(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("Some text.")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"question": "what?", "expected": ["a.md"]}) + "\n")
    root = tmp_path / "cols"
    assert runner.invoke(app, ["add", "real", str(doc), "--path", str(root)]).exit_code == 0
    commands = [["search", "ghost", "text"], ["info", "ghost"], ["golden", "cutoff", "ghost", "--golden", str(golden)],
                ["golden", "check", str(golden), "--collection", "ghost"],
                ["golden", "label", "ghost", "--questions", str(golden), "--out", str(tmp_path / "out.jsonl")]]
    for command in commands:
        done = runner.invoke(app, [*command, "--path", str(root)])
        assert done.exit_code == 3, (command, done.output)  # NotFound
        assert f"error: no collection 'ghost' under {root}; existing: real" in done.output, command
    assert sorted(os.listdir(root)) == ["real"] and not (tmp_path / "out.jsonl").exists()


def test_a_corrupt_catalog_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "pol").mkdir()  # garbage where a catalog should be (no connection to it in this process)
    (tmp_path / "pol" / "catalog.sqlite").write_bytes(b"garbage " * 1000)
    done = runner.invoke(app, ["info", "pol", "--path", str(tmp_path)])
    assert done.exit_code == 5 and "catalog.sqlite" in done.output and "delete the folder" in done.output  # Corrupt
    assert "Traceback" not in done.output and done.output.count("\n") == 1


def test_a_bug_keeps_its_traceback(tmp_path, monkeypatch):
    import vectrixdb.collection

    def broken(self, *a, **kw):
        raise ValueError("a ValueError from outside vectrixdb's code is a bug")

    doc = tmp_path / "a.md"
    doc.write_text("Some text.")
    assert runner.invoke(app, ["add", "pol", str(doc), "--path", str(tmp_path)]).exit_code == 0
    monkeypatch.setattr(vectrixdb.collection.Vectrix, "info", broken)
    done = runner.invoke(app, ["info", "pol", "--path", str(tmp_path)])
    assert isinstance(done.exception, ValueError) and "error:" not in done.output
    monkeypatch.setattr(vectrixdb.collection.Vectrix, "info", lambda self: 1 / 0)
    done = runner.invoke(app, ["info", "pol", "--path", str(tmp_path)])
    assert isinstance(done.exception, ZeroDivisionError)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    from vectrixdb import Vectrix

    root = tmp_path_factory.mktemp("guarded")
    db = Vectrix("pol", path=root)
    db.add_documents([
        {"source": "Board minutes: the merger with Northwind closes in March.", "doc_id": "board",
         "access": {"group": ["board"]}},
        {"source": "Staff handbook: holidays and sick leave.", "doc_id": "handbook", "access": {"group": ["staff"]}},
        {"source": "Public notice: branch hours change in March.", "doc_id": "notice"},
    ], progress=False)
    return root


def test_as_a_principal(guarded, tmp_path):
    def ids(*extra):
        done = runner.invoke(app, ["search", "pol", "merger in March", "--json", "-k", "5", "--path", str(guarded),
                                   "--mode", "hybrid", *extra])
        assert done.exit_code == 0, done.output
        return sorted(json.loads(line)["doc_id"] for line in done.output.strip().splitlines())

    assert ids() == ["board", "handbook", "notice"]
    assert ids("--as", "group=staff") == ["handbook", "notice"]
    assert ids("--as", "group=staff", "--as", "group=board") == ["board", "handbook", "notice"]
    assert ids("--as", "region=eu") == ["notice"]
    done = runner.invoke(app, ["info", "pol", "--as", "group=staff", "--path", str(guarded)])
    assert done.exit_code == 0 and json.loads(done.output)["documents"] == 2
    done = runner.invoke(app, ["search", "pol", "merger", "--as", "staff", "--path", str(guarded)])
    assert done.exit_code == 2 and "attribute=value" in done.output
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"question": "When does the merger close?", "expected": ["board"]}) + "\n")
    owner = runner.invoke(app, ["golden", "check", str(golden), "--collection", "pol", "--path", str(guarded)])
    staff = runner.invoke(app, ["golden", "check", str(golden), "--collection", "pol", "--as", "group=staff",
                                "--path", str(guarded)])
    assert "'board' is not in collection" not in owner.output
    assert "'board' is not in collection" in staff.output  # as though it were not there
    assert ": 1 row: 0 ready, 1 with errors (1 of them scorable rows naming a document or page the collection does " \
           "not hold), 0 not scored; 1 error(s), 0 note(s)" in staff.output
    done = runner.invoke(app, ["golden", "check", str(golden), "--as", "group=staff"])
    assert done.exit_code == 2 and "--as needs --collection" in done.output


def test_a_command_group_added_later_runs_inside_the_same_handler():
    import typer

    from vectrixdb.cli.commands import _Commands
    from vectrixdb.errors import NotFound

    root, extra = typer.Typer(cls=_Commands), typer.Typer()

    @root.callback()
    def main() -> None:
        """root"""

    @extra.command()
    def missing() -> None:
        raise NotFound("no such thing\n  second   line\n")

    @extra.command()
    def other() -> None:
        """a second command keeps `extra` a group"""

    root.add_typer(extra, name="extra")
    done = runner.invoke(root, ["extra", "missing"])
    assert done.exit_code == 3 and done.output == "error: no such thing\nsecond line\n"  # a line each, spaces folded


def test_version_help_and_json_everywhere(tmp_path, policies):
    import json as _json

    from vectrixdb.version import __version__
    from vectrixdb.evaluation import Question, save_questions

    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).output.strip() == f"vectrixdb {__version__}"
    assert "Usage" in runner.invoke(app, ["-h"]).output and "Usage" in runner.invoke(app, ["golden", "-h"]).output
    golden = save_questions([Question("Can I defer a loan payment?", None, ["deferment"], "1"),
                             Question("stolen card", None, ["card-fraud"], "2")], str(tmp_path / "g.jsonl"))
    checked = _json.loads(runner.invoke(app, ["golden", "check", golden, "--json"]).output)
    assert checked["ok"] and checked["ready"] == 2
    cut = runner.invoke(app, ["golden", "cutoff", "test", "--golden", golden, "--json", "--by", "doc",
                              "--path", str(policies.folder.parent)])
    assert cut.exit_code == 0 and _json.loads(cut.output)["values"]["by"] == "doc"


def test_sweep_heading_flags_and_compare_chunking_lists_every_build(tmp_path):
    import json as _json

    docs = tmp_path / "d.md"
    docs.write_text("# Deferment\n\nCustomers in disaster areas can defer loan payments with no late fees.\n")
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "1", "question": "Can I defer a loan payment?", "expected": ["d.md"]}\n')
    runner = CliRunner()
    for flag, expect in (("--heading", [True]), ("--no-heading", [False])):
        done = runner.invoke(app, ["sweep", str(docs), "--golden", str(golden), "--size", "200", flag, "--json"])
        assert done.exit_code == 0, done.output
        assert [r["embed_heading"] for r in _json.loads(done.stdout)["tables"]["frame"]["data"]] == expect
    both = runner.invoke(app, ["sweep", str(docs), "--golden", str(golden), "--size", "200", "--json"])
    assert sorted(r["embed_heading"] for r in _json.loads(both.stdout)["tables"]["frame"]["data"]) == [False, True]
    wrong_grain = runner.invoke(app, ["sweep", str(docs), "--golden", str(golden), "--size", "200", "--no-heading",
                                      "--by", "chunk"])
    assert wrong_grain.exit_code == 0 and "warning: by='chunk' but no row names a chunk id" in wrong_grain.output
    assert "warning: no build found any expected label at any k (by='chunk')" in wrong_grain.output
    compared = runner.invoke(app, ["compare-chunking", str(docs), "--golden", str(golden), "--technique", "fixed",
                                   "--technique", "recursive", "--size", "200", "--budget", "1500"])
    assert compared.exit_code == 0, compared.output
    lines = compared.output.splitlines()
    assert sum(line.startswith(("fixed ", "recursive ")) for line in lines) == 4  # every build row
    last_build = max(n for n, line in enumerate(lines) if line.startswith(("fixed ", "recursive ")))
    assert lines[last_build + 1] == ("found: questions whose evidence quotes (without evidence: an expected page or "
                                     "document) are in the 1,500 characters handed over, best hits first")  # the run's
    assert any("tied with the best" in line for line in lines) and "embedded now" in compared.output
    assert "not built: llm (" in compared.output and "model-backed builds: 0" not in compared.output


def test_a_failed_first_add_leaves_no_collection(tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not a PDF body at all\n")
    done = runner.invoke(app, ["add", "pol", str(bad), "--path", str(tmp_path / "cols")])
    assert done.exit_code == 2 and done.output.startswith("error: "), done.output  # an unreadable PDF: BadInput
    assert not (tmp_path / "cols" / "pol").exists()
    good = tmp_path / "a.md"
    good.write_text("Some text about deferment.")
    assert runner.invoke(app, ["add", "pol", str(good), "--path", str(tmp_path / "cols")]).exit_code == 0
    again = runner.invoke(app, ["add", "pol", str(bad), "--path", str(tmp_path / "cols")])
    assert again.exit_code == 2 and (tmp_path / "cols" / "pol").exists()  # an existing collection stays as it was
    done = runner.invoke(app, ["info", "pol", "--path", str(tmp_path / "cols")])
    assert json.loads(done.output)["documents"] == 1


def test_add_document_takes_progress(tmp_path):
    from vectrixdb import Vectrix

    db = Vectrix("quiet", path=tmp_path)
    assert db.add_document("Loans can be deferred after a disaster.", doc_id="d", progress=False) == "d"
    assert db.add_document("Cards can be frozen.", doc_id="e", progress=True) == "e"
    assert db.info()["documents"] == 2


def test_compare_chunking_saves_its_run_under_its_name(tmp_path):
    from vectrixdb.evaluation import list_runs

    doc = tmp_path / "policy.md"
    doc.write_text("# Deferment\n\nCustomers in disaster areas can defer loan payments for 90 days.\n\n"
                   "# Cards\n\nA stolen card must be reported within two days.\n")
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"question": "How long can payments be deferred?", "expected": ["policy.md"],
                                  "evidence": ["defer loan payments for 90 days"]}) + "\n")
    done = runner.invoke(app, ["compare-chunking", str(doc), "--golden", str(golden), "--budget", "200",
                               "--technique", "recursive", "--technique", "fixed", "--size", "100",
                               "--save-to", str(tmp_path / "runs"), "--name", "two techniques"])
    assert done.exit_code == 0, done.output
    (row,) = list_runs(str(tmp_path / "runs")).itertuples()
    assert row.name == "two techniques" and row.status == "completed" and "found)" in row.best


def test_golden_check_counts_add_up_and_notes_stand_on_their_own_line(tmp_path):
    rows = ['{"question": "", "expected": []}',                                                # 1 template: not scored
            '{"id": "1", "question": "Can I defer?", "expected": ["deferment"], "draft": true}',  # 2 ready, a draft
            '{"id": "2", "question": "Stolen card?", "expected": ["card-fraud"]}',                # 3 ready
            '{"id": "3", "question": "Misspelt?", "expeted": ["x"]}',                             # 4 two errors
            '{"id": "2", "question": "Used twice?", "expected": ["mortgage"]}',                   # 5 labelled, id used twice
            '{not json',                                                                          # 6 error
            '{"question": "Branch?", "expected": {"mortgage": 0}}']                               # 7 no grade above 0
    golden = tmp_path / "g.jsonl"
    golden.write_text("\n".join(rows) + "\n")
    done = runner.invoke(app, ["golden", "check", str(golden)])
    lines = done.output.splitlines()
    assert done.exit_code == 1 and lines[0] == (f"{golden}: 7 rows: 2 ready (1 still a draft), 3 with errors, 2 not "
                                                "scored; 4 error(s), 3 note(s)"), done.output
    assert lines[-1] == "fix the errors before a run"  # advice on a line of its own, not after the counts
    assert len(lines) == 9 and all(line.startswith(("  error: line ", "  note: line ")) for line in lines[1:-1])
    counts = json.loads(runner.invoke(app, ["golden", "check", str(golden), "--json"]).output)["counts"]
    assert counts == {"rows": 7, "ready": 2, "drafts": 1, "with_errors": 3, "not_scored": 2}
    ragas = runner.invoke(app, ["golden", "check", "data/anchors/ragas_testset.jsonl"])  # errors for want of --collection
    assert ragas.output.splitlines()[0].endswith(": 3 rows: 1 ready, 2 with errors, 0 not scored; 2 error(s), 0 note(s)")
    assert ragas.output.splitlines()[-1] == "fix the errors before a run"
    fine = runner.invoke(app, ["golden", "check", "data/golden/sample.jsonl"])
    assert fine.exit_code == 0 and fine.output == ("data/golden/sample.jsonl: 6 rows: 6 ready, 0 with errors, 0 not "
                                                   "scored; 0 error(s), 0 note(s)\n")


def test_a_file_pattern_is_expanded_and_one_that_matches_nothing_says_so(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nCustomers in disaster areas can defer loan payments.")
    (docs / "b.md").write_text("# B\n\nA stolen card is blocked the day it is reported.")
    root = tmp_path / "cols"
    for command in (["add", "pol", str(docs / "*.pdf"), "--path", str(root)],
                    ["golden", "check", str(tmp_path / "*.jsonl")],
                    ["report", "pol", "--golden", str(tmp_path / "g*.jsonl"), "--path", str(root)]):
        done = runner.invoke(app, command)
        pattern = next(arg for arg in command if "*" in arg)
        assert done.exit_code == 3 and done.output == f"error: no file matches {pattern}\n", (command, done.output)
    assert not root.exists()  # a pattern that matched nothing adds nothing
    done = runner.invoke(app, ["add", "pol", str(docs / "*.md"), "--path", str(root)])  # quoted, as Windows passes it
    assert done.exit_code == 0 and "added 2 document(s) to pol" in done.output, done.output
    for name in ("g1.jsonl", "g2.jsonl"):
        (tmp_path / name).write_text('{"question": "Can I defer?", "expected": ["a.md"]}\n')
    two = runner.invoke(app, ["golden", "check", str(tmp_path / "g*.jsonl")])
    assert two.exit_code == 2 and f"{tmp_path / 'g*.jsonl'} matches 2 files" in two.output
    one = runner.invoke(app, ["golden", "check", str(tmp_path / "g1.json?")])
    assert one.exit_code == 0 and one.output.startswith(f"{tmp_path / 'g1.jsonl'}: 1 row: 1 ready"), one.output


def test_golden_export_says_its_note_on_a_line_of_its_own(tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "1", "question": "Can I defer?", "expected": {"deferment.md": 2, "savings.txt": 0}}\n')
    done = runner.invoke(app, ["golden", "export", str(golden), "--to", "ragas", "--out", str(tmp_path / "r.jsonl")])
    assert done.exit_code == 0 and done.output.splitlines() == [
        f"wrote 1 row(s) as a ragas test set to {tmp_path / 'r.jsonl'}",
        "note: ragas' reference_context_ids hold no grades: 1 graded row(s) list their relevant labels there, the "
        "grades stay in the vectrixdb field"]
