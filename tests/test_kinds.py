"""A report kind is one declaration: a toy kind declared here shows in `runs list`, on the dashboard
(real server on loopback) and in the certificate PDF; listings read a run's header.json only."""
import json
import socket
import threading
import time

import httpx
import pandas as pd
import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation import list_runs, load_run
from vectrixdb.evaluation.runs.kinds import Kind, Plot
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.evaluation.runs.saved import UnreadableRun

LOCAL = "127.0.0.1"


def toy_headline(values: dict) -> dict:
    return {f"toy_hit@{values['k']}": values.get("toy_hit")} if "k" in values else {}


def toy_tables(report) -> list[dict]:
    return [{"title": "Toy tally", "rows": [["question", "hit"]] +
             [[str(q), "yes" if h else "no"] for q, h in report.frame["toy_hit@3"].items()]}]


def toy_plot(report):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.bar([str(q) for q in report.frame.index], report.frame["toy_hit@3"])
    ax.set_title("toy hits per question")
    return fig


TOY = Kind("toy", "toys", "tests.test_kinds:toy_plot", badges=("Toy",), headline=toy_headline, grades=("toy_hit",),
           sla=("toy_hit",), what="a toy run", cli=lambda row: f"toy hit rate {row['toy_hit@3']:.2f}",
           certificate=toy_tables, plots=(Plot("Toy again", "the same toy bars, run {run_id}", toy_plot),))


@pytest.fixture(scope="module")
def toy():
    kinds.register(TOY)
    yield TOY
    kinds.unregister("toy")


def toy_report() -> Report:
    frame = pd.DataFrame({"question": ["one?", "two?", "three?", "four?"], "toy_hit@3": [1.0, 1.0, 1.0, 0.0]},
                         index=pd.Index(["q1", "q2", "q3", "q4"], name="id"))
    return Report("toy", {"k": 3, "toy_hit": 0.75, "questions": 4}, frame, meta={"name": "toy run"})


@pytest.fixture(scope="module")
def folder(toy, tmp_path_factory):
    path = tmp_path_factory.mktemp("kinds")
    run_id = toy_report().save(str(path))
    (path / "sla.json").write_text(json.dumps({"toy_hit": 0.7, "ndcg": 0.6, "duration_s": {"max": 600}}))
    return str(path), run_id


@pytest.fixture(scope="module")
def server(folder):
    import uvicorn

    from vectrixdb.server import create_app

    with socket.socket() as s:
        s.bind((LOCAL, 0))
        port = s.getsockname()[1]
    app = create_app(folder[0], sla=f"{folder[0]}/sla.json")
    srv = uvicorn.Server(uvicorn.Config(app, host=LOCAL, port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started:
        assert time.time() < deadline, "the dashboard did not start"
        time.sleep(0.05)
    yield f"http://{LOCAL}:{port}"
    srv.should_exit = True
    thread.join(10)


def test_a_toy_kind_shows_in_runs_list_and_its_json(folder):
    from vectrixdb.cli import app

    path, run_id = folder
    listed = CliRunner().invoke(app, ["runs", "list", path])
    assert listed.exit_code == 0, listed.output
    (line,) = [x for x in listed.output.splitlines() if run_id in x]
    assert line.split()[:5] == ["toy", "run", "toy", "completed", "toy"] and "toy hit rate 0.75" in line
    (record,) = json.loads(CliRunner().invoke(app, ["runs", "list", path, "--json"]).output)
    assert record["kind"] == "toy" and record["type"] == "Toy" and record["toy_hit@3"] == 0.75
    assert record["status"] == "completed" and record["questions"] == 4 and record["run_id"] == run_id


def test_a_toy_kind_shows_on_the_dashboard_list_and_run_page(folder, server):
    path, run_id = folder
    listing = httpx.get(server + "/", timeout=30).text
    assert f'data-run="{run_id}" data-type="Toy"' in listing and "Toy (1)" in listing and "toy_hit@3" in listing
    assert f'data-run="{run_id}"' in httpx.get(server + "/?type=Toy", timeout=30).text
    page = httpx.get(server + f"/runs/{run_id}", timeout=60)
    assert page.status_code == 200
    text = page.text
    assert "Toy" in text and "<span>toy_hit@3</span><b>0.750</b>" in text  # badge and headline from the declaration
    assert "<h2>Toy tally</h2>" in text and "<td>q4</td><td>no</td>" in text  # its table
    assert 'id="grade">C<' in text and "toy_hit@3 0.750" in text  # graded by the one rule: 0.75 is a C
    assert "MEETS SLA (1 of 1 applicable thresholds met; 2 do not apply to a toy run)" in text
    assert "Toy again" in text and text.count("data:image/png;base64,") >= 2  # its plot and its extra plot
    question = httpx.get(server + f"/runs/{run_id}/question", params={"id": "q4"}, timeout=30)
    assert question.status_code == 200 and "four?" in question.text


def test_a_toy_kind_shows_in_its_certificate_pdf(folder, server):
    import io

    path, run_id = folder
    got = httpx.get(server + f"/runs/{run_id}/certificate.pdf", timeout=60)
    assert got.status_code == 200 and got.content.startswith(b"%PDF")
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(got.content)).pages).split())
    assert "Overall grade C" in text and "toy_hit@3" in text and "Toy tally" in text
    assert "a toy run" in text and "Figure 2. Toy again" in text and "· toy · completed · 4 questions" in text


