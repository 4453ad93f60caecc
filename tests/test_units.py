"""A kind declares which of its columns are not 0..1 scores (Kind.units): a toy kind whose `wait_ms`
column holds milliseconds that happen to lie in 0..1 (so no value-based rule could tell) shows them
with their unit and never in the score colours, on the dashboard's run page and list, in the
certificate PDF (its colour decision and its text) and in the heatmap figure."""
from __future__ import annotations

import io
import re

import httpx
import pandas as pd
import pytest
from pypdf import PdfReader

from tests.servers import serve_app
from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs import kinds
from vectrixdb.evaluation.runs.kinds import Kind, with_unit
from vectrixdb.evaluation.runs.report import Report


def timed_headline(values: dict) -> dict:
    return {"hit@3": values.get("hit"), "wait_ms": values.get("wait_ms")}


def timed_plot(report):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar([str(q) for q in report.frame.index], report.frame["hit@3"])
    return fig


TIMED = Kind("timed_toy", "timed_toys", timed_plot, badges=("Toy",), headline=timed_headline, what="a timed toy run",
             units={"wait_ms": "ms", "tokens": "tokens"})


@pytest.fixture
def timed():
    kinds.register(TIMED)
    yield TIMED
    kinds.unregister("timed_toy")


def timed_report() -> Report:
    frame = pd.DataFrame({"question": ["one?", "two?", "three?"], "hit@3": [1.0, 0.0, 1.0],
                          "wait_ms": [0.4, 0.8, 0.25], "tokens": [12, 1500, 40]},
                         index=pd.Index(["q1", "q2", "q3"], name="id"))
    return Report("timed_toy", {"hit": 2 / 3, "wait_ms": 0.4, "questions": 3}, frame, meta={"name": "timed toy"})


def test_a_unit_is_read_from_the_declaration_and_printed_with_the_number(timed):
    assert timed.unit_of("wait_ms") == "ms" and timed.unit_of("wait_ms@10") == "ms" and timed.unit_of("wait_ms low") == "ms"
    assert timed.unit_of("hit@3") is None and timed.unit_of("duration_s") == "s"  # a score; a unit every run shares
    assert [with_unit(v, u) for v, u in ((0.4, "ms"), (412.46, "ms"), (0, "ms"), (1500, "tokens"), (3.0, "count"),
                                          (2, "rank"), (2.5, "rank"), (0.0123, "$"), (1234.5, "$"))] == \
        ["0.400 ms", "412.5 ms", "0 ms", "1,500 tokens", "3", "rank 2", "rank 2.5", "$0.0123", "$1,234.50"]
    timing = Kind("timing_toy", "timing", timed_plot, units={"recall": "ms"})  # `runs list` text: any headline name
    assert timing.cli_text({"recall@10": 412.5}) == "recall@10 412.5 ms" and timed.cli_text({"recall@10": 0.5}) == \
        "recall@10 0.500"
    with pytest.raises(BadInput, match="units maps column names to unit names"):
        Kind("bad_units", "bad", timed_plot, units={"wait_ms": 3})  # type: ignore[dict-item]


def test_the_dashboard_shows_a_unit_column_with_its_unit_and_no_heat(timed, tmp_path):
    from vectrixdb.server import create_app

    run_id = timed_report().save(str(tmp_path))
    with serve_app(create_app(str(tmp_path))) as url:
        page = httpx.get(f"{url}/runs/{run_id}", timeout=60)
        assert page.status_code == 200
        table = page.text.split('id="main-table"', 1)[1].split("</table>", 1)[0]
        head = re.findall(r"<th>([^<]*)</th>", table)
        assert head == ["id", "question", "hit@3", "wait_ms", "tokens"]
        first = table.split("<tbody>", 1)[1].split("</tr>", 1)[0]
        cells = re.findall(r"<td ([^>]*)>([^<]*)</td>", first)
        assert cells[1][1] == "1.000" and "background" in cells[1][0]  # the score: heat-coloured
        assert cells[2] == ('class="num"', "0.400 ms") and cells[3] == ('class="num"', "12 tokens")  # no style
        assert "1,500 tokens" in table and "0.250 ms" in table
        assert "<span>wait_ms</span><b>0.400 ms</b>" in page.text  # the headline figure, with its unit
        listing = httpx.get(url + "/", timeout=60).text
        assert "<span>wait_ms 0.400 ms</span>" in listing  # the list's other figures


