"""A report kind is one declaration: a toy kind declared here shows in `runs list`, on the dashboard
(real server on loopback: list, run page, its Evaluate tab, the judged-results and power panel, the
Experiments page's saved list) and in the certificate PDF; listings read a run's header.json only."""
import json

import httpx
import pandas as pd
import pytest
from pypdf import PdfReader
from typer.testing import CliRunner

from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation import list_runs, load_run
from tests.servers import serve_app
from vectrixdb.evaluation.runs.kinds import Judged, Kind, Plot
from vectrixdb.evaluation.runs.report import Report
from vectrixdb.evaluation.runs.saved import UnreadableRun
from vectrixdb.errors import BadInput


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


def toy_unjudged(report) -> dict:
    """The toy's own count of what nobody judged: a question that missed had 1 of its 3 picks unlabelled."""
    missed = [str(q) for q, h in report.frame["toy_hit@3"].items() if not h]
    return {"k": 3, "grain": "toy", "rule": "Toy rule: a miss hides one unlabelled pick.", "note": None,
            "rows": [{"what": "top 3 toy picks", "share": len(missed) / (3 * len(report.frame)),
                      "questions": len(report.frame)}],
            "per_question": {q: "1 of 3 toy picks unjudged" for q in missed}}


TOY = Kind("toy", "toys", "tests.test_kinds:toy_plot", badges=("Toy",), headline=toy_headline, grades=("toy_hit",),
           sla=("toy_hit",), what="a toy run", cli=lambda row: f"toy hit rate {row['toy_hit@3']:.2f}",
           certificate=toy_tables, plots=(Plot("Toy again", "the same toy bars, run {run_id}", toy_plot),),
           tab="toy", saved_comparison=True,
           judged=Judged("tests.test_kinds:toy_unjudged", lambda report: ["toy_hit@3", "no such column"]))


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
    from vectrixdb.server import create_app

    with serve_app(create_app(folder[0], sla=f"{folder[0]}/sla.json")) as url:
        yield url


def test_a_toy_kind_shows_in_runs_list_and_its_json(folder):
    from vectrixdb.cli.commands import app

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
    assert "unjudged, top 3 toy picks 8%" in text  # its Judged count, in the certificate's headline rows


def test_a_toy_kind_gets_the_panels_it_declares(folder, server):
    """Kind.judged puts the toy's own unjudged count and a power row for its declared measure on the
    run page and in the drill-down; Kind.tab gives it an Evaluate tab; Kind.saved_comparison lists
    it under the Experiments page's saved experiments."""
    path, run_id = folder
    text = httpx.get(server + f"/runs/{run_id}", timeout=60).text
    assert 'id="unjudged"' in text and "<td>top 3 toy picks</td>" in text and "<b>8%</b>" in text
    assert "Toy rule: a miss hides one unlabelled pick." in text
    assert 'id="power"' in text and "<td>toy_hit@3</td>" in text and "no such column" not in text
    question = httpx.get(server + f"/runs/{run_id}/question", params={"id": "q4"}, timeout=30).text
    assert "1 of 3 toy picks unjudged" in question
    tab = httpx.get(server + "/evaluate", params={"tab": "toy"}, timeout=60)
    assert tab.status_code == 200 and f'<option value="{run_id}" selected>' in tab.text
    assert '<a role="tab" id="tab-toy" href="/evaluate?tab=toy" class="here">Toy</a>' in tab.text  # its tab's link
    assert 'id="tab-toy"' in httpx.get(server + "/evaluate", timeout=60).text  # beside the built-in tabs
    experiments = httpx.get(server + "/experiments", timeout=30).text
    saved = experiments.split("<h2>Saved experiments</h2>")[1]
    assert f'<a href="/runs/{run_id}">{run_id}</a>' in saved


def test_a_kind_without_judged_results_gets_no_panel_and_an_unknown_kind_no_crash(toy, tmp_path):
    """A kind that declares no Judged (and not saved_comparison) has no panel, no power figures, no
    place among saved experiments; a run whose kind is no longer registered gets no panel, not an error."""
    from vectrixdb.server import create_app
    from vectrixdb.present.decisions import decisions, headline_measures, unjudged

    plain = kinds.register(Kind("plain_toy", "plain_toys", "tests.test_kinds:toy_plot", badges=("Toy",),
                                headline=toy_headline))
    try:
        report = toy_report()
        report = Report("plain_toy", dict(report), report.frame, meta={"name": "plain toy"})
        run_id = report.save(str(tmp_path))
        assert plain.judged_for(report) is None and decisions(report) is None and headline_measures(report) == []
        with serve_app(create_app(str(tmp_path))) as url:
            page = httpx.get(url + f"/runs/{run_id}", timeout=60)
            assert page.status_code == 200 and "toy_hit@3" in page.text
            assert 'id="decide"' not in page.text and 'id="unjudged"' not in page.text and 'id="power"' not in page.text
            experiments = httpx.get(url + "/experiments", timeout=30).text
            assert run_id not in experiments.split("<h2>Saved experiments</h2>")[1]
            empty = httpx.get(url + "/evaluate", params={"tab": "toy"}, timeout=30).text  # the toy's tab, no toy run
            assert "No saved run for the toy tab in this folder. It shows a toy run, saved (save_to=FOLDER) " \
                   "under toys/runs/." in empty
    finally:
        kinds.unregister("plain_toy")
    assert "plain_toy" not in kinds.KINDS  # a Report refuses an unknown kind; this one was made before it went
    assert decisions(report) is None and unjudged(report) is None and headline_measures(report) == []


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


