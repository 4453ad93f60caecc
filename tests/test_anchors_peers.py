"""The round trip against the peers' own objects: ragas 0.4.3 and DeepEval 4.3.1 build, save and
load the files, in their own virtualenv (.cache/interop, made by `make interop`, which `make test`
runs): both pin what the project's .venv holds newer (ragas: openai, fsspec, huggingface_hub;
DeepEval: click<8.4, and pytest plugins), so they never enter .venv. Each check runs the peer in a
subprocess of that interpreter; vectrixdb reads and writes the files here, on a real collection
(the first 4 pages of the Uber 10-K, embedded by the deterministic stand-in).

Without that virtualenv every test here is skipped with the command that makes it; CI runs `make
test`, which makes it, so there they run."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_anchors import ROWS, quote, uber  # noqa: F401 - the module's collection fixture
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import check_golden, load_questions
from vectrixdb.evaluation.golden.anchors_write import save_deepeval, save_ragas

PEERS = Path(os.environ.get("VECTRIXDB_PEERS_PYTHON") or ROOT / ".cache" / "interop" / "bin" / "python")
QUIET = {"DEEPEVAL_TELEMETRY_OPT_OUT": "YES", "RAGAS_DO_NOT_TRACK": "true", "DO_NOT_TRACK": "1",
         "DEEPEVAL_RESULTS_FOLDER": "", "ERROR_REPORTING": "NO"}


def peer(code: str, cwd: Path) -> object:
    """Run `code` in the peers' interpreter (cwd: a scratch folder, for their dot-files) and return
    the JSON it prints last."""
    if not PEERS.exists():
        pytest.skip(f"THE PEERS' VIRTUALENV IS MISSING ({PEERS}): run `make interop` (`make test` does) to "
                    "test the round trip against ragas and DeepEval themselves")
    done = subprocess.run([str(PEERS), "-c", code], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **QUIET, "HOME": str(cwd)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_ragas_testset_and_evaluation_dataset_as_ragas_saves_them_read_as_golden_rows(uber, tmp_path):  # noqa: F811
    on_3 = quote(uber, 3)
    code = f"""
import json
from ragas.dataset_schema import EvaluationDataset, SingleTurnSample
from ragas.testset.synthesizers.testset_schema import Testset, TestsetSample
on_3 = {on_3!r}
samples = [SingleTurnSample(user_input="What does page 3 say?", reference="It says so.", reference_contexts=[on_3]),
           SingleTurnSample(user_input="Which page lists the risks?", reference_context_ids=["uber_2021.pdf#page=2"],
                            response="a system's answer", retrieved_contexts=["what it retrieved"])]
EvaluationDataset(samples=samples).to_jsonl("dataset.jsonl")
EvaluationDataset(samples=samples[:1]).to_csv("dataset.csv")  # its to_csv takes one shape of sample
Testset(samples=[TestsetSample(eval_sample=s, synthesizer_name="single_hop_specific_query_synthesizer")
                 for s in samples]).to_jsonl("testset.jsonl")
print(json.dumps([open(n).read() for n in ("dataset.jsonl", "testset.jsonl")]))
"""
    files = peer(code, tmp_path)
    for name, text in zip(("dataset.jsonl", "testset.jsonl"), files):
        one, two = load_questions(str(tmp_path / name), uber)
        assert (one.question, one.reference, one.expected, one.evidence, one.draft) == (
            "What does page 3 say?", "It says so.", ("uber_2021.pdf#page=3",), (on_3,), False), text
        assert two.expected == ("uber_2021.pdf#page=2",) and two.reference is None and not two.draft
        assert (one.hint or "").endswith("synthesizer_name single_hop_specific_query_synthesizer") == \
            (name == "testset.jsonl")
        unplaced = load_questions(str(tmp_path / name))[0]  # no collection: contexts kept as evidence, no label
        assert unplaced.expected == () and unplaced.evidence == (on_3,)
    with pytest.raises(BadInput, match=r"line 1: a ragas CSV is not read .*to_jsonl"):
        load_questions(str(tmp_path / "dataset.csv"))
    assert [f.line for f in check_golden(str(tmp_path / "dataset.csv")).errors if "ragas CSV" in f.message] == [1]


def test_our_ragas_file_is_what_ragas_loads_and_ragas_own_rewrite_keeps_the_relevant_ids(uber, tmp_path):  # noqa: F811
    path = save_ragas(ROWS, str(tmp_path / "ours.jsonl"), uber)
    code = """