def test_the_certificate_prints_a_unit_figure_uncoloured_with_its_unit(timed):
    from vectrixdb.present import certificate as files, pdf

    assert files.figure_row("wait_ms", 0.4, "ms") == ("wait_ms", "0.400 ms", None)  # text with unit, no colour
    assert files.figure_row("hit@3", 0.4, None) == ("hit@3", "0.400", 0.4)  # a score keeps its colour
    assert pdf.background(0.4, "ms") is None and pdf.background(None, "ms") is None
    assert pdf.background(0.4, None) == pdf.heat(0.4) and pdf.background(None, None) == pdf.heat(None)
    doc = files.certificate(timed_report(), None)
    assert ("wait_ms", "0.400 ms", None) in doc["headline"]
    hm = doc["heatmap"]
    assert hm["columns"] == ["hit@3", "wait_ms", "tokens"] and hm["units"] == [None, "ms", "tokens"]
    assert hm["rows"][1]["cells"] == ["0.000", "0.800 ms", "1,500 tokens"]
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.build(doc))).pages).split())
    assert "wait_ms 0.400 ms" in text and "0.800 ms" in text and "1,500 tokens" in text
    assert "a column with a unit is not a score and is not coloured" in text


def test_the_heatmap_figure_leaves_unit_columns_out(timed):
    from vectrixdb.evaluation.runs.kinds_builtin import score_heatmap

    fig = score_heatmap(timed_report())
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["hit@3"]


def test_every_built_in_kind_declares_its_measured_columns():
    """The built-ins' times, counts and ranks (the columns their reports save) carry a unit."""
    got = {name: kinds.kind_of(name) for name in ("retrieval", "evaluate", "sweep", "chunking", "pool")}
    assert got["retrieval"].unit_of("latency_ms") == "ms" and got["retrieval"].unit_of("first_right") == "rank"
    assert got["evaluate"].unit_of("p95_ms") == "ms" and got["sweep"].unit_of("build_s") == "s"
    assert got["chunking"].unit_of("chunks") == "count" and got["pool"].unit_of("pooled") == "count"
    assert got["retrieval"].unit_of("ndcg@10") is None and got["retrieval"].unit_of("recall@5") is None


def test_a_figure_with_a_unit_is_never_graded_nor_sla_checked(tmp_path):
    """Reviewer's case: `accuracy` declared a count (0.75 and 2.0) and a ms figure in grades=: a unit figure is
    not a score, so the kind refuses it in grades/sla, the grade and SLA skip it, and Wilson refuses a mean > 1."""
    from vectrixdb.present import certify

    with pytest.raises(BadInput, match=r"\['wait_ms'\] named both in grades/sla and in units"):
        Kind("graded_ms", "graded_ms", timed_plot, units={"wait_ms": "ms"}, grades=("wait_ms",))
    with pytest.raises(BadInput, match=r"\['accuracy@10'\] named both"):
        Kind("sla_ms", "sla_ms", timed_plot, units={"accuracy": "count"}, sla=("accuracy@10",))
    with pytest.raises(BadInput, match="neither blank"):
        Kind("blank_unit", "blank", timed_plot, units={"wait_ms": "   "})
    counted = kinds.register(Kind("counted_toy", "counted_toys", timed_plot, grades=("hit",), units={"accuracy": "count"},
                                  headline=lambda v: {"accuracy": v["accuracy"], "hit": v["hit"]}))
    try:
        sla = certify.load_sla(None)[0]
        for accuracy in (0.75, 2.0):
            rep = Report("counted_toy", {"accuracy": accuracy, "hit": 0.95, "questions": 200},
                         pd.DataFrame({"hit": [0.95]}, index=pd.Index(["q"], name="id")), meta={"status": "completed"})
            got = certify.grade(rep, sla)
            assert got["graded"] == {"hit": 0.95} and got["letter"] == "A"  # accuracy (a count) neither lowers nor breaks it
            row = next(r for r in certify.compliance(rep, sla)["rows"] if r["figure"] == "accuracy")
            assert row["actual"] is None and row["verdict"] == "does not apply (accuracy is in count, not a 0..1 score)"
    finally:
        kinds.unregister(counted.name)
    for p, n in ((2.0, 3), (-0.1, 3), (0.5, 0)):
        with pytest.raises(BadInput, match="Wilson's interval is for a mean of n >= 1 scores in 0..1"):
            certify.wilson(p, n)
    assert certify.wilson(1.0, 1)[1] == 1.0  # the extremes still work