def test_the_list_reads_headers_only(toy, tmp_path):
    from tests.dashboard_runs import QUESTIONS, retrieve
    from vectrixdb.evaluation import run_evaluation
    from vectrixdb.server.listing import Runs

    folder = str(tmp_path)
    toy_id = toy_report().save(folder)
    real_id = run_evaluation(retrieve, QUESTIONS, k=5, save_to=folder, name="real")["run_id"]
    before = list_runs(folder)
    body = next(tmp_path.glob(f"*/runs/{toy_id}/report.json"))
    header = body.parent / "header.json"
    assert json.loads(header.read_text())["headline"] == {"toy_hit@3": 0.75}

    good = body.read_bytes()
    body.write_bytes(good[:200] + b"\x00 not json any more")  # the body is corrupt after a valid header
    pd.testing.assert_frame_equal(list_runs(folder), before)  # listed as it was, from its header
    pd.testing.assert_frame_equal(Runs(folder).frame(), before)
    with pytest.raises(UnreadableRun):
        load_run(folder, toy_id)  # the run itself is read from its body, which says why it cannot be used

    body.write_bytes(good)
    header.write_bytes(b'{"header_version": 1, "kind": "toy", "status": ')  # a header cut short
    for frame in (list_runs(folder), Runs(folder).frame()):
        rows = {r["run_id"]: r for r in frame.to_dict(orient="records")}
        assert rows[toy_id]["status"] == "unreadable" and rows[toy_id]["error"].startswith("header.json: it is not JSON")
        assert rows[real_id]["status"] == "completed"  # the rest of the list keeps working

    header.unlink()  # a run saved before headers lists from its report.json, with the same row
    pd.testing.assert_frame_equal(list_runs(folder), before)
    pd.testing.assert_frame_equal(Runs(folder).frame(), before)


def test_every_built_in_hook_resolves():
    """Every "module:function" a built-in declaration names imports (a moved module would not)."""
    import importlib

    for kind in kinds.KINDS.values():
        hooks = [kind.plot, kind.headline, kind.figures, kind.cli, kind.view, kind.certificate, kind.appendix, kind.check]
        hooks += [p.draw for p in kind.plots] + [p.when for p in kind.plots]
        for hook in hooks:
            if isinstance(hook, str):
                module, function = hook.split(":")
                assert callable(getattr(importlib.import_module(module), function)), (kind.name, hook)
        if kind.progress:
            module = importlib.import_module(kind.progress)
            assert callable(module.progress_values) and callable(module.progress_report), kind.name
    assert tuple(b for b in kinds.badges() if b != "Toy") == ("Retrieval", "Generation", "RAG", "Chunking", "Experiment", "Power", "Pool", "PPI",
                              "Audit")