def test_every_hook_of_every_kind_resolves(toy):
    """Every hook a registered declaration names (kinds.hooks: each field typed Hook of the kind, its
    Plots and its Judged) and every hook of how it is shown (present/shows.of) resolves to a callable:
    a moved module or a mistyped "module:function" fails here, not when a page first draws it. Its
    section template exists."""
    import importlib

    from dataclasses import fields

    from vectrixdb.present import shows
    from vectrixdb.present.render import TEMPLATES as templates

    named = set()
    for kind in kinds.KINDS.values():
        for where, hook in kinds.hooks(kind):
            assert callable(kinds.resolve(hook)), (kind.name, where, hook)
            named.add(where)
        shown = shows.of(kind)  # how it is shown: the presentation layer's Show for its name, or its own fields
        for f in fields(shown):
            hook = getattr(shown, f.name)
            if f.name == "judged" and hook is not None:
                for part in ("unjudged", "measures", "when"):
                    if getattr(hook, part) is not None:
                        assert callable(kinds.resolve(getattr(hook, part))), (kind.name, part)
                        named.add(f"judged.{part}")
            elif f.name not in ("section", "judged") and hook is not None:
                assert callable(kinds.resolve(hook)), (kind.name, f.name, hook)
                named.add(f.name)
        assert shown.section is None or (templates / shown.section).is_file(), (kind.name, shown.section)
        if kind.progress:
            module = importlib.import_module(kind.progress)
            assert callable(module.progress_values) and callable(module.progress_report), kind.name
    assert set(shows.SHOWS) <= set(kinds.KINDS), "a Show for a kind nobody declares"
    assert {"plot", "headline", "certificate", "plots[0].draw", "judged.unjudged", "judged.measures",
            "judged.when", "view", "appendix", "figures", "cli"} <= named  # every kind of hook is walked (no kind in
    # the package declares `check` now: report.schema.json holds what it checked, a chunking run's builds)
    badges = kinds.badges()  # every badge a registered kind declares, once each, whatever kinds are registered
    assert len(set(badges)) == len(badges) and set(badges) == {b for k in kinds.KINDS.values() for b in k.badges}
    assert {"Retrieval", "Toy"} <= set(badges)


LATENCY_KIND = '''"""A kind declared outside vectrixdb, in its own module: its verb and its one register line."""
import pandas as pd

from vectrixdb.evaluation.runs.kinds import Kind, register
from vectrixdb.evaluation.runs.report import Report


def latency_report(ms):
    frame = pd.DataFrame({"ms": ms}, index=pd.Index([f"q{i}" for i in range(len(ms))], name="id"))
    return Report("vx_toy_latency", {"median_ms": sorted(ms)[len(ms) // 2], "questions": len(ms)}, frame)


def plot(report):
    import matplotlib.pyplot as plt

    return plt.subplots()[0]


register(Kind("vx_toy_latency", "vx_toy_latency", plot, badges=("Latency",), graded=False, what="a latency report",
              headline=lambda values: {"median_ms": values.get("median_ms")},
              cli=lambda row: f"median {row['median_ms']:.1f} ms"))
'''


@pytest.fixture
def latency_module(tmp_path, monkeypatch):
    """A module `vx_latency_kind` declaring kind 'vx_toy_latency', importable from tmp_path/mods, not imported yet."""
    import sys

    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "vx_latency_kind.py").write_text(LATENCY_KIND)
    monkeypatch.syspath_prepend(str(mods))
    yield str(mods)
    kinds.unregister("vx_toy_latency")
    sys.modules.pop("vx_latency_kind", None)
    kinds._imported.discard("vx_latency_kind")


