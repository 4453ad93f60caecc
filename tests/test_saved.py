"""What a saved run is, published (issue 46): report.schema.json and header.schema.json are JSON Schema
2020-12 shipped beside golden.schema.json; a run the library saves validates against them with plain
jsonschema (what any other program would do), and a reader's reason for refusing a file names the
place in it as a JSON pointer, what it found and what the schema wants."""
from __future__ import annotations

import json
from importlib import resources

import pandas as pd
import pytest
from jsonschema import Draft202012Validator

from vectrixdb.evaluation.runs.report import Report
from vectrixdb.evaluation.runs.saved import check_head, check_header


def published(name: str) -> dict:
    return json.loads(resources.files("vectrixdb").joinpath(name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["report.schema.json", "header.schema.json", "golden.schema.json"])
def test_the_schemas_are_json_schema_2020_12(name):
    schema = published(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_a_saved_run_validates_against_the_published_schemas(tmp_path):
    frame = pd.DataFrame({"question": ["q one", "q two"], "doc_f1@3": [1.0, 0.5],
                          "doc expected": [["a"], ["b"]], "doc retrieved": [["a"], ["c"]]},
                         index=pd.Index(["q1", "q2"], name="id"))
    values = {"type": "Retrieval", "k": 3, "levels": {"doc": {"precision": 0.5, "recall": 0.75, "f1": 0.6}},
              "recall": {3: 0.75}, "questions": 2, "misses": [], "warnings": ["a warning"]}
    report = Report("evaluation", values, frame, meta={"status": "completed", "name": "schema check"})
    report.save(str(tmp_path))
    (folder,) = [p for p in tmp_path.rglob("report.json")]
    body = json.loads(folder.read_text())
    header = json.loads((folder.parent / "header.json").read_text())
    assert not list(Draft202012Validator(published("report.schema.json")).iter_errors(body))
    assert not list(Draft202012Validator(published("header.schema.json")).iter_errors(header))
    assert check_head(body) is None and check_header(header) is None


def test_a_reason_names_the_place_as_a_json_pointer():
    good = {"kind": "evaluation", "status": "completed", "values": {"metrics": {"accuracy": 0.4}}}
    assert check_head(good) is None
    bad = {**good, "values": {"metrics": {"accuracy": "high"}}}
    assert check_head(bad) == ('at /values/metrics/accuracy: str "high", not a score from 0 to 1 (or null) '
                               "(report.schema.json)")
    assert check_head({**good, "status": "done"}).startswith("at /status: str \"done\", not one of pending")
    assert check_head({**good, "kind": "nonsense"}).startswith("at /kind: its kind 'nonsense' is not a kind of run")
    chunking = {**good, "kind": "chunking", "values": {"techniques": [{"name": "x", "chunk_size": "big"}]}}
    assert check_head(chunking).startswith("at /values/techniques/0/chunk_size: str \"big\", not a whole number")
    assert check_header({"header_version": 2, "kind": "evaluation", "headline": {}}).startswith(
        "at /header_version: int 2, not header version 1")
    assert check_header({"header_version": 1, "kind": "evaluation", "headline": {"a": [1]}}).startswith(
        "at /headline/a: list [1], not a number, text or null")
