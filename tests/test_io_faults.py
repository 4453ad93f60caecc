"""Faults in files going in and out (issue 44): each fails with a VectrixError naming the file, line and
field, and leaves nothing half-written; a file written is readable as the umask says; questions.csv
is safe to open in a spreadsheet and reads back exactly."""
from __future__ import annotations

import errno
import json
import os
import stat

import pandas as pd
import pytest
from typer.testing import CliRunner

from vectrixdb import io
from vectrixdb.cli.commands import app
from vectrixdb import errors
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, load_questions, save_questions

runner = CliRunner()


def full_disk(monkeypatch, after: int = 0) -> None:
    """Every write to (and flush of) a file fails as on a full disk once `after` files' flushes have
    succeeded; the terminal's descriptors (0-2) are left alone."""
    write, fsync, done = os.write, os.fsync, []

    def failing_write(fd, data):
        if fd > 2 and len(done) >= after:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(fd, data)

    def failing_fsync(fd):
        if fd > 2 and len(done) >= after:
            raise OSError(errno.ENOSPC, "No space left on device")
        done.append(fd)
        return fsync(fd)

    monkeypatch.setattr(os, "write", failing_write)
    monkeypatch.setattr(os, "fsync", failing_fsync)


def ragas(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


ROW = {"user_input": "How long is a deferment?", "reference": "Up to three months.",
       "reference_context_ids": ["deferment.md"]}


def test_a_lone_surrogate_is_refused_naming_file_line_and_field_before_anything_is_written(tmp_path):
    source = ragas(tmp_path / "ragas.jsonl", [ROW, {**ROW, "user_input": "Broken \ud800 text?"}])
    out = tmp_path / "golden.jsonl"
    done = runner.invoke(app, ["golden", "import", source, "--out", str(out)])
    assert done.exit_code == 2, done.output  # BadInput, not a UnicodeEncodeError traceback
    assert f"{source}, line 2, user_input: holds a lone surrogate" in done.output
    assert not out.exists() and os.listdir(tmp_path) == ["ragas.jsonl"]
    with pytest.raises(BadInput, match=r"g\.jsonl: row 2 \(line 7 where it was read\), evidence\[0\]: holds a lone"):
        save_questions([Question("fine?", None, ["a"]), Question("ok?", None, ["a"], evidence=["x\udfff"], line=7)],
                       str(tmp_path / "g.jsonl"))
    assert not (tmp_path / "g.jsonl").exists()
    from vectrixdb.evaluation import check_golden

    check = check_golden(source)
    assert not check.ok and [(f.line, f.field) for f in check.errors] == [(2, "user_input")]


def test_a_long_vecta_csv_field_is_read_and_one_past_the_bound_names_its_line_and_column(tmp_path):
    path = tmp_path / "vecta.csv"
    answer = "a" * 200_000  # past csv's own default limit of 131,072
    path.write_text(f"id,question,answer,chunk_ids,page_nums,source_paths\nq1,What?,{answer},,,deferment.md\n")
    (q,) = load_questions(str(path))
    assert q.reference == answer
    from vectrixdb.evaluation.golden.foreign import FIELD_LIMIT

    path.write_text("id,question,answer,chunk_ids,page_nums,source_paths\nq1,What?,short,,,deferment.md\n"
                    f"q2,Why?,\"{'b' * (FIELD_LIMIT + 1)}\",,,savings.txt\n")
    with pytest.raises(BadInput, match=rf"vecta\.csv, line 3: answer: {FIELD_LIMIT + 1:,} characters, over the"):
        load_questions(str(path))


def test_a_full_disk_is_an_io_error_naming_the_path_and_leaves_no_file(tmp_path, monkeypatch):
    source = ragas(tmp_path / "ragas.jsonl", [ROW])
    out = tmp_path / "out" / "golden.jsonl"
    (tmp_path / "out").mkdir()
    full_disk(monkeypatch)
    done = runner.invoke(app, ["golden", "import", source, "--out", str(out)])
    monkeypatch.undo()
    assert done.exit_code == 9 and done.exit_code != 1, done.output  # IOFailure's status, not a failed check's
    assert f"{out}: could not be written (the disk is full)" in done.output and "Traceback" not in done.output
    assert os.listdir(tmp_path / "out") == []  # no half file, no temporary file


def test_out_under_a_file_says_its_parent_is_not_a_folder(tmp_path):
    source = ragas(tmp_path / "ragas.jsonl", [ROW])
    (tmp_path / "somefile.txt").write_text("a file")
    for out in ("somefile.txt/golden.jsonl", "somefile.txt/deeper/golden.jsonl"):
        done = runner.invoke(app, ["golden", "import", source, "--out", str(tmp_path / out)])
        assert done.exit_code == 2 and "already exists" not in done.output, done.output
        assert f"{tmp_path / 'somefile.txt'} is a file, not a folder" in done.output
    assert (tmp_path / "somefile.txt").read_text() == "a file"


def test_an_import_without_a_collection_never_prints_collection_none(tmp_path):
    source = tmp_path / "drafts.jsonl"
    source.write_text(json.dumps({"question": "What?", "expected": ["a.md"], "draft": True}) + "\n")
    done = runner.invoke(app, ["golden", "import", str(source), "--out", str(tmp_path / "out.jsonl")])
    assert done.exit_code == 0, done.output
    assert "1 is a draft" in done.output and "--collection None" not in done.output
    assert "--collection NAME" in done.output


RISKY = ["=HYPERLINK(\"http://evil\",\"click\")", "=cmd|' /C calc'!A0", "@SUM(1+1)", "+1+2", "-2+3",
         "\t=tabbed", "'=already quoted", "''two quotes", "plain question?"]


def test_questions_csv_is_guarded_against_formulas_and_reads_back_exactly(tmp_path):
    from vectrixdb.evaluation import retrieval_report

    questions = [Question(text, None, ["a"], f"q{i}") for i, text in enumerate(RISKY)] + [
        Question("last", None, ["a"], "=id")]
    report = retrieval_report(lambda q: ["a"] if "quote" in q else ["b"], questions, k=1)
    report.frame["delta"] = -0.5  # a number stays a number
    run_id = report.save(str(tmp_path))
    path = tmp_path / "retrieval" / "runs" / run_id / "questions.csv"
    raw = pd.read_csv(path, index_col=0, keep_default_na=False)
    cells = [str(v) for v in raw.to_numpy().ravel()] + [str(i) for i in raw.index]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and c != "-0.5")], cells
    assert set(raw["delta"]) == {-0.5} and "'=id" in raw.index
    from vectrixdb.evaluation.runs.questions_csv import read_csv

    back = read_csv(str(path))
    assert list(back["question"]) == RISKY + ["last"] and list(back.index) == [q.key() for q in questions]
    assert (back["delta"] == -0.5).all() and back["delta"].dtype.kind == "f"


