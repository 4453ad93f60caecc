"""Golden files and runs where teams keep them: local, s3:// (moto) and Azure Blob (azurite)."""
import hashlib
from pathlib import Path

import pytest

from vectrixdb import io
from vectrixdb.evaluation import Question, check_golden, list_runs, load_questions, load_run, retrieval_report, save_questions

QS = [Question("Can I defer a loan payment after a disaster?", "Yes.", ["deferment"], "q1"),
      Question("Is a stolen card my liability?", "No.", ["card-fraud"], "q2")]


def test_write_new_never_clobbers_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "f.txt"
    io.write_new(str(target), "one")
    with pytest.raises(FileExistsError):
        io.write_new(str(target), "two")
    assert target.read_text() == "one"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.txt"]


def test_text_is_not_mistaken_for_an_address():
    assert io.is_remote("s3://bucket/key") and io.is_remote("az://c/p")
    assert io.is_remote("https://acct.blob.core.windows.net/c/p")
    assert not io.is_remote("see https://example.org for details")
    assert not io.is_remote("/local/file.txt")


def _round_trip(base, policies):
    path = io.join(base, "sets", "golden.jsonl")
    save_questions(QS, path)
    with pytest.raises(FileExistsError):
        save_questions(QS, path)
    assert load_questions(path) == QS
    check = check_golden(path, policies)
    assert check.ok and check.ready == 2
    report = retrieval_report(policies, path, k=(1, 3), save_to=io.join(base, "evaluations"))
    assert report.meta["golden"] == (path if io.is_remote(path) else str(Path(path).resolve()))
    assert report.meta["golden_sha256"] == hashlib.sha256(io.read_bytes(path)).hexdigest()
    runs = list_runs(io.join(base, "evaluations"))
    assert list(runs["run_id"]) == [report["run_id"]]
    again = load_run(io.join(base, "evaluations"), report["run_id"])
    assert again["recall"] == report["recall"] and dict(again) == dict(report)  # k keys come back as integers
    assert list(again.frame.index) == ["q1", "q2"]


def test_local_folder(tmp_path, policies):
    _round_trip(str(tmp_path), policies)


def test_s3(s3_bucket, policies):
    _round_trip(s3_bucket, policies)


def test_azure_blob(blob_container, policies):
    _round_trip(blob_container, policies)
    url = "https://devstoreaccount1.blob.core.windows.net/golden/sets/golden.jsonl"
    fs, inner = io.filesystem(url)
    assert inner == "golden/sets/golden.jsonl" and fs.exists(inner)