def test_the_runs_list_asks_the_kind_before_colouring_its_score_columns(tmp_path):
    """Reviewer's case: the list's Accuracy / Chunk F1 columns were heat-coloured whatever the kind's units;
    now a column the run's kind gives a unit is printed with it and uncoloured, as on the run page."""
    from vectrixdb.server import create_app

    counted = kinds.register(Kind("counted_list_toy", "counted_list_toys", timed_plot, badges=("Counted",),
                                  units={"accuracy": "count", "groundedness": "ms"},
                                  headline=lambda v: {"accuracy": v["accuracy"], "groundedness": v["groundedness"],
                                                      "chunk_f1": v["chunk_f1"]}))
    try:
        rep = Report("counted_list_toy", {"accuracy": 3, "groundedness": 0.4, "chunk_f1": 0.5, "questions": 1},
                     pd.DataFrame({"hit": [1.0]}, index=pd.Index(["q"], name="id")), meta={"status": "completed"})
        rep.save(str(tmp_path))
        with serve_app(create_app(str(tmp_path))) as url:
            listing = httpx.get(url + "/", timeout=60).text
        row = listing.split('data-type="Counted"', 1)[1].split("</tr>", 1)[0]
        assert '<td class="num" title="accuracy is in count, not a 0..1 score">3</td>' in row
        assert '<td class="num" title="groundedness is in ms, not a 0..1 score">0.400 ms</td>' in row
        chunk = re.search(r'<td class="num" style="([^"]*)"[^>]*>0.500</td>', row)
        assert chunk and "background" in chunk.group(1)  # a score column of the same run keeps its heat
    finally:
        kinds.unregister(counted.name)


def test_save_refuses_what_reading_would_and_warns_of_a_unit_naming_nothing(tmp_path):
    """Reviewer's cases: values.cost = 1.23 saved and listed but could never be opened (reading wants an
    object there); a unit for `wait_sm` (a typo) was useless in silence. Save runs reading's checks first."""
    from vectrixdb.evaluation.runs import store

    costly = kinds.register(Kind("cost_toy", "cost_toys", timed_plot, headline=lambda v: {"cost": v["cost"]},
                                 units={"cost": "$", "wait_sm": "ms"}))
    try:
        frame = pd.DataFrame({"hit": [1.0], "wait_ms": [0.4]}, index=pd.Index(["q"], name="id"))
        rep = Report("cost_toy", {"cost": 1.23, "questions": 1}, frame, meta={"status": "completed"})
        with pytest.raises(BadInput, match=r"cost_toy report \S+ not saved: .*at /values/cost: float 1.23, not an object"):
            rep.save(str(tmp_path))
        assert not (tmp_path / "cost_toys").exists() or not any((tmp_path / "cost_toys").rglob("report.json"))
        rep = Report("cost_toy", {"cost": {"total": 1.23}, "questions": 1}, frame, meta={"status": "completed"})
        run_id = rep.save(str(tmp_path))
        back = store.load_run(str(tmp_path), run_id)
        assert back["warnings"] == ["the kind's units name ['wait_sm'], which no column or figure of this run has "
                                    "(a typo?)"]
    finally:
        kinds.unregister(costly.name)