import json
from ragas.dataset_schema import EvaluationDataset
loaded = EvaluationDataset.from_jsonl("ours.jsonl")
loaded.to_jsonl("again.jsonl")
print(json.dumps([s.model_dump(exclude_none=True) for s in loaded.samples]))
"""
    first, second = peer(code, tmp_path)
    assert first == {"user_input": ROWS[0].question, "reference": ROWS[0].reference, "reference_contexts": ["Uber"],
                     "reference_context_ids": ["uber_2021.pdf#page=3"]}  # grade 0 is not relevant: not an id
    assert second == {"user_input": ROWS[1].question, "reference_contexts": [uber.document("note").markdown],
                      "reference_context_ids": ["note"]}
    assert [q.to_json() for q in load_questions(path, uber)] == [q.to_json() for q in ROWS]
    again = load_questions(str(tmp_path / "again.jsonl"), uber)  # ragas' own file: ragas' fields only
    assert [q.expected for q in again] == [("uber_2021.pdf#page=3",), ("note",)]
    assert again[0].evidence == ("Uber",) and again[0].hint is None  # word for word in the collection: evidence


def test_deepeval_goldens_as_deepeval_saves_them_read_as_golden_rows(uber, tmp_path):  # noqa: F811
    on_3, table = quote(uber, 3, pipes=False), quote(uber, 3)
    assert "|" in table and "|" not in on_3
    code = f"""
import json
from deepeval.dataset import EvaluationDataset, Golden
tabled = Golden(input="What does the table say?", context=[{table!r}], source_file="uber_2021.pdf")
for kind in ("json", "jsonl"):
    EvaluationDataset(goldens=[tabled]).save_as(kind, ".", file_name="tabled")
goldens = [Golden(input="What does page 3 say?", expected_output="It says so.", context=[{on_3!r}],
                  source_file="/data/uber_2021.pdf", name="g-1"),
           Golden(input="Which company files it?", expected_output="Uber.", source_file="/data/uber_2021.pdf",
                  actual_output="a system's answer", retrieval_context=["what it retrieved"])]
names = [EvaluationDataset(goldens=goldens).save_as(kind, ".", file_name="goldens") for kind in ("json", "jsonl", "csv")]
print(json.dumps(names))
"""
    *names, csv = peer(code, tmp_path)
    with pytest.raises(BadInput, match=r"line 1: a DeepEval CSV is not read: save the dataset as json"):
        load_questions(str(tmp_path / Path(csv).name))
    for name in names:
        one, two = load_questions(str(tmp_path / Path(name).name), uber)
        assert (one.id, one.question, one.reference, one.expected, one.evidence, one.draft) == (
            "g-1", "What does page 3 say?", "It says so.", ("uber_2021.pdf#page=3",), (on_3,), False)
        assert (two.reference, two.expected, two.draft) == ("Uber.", ("uber_2021.pdf",), False)
    # DeepEval's jsonl joins a context's texts with `|` (its loader splits them so): a text holding a
    # `|` comes back in pieces from DeepEval's own jsonl, whole from its json
    (whole,) = load_questions(str(tmp_path / "tabled.json"), uber)
    (pieces,) = load_questions(str(tmp_path / "tabled.jsonl"), uber)
    assert whole.evidence == (table,) and whole.expected == ("uber_2021.pdf#page=3",)
    assert len(pieces.evidence) > 1 and "|".join(pieces.evidence) == table


def test_our_deepeval_file_is_what_deepeval_loads_and_its_own_save_reads_back_exactly(uber, tmp_path):  # noqa: F811
    save_deepeval(ROWS, str(tmp_path / "ours.json"), uber)
    code = """
import json
from deepeval.dataset import EvaluationDataset
dataset = EvaluationDataset()
dataset.add_goldens_from_json_file("ours.json")
dataset.save_as("json", ".", file_name="again")
print(json.dumps([g.model_dump(exclude_none=True) for g in dataset.goldens]))
"""
    first, second = peer(code, tmp_path)
    assert (first["input"], first["expected_output"], first["context"], first["name"]) == (
        ROWS[0].question, ROWS[0].reference, ["Uber"], "u-1")
    assert first["additional_metadata"]["vectrixdb"]["expected"] == {"uber_2021.pdf#page=3": 2, "note": 0}
    assert (second["source_file"], second["context"]) == ("note", [uber.document("note").markdown])
    again = load_questions(str(tmp_path / "again.json"), uber)
    assert [q.to_json() for q in again] == [q.to_json() for q in ROWS]