def _cli(args: list[str], env_extra: dict, pythonpath: str):
    """`python -m vectrixdb.cli ...` in a fresh process: it imports only what the command imports."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != kinds.SETTING}
    env["PYTHONPATH"] = os.pathsep.join([pythonpath, os.getcwd(), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "vectrixdb.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**env, **env_extra})


def test_a_kind_outside_the_package_is_listed_through_its_setting_and_reported_without_it(
        latency_module, tmp_path, monkeypatch):
    """A fresh `runs list` imports no module it is not told of: without VECTRIXDB_KINDS a saved run of
    kind 'vx_toy_latency' is reported (how many, where, what to import) beside the runs it can list, exit 0;
    with the setting it is listed as any other run. The dashboard list says the same."""
    import importlib

    from tests.dashboard_runs import QUESTIONS, retrieve
    from vectrixdb.evaluation import run_evaluation
    from vectrixdb.server import create_app

    folder = tmp_path / "runs"
    lat_id = importlib.import_module("vx_latency_kind").latency_report([3.0, 5.0, 9.0]).save(str(folder))
    real_id = run_evaluation(retrieve, QUESTIONS, k=5, save_to=str(folder), name="real")["run_id"]  # a built-in kind
    assert (folder / "vx_toy_latency" / "runs" / lat_id / "header.json").is_file()
    kinds.unregister("vx_toy_latency")  # this process forgets it, as a fresh one never knew it
    import sys
    sys.modules.pop("vx_latency_kind")
    kinds._imported.discard("vx_latency_kind")

    got = _cli(["runs", "list", str(folder)], {}, latency_module)
    note = f"1 run of unregistered kind 'vx_toy_latency' under {folder}/vx_toy_latency/runs: import the module that declares it"
    assert got.returncode == 0 and note in got.stdout and lat_id not in got.stdout, got.stdout + got.stderr
    alone = tmp_path / "alone"
    (alone / "vx_toy_latency").mkdir(parents=True)
    (folder / "vx_toy_latency").rename(alone / "vx_toy_latency")
    got = _cli(["runs", "list", str(alone)], {}, latency_module)  # nothing it can list: not "no runs" alone
    assert got.returncode == 0 and got.stdout.startswith(f"no runs of a registered kind under {alone}\n1 run of "
                                                          "unregistered kind 'vx_toy_latency'"), got.stdout + got.stderr
    got = _cli(["runs", "list", str(alone), "--json"], {}, latency_module)
    assert got.stdout.strip() == "[]" and "unregistered kind 'vx_toy_latency'" in got.stderr  # scripts get clean JSON
    (alone / "vx_toy_latency").rename(folder / "vx_toy_latency")

    with serve_app(create_app(str(folder))) as url:
        listing = httpx.get(url + "/", timeout=30).text
        assert f'data-run="{real_id}"' in listing and f'data-run="{lat_id}"' not in listing
        assert 'data-kind="vx_toy_latency"' in listing and "1 run of unregistered kind &#39;vx_toy_latency&#39;" in listing

    got = _cli(["runs", "list", str(folder)], {kinds.SETTING: "vx_latency_kind"}, latency_module)
    (line,) = [x for x in got.stdout.splitlines() if lat_id in x]
    assert got.returncode == 0 and "median 5.0 ms" in line and "unregistered" not in got.stdout, got.stdout
    assert any(real_id in x for x in got.stdout.splitlines())

    monkeypatch.setenv(kinds.SETTING, " vx_latency_kind, ")  # in this process: read when kinds are listed
    assert "vx_toy_latency" in kinds.folders() and list_runs(str(folder))["kind"].tolist().count("vx_toy_latency") == 1
    monkeypatch.setenv(kinds.SETTING, "vx_no_such_kind_module")
    with pytest.raises(BadInput, match="VECTRIXDB_KINDS names 'vx_no_such_kind_module', which cannot be imported"):
        kinds.folders()


def test_a_kind_declared_ungraded_gets_no_grade_or_sla_block_in_its_pdf(toy, latency_module, tmp_path):
    """graded=False: the certificate says the run is not graded instead of showing a grade and a red
    "no SLA threshold applies" verdict; a time the run does not have shows as a dash, not None."""
    import importlib
    import io

    from vectrixdb.present import certificate as files, pdf

    report = importlib.import_module("vx_latency_kind").latency_report([3.0, 5.0, 9.0])
    doc = files.certificate(report, None)
    assert doc["graded"] is False and "started — ·" in doc["subtitle"]
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.build(doc))).pages).split())
    assert "Not graded: a latency report gets no grade and no SLA verdict" in text and "median_ms" in text
    assert "NO SLA THRESHOLD APPLIES" not in text and "SLA compliance" not in text and "Overall grade" not in text
    toy = files.certificate(toy_report(), None)  # a graded kind keeps both
    assert toy["graded"] is True
    graded_text = " ".join(PdfReader(io.BytesIO(pdf.build(toy))).pages[0].extract_text().split())
    assert "Overall grade" in graded_text and "SLA compliance" in graded_text