def test_export_as_a_principal_reads_chunk_labels_from_its_view(tmp_path):
    from vectrixdb import Vectrix

    root = tmp_path / "cols"
    db = Vectrix("pol", path=root)
    db.add_documents([{"source": "Staff handbook: holidays and sick leave.", "doc_id": "handbook",
                       "access": {"group": ["staff"]}},
                      {"source": "Board minutes: the merger closes in March.", "doc_id": "board",
                       "access": {"group": ["board"]}}], progress=False)
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"question": "How many holidays?", "expected": ["handbook::0"]}) + "\n"
                      + json.dumps({"question": "When is the merger?", "expected": ["board::0"]}) + "\n")
    out = tmp_path / "ragas.jsonl"
    done = runner.invoke(app, ["golden", "export", str(golden), "--to", "ragas", "--out", str(out),
                               "--collection", "pol", "--as", "group=staff", "--path", str(root)])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["reference_contexts"] == ["Staff handbook: holidays and sick leave."]
    assert "reference_contexts" not in rows[1]  # the board's chunk is not this principal's to copy


def test_a_run_saved_onto_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    from vectrixdb.evaluation import list_runs, retrieval_report

    report = retrieval_report(lambda q: ["a"], [Question("q?", None, ["a"], "q")], k=1)
    report.save(str(tmp_path))  # the runs folder exists, with one run in it
    before = sorted(os.listdir(tmp_path / "retrieval" / "runs"))
    full_disk(monkeypatch, after=1)  # questions.csv is written, report.json is not
    with pytest.raises(OSError, match=r"report\.json: could not be written \(the disk is full\)") as got:
        report.save(str(tmp_path))
    monkeypatch.undo()
    assert isinstance(got.value, errors.IOFailure) and got.value.errno == errno.ENOSPC
    assert str(tmp_path / "retrieval" / "runs") in str(got.value)
    assert sorted(os.listdir(tmp_path / "retrieval" / "runs")) == before  # no questions.csv alone, no temporary
    assert len(list_runs(str(tmp_path))) == 1


def test_files_written_atomically_get_the_umask_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        written = io.write_new(tmp_path / "a.html", "<p>hi</p>")
        io.replace_atomic(tmp_path / "b.bin", b"x")
        io.overwrite_owned(tmp_path / "c.json", "{}")
        os.umask(0o027)
        io.write_new(tmp_path / "d.pdf", b"%PDF")
        mask = io.umask() if hasattr(io, "umask") else None
    finally:
        os.umask(old)
    modes = {name: stat.S_IMODE(os.stat(tmp_path / name).st_mode) for name in ("a.html", "b.bin", "c.json", "d.pdf")}
    assert modes == {"a.html": 0o644, "b.bin": 0o644, "c.json": 0o644, "d.pdf": 0o640}, modes
    assert written == str(tmp_path / "a.html") and mask == 0o027
