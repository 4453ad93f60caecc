"""Figures a reader can read (issue 30 item 4): colour bars, numbers legible on every colour, a
readable one-size chunking axis, run names in the forest plot, Markdown rendered in the PDF.

Every figure is drawn from a real report: run_evaluation over the sample documents' text, a real
compare_chunking build (the bundled embedding model), compare_runs between two saved runs.
"""
from pathlib import Path

import matplotlib
import pytest
from pypdf import PdfReader

from vectrixdb.evaluation import Question, compare_chunking, compare_runs, load_run, retrieval_report, run_evaluation
from vectrixdb.plotting.heatmap import heat_css, heat_rgb, text_on

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
TABLE = ("### Monthly fees by account\n\n| account | monthly fee |\n|---|---|\n| Everyday | $5 |\n"
         "| Premier | **$25** |\n\n<script>alert('x')</script>")
QS = [Question("Can I defer loan payments after a disaster?", "Yes, with no late fees.", ["deferment.md"], "q1"),
      Question("Am I liable after reporting a stolen card?", "No, not after the report.", ["card-fraud.md"], "q2"),
      Question("What does the Premier account cost?", "$25 a month.", ["fees.md"], "q3")]


def passages(question):
    """The first 40 words of two sample documents, and a Markdown table, as a retriever's hits."""
    text = lambda doc: " ".join((SAMPLE / doc).read_text(encoding="utf-8").split()[:40])  # noqa: E731
    return [{"doc_id": "deferment.md", "pages": [1], "text": text("deferment.md"), "score": 0.9},
            {"doc_id": "fees.md", "pages": [1], "text": TABLE, "score": 0.5}]


def judge(metric, question, reference, answer, sources):
    return (1.0 if reference.split()[0].lower() in answer.lower() else 0.0), f"{metric}: compared with the reference"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    where = str(tmp_path_factory.mktemp("plotting_runs"))
    ids = {"rag": run_evaluation(lambda q: (passages(q), "### Short answer\n\n| item | value |\n|---|---|\n"
                                            "| fee | $25 |"), QS, judge=judge, k=2, save_to=where, name="rag with tables")
           ["run_id"],
           "one": run_evaluation(lambda q: passages(q)[:1], QS, k=2, save_to=where, name="first hit only")["run_id"],
           "two": run_evaluation(passages, QS, k=2, save_to=where, name="both hits")["run_id"],
           "misses": retrieval_report(passages, QS, k=(1, 2), save_to=where)["run_id"]}
    return where, ids


def texts(fig):
    return [t for ax in fig.axes for t in ax.texts]


def test_text_colour_follows_the_background_luminance():
    assert text_on((255, 255, 255)) == "#000000" and text_on((0, 0, 0)) == "#ffffff"
    assert text_on((0.267, 0.005, 0.329), scale=1) == "#ffffff"  # viridis at 0: dark purple
    assert text_on((0.993, 0.906, 0.144), scale=1) == "#000000"  # viridis at 1: yellow
    for value in (0, 0.25, 0.5, 0.75, 1):  # the dashboard's cells name their text colour too
        assert heat_css(value).endswith(f"color: {text_on(heat_rgb(value))}")
    assert heat_css(None) == ""


def test_the_question_heatmap_has_a_colour_bar_and_legible_numbers(folder):
    from vectrixdb.plotting.heatmap import key_scores, question_heatmap

    report = load_run(folder[0], folder[1]["rag"])
    fig = question_heatmap(report)
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1 and "score (0-1)" in bars[0].get_ylabel()
    image = fig.axes[0].images[0]
    numbers = fig.axes[0].texts
    assert len(numbers) == report.frame[key_scores(report.frame)].notna().sum().sum() > 0
    for text in numbers:
        x, y = text.get_position()
        cell = image.cmap(image.norm(image.get_array()[int(y), int(x)]))
        assert matplotlib.colors.to_hex(text.get_color()) == text_on(cell, scale=1)


def test_the_tie_matrix_and_hit_heatmap_carry_colour_bars_and_text_readable_on_each_cell(folder):
    from vectrixdb.plotting import hit_heatmap, tie_matrix

    report = retrieval_report(lambda q: passages(q), QS, k=(1, 2))
    fig = hit_heatmap(report)
    bar = next(ax for ax in fig.axes if ax.get_label() == "<colorbar>")
    assert [t.get_text() for t in bar.get_yticklabels()] == ["missed", "found"]
    words = {t.get_text(): matplotlib.colors.to_hex(t.get_color()) for t in fig.axes[0].texts}
    assert words == {"no": "#ffffff", "yes": "#000000"}  # white on the dark red, black on the green

    docs = [str(SAMPLE / "deferment.md"), str(SAMPLE / "card-fraud.md")]
    chunking = compare_chunking(docs, QS[:2], budget=400, techniques=["recursive", "fixed"], sizes=[300],
                                headings=[False], progress=False)
    fig = tie_matrix(chunking)
    assert any(ax.get_label() == "<colorbar>" for ax in fig.axes)
    image = fig.axes[0].images[0]
    for text in fig.axes[0].texts:
        x, y = text.get_position()
        assert matplotlib.colors.to_hex(text.get_color()) == text_on(image.cmap(image.norm(float(text.get_text()))), 1)

    fig = chunking.plot()  # one size: a linear axis marked at that size, the points beside it
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and list(ax.get_xticks()) == [300]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["300"]
    low, high = ax.get_xlim()
    assert low < 300 < high and high - low <= 300
    assert all(low < x < high for line in ax.lines if not line.get_label().startswith("_") for x in line.get_xdata())


def test_the_forest_plot_names_the_runs(folder):
    where, ids = folder
    exp = compare_runs(ids["one"], ids["two"], folder=where)
    exp["a"], exp["b"] = ids["one"], ids["two"]  # what the dashboard does: the ids it was given
    title = exp.plot().axes[0].get_title()
    assert "B (both hits) against A (first hit only)" in title and ids["one"] not in title


def test_markdown_renders_to_headings_and_tables_and_escapes_html():
    from vectrixdb.present.markdown import excerpt, html

    out = html(TABLE)
    assert "<h3>Monthly fees by account</h3>" in out and "<table>" in out and "<td><strong>$25</strong></td>" in out
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<img" not in html("![a tracker](http://example.com/x.png)")
    assert 'href="javascript' not in html("[x](javascript:alert(1))")
    cut = excerpt("| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 100, limit=60)
    assert cut.endswith(" …") and all(line.startswith("|") for line in cut[:-2].splitlines())


def test_the_pdf_appendix_renders_markdown_and_shows_the_two_answers_apart(folder, tmp_path):
    from vectrixdb.export.files import export_run

    where, ids = folder
    path = export_run(ids["rag"], where, pdf=str(tmp_path / "rag.pdf"))[0]
    reader = PdfReader(path)
    text = "\n".join(page.extract_text() for page in reader.pages)
    appendix = text[text.index("Appendix: misses"):]
    assert "###" not in appendix and "|---" not in appendix and "| item |" not in appendix
    assert "Short answer" in appendix and "generated answer:" in appendix and "expected answer:" in appendix
    lines = appendix.splitlines()
    generated = lines.index("generated answer:")
    assert "expected answer:" in lines[generated + 1:] and "| expected:" not in appendix
    assert "colour key" in text and "undefined" in text  # the per-question table's key


def test_the_pdf_shows_a_missed_questions_passages_as_markdown(folder, tmp_path):
    from vectrixdb.export.files import export_run

    where, ids = folder
    path = export_run(ids["misses"], where, pdf=str(tmp_path / "misses.pdf"))[0]
    text = "\n".join(page.extract_text() for page in PdfReader(path).pages)
    appendix = text[text.index("Appendix: misses"):]
    assert "fees.md page 1:" in appendix and "Monthly fees by account" in appendix and "Everyday" in appendix
    assert "###" not in appendix and "|---" not in appendix and "| Everyday |" not in appendix
    assert "<script>alert('x')</script>" in appendix  # raw HTML in a passage prints as text


def test_a_long_run_s_heatmap_keeps_its_numbers_at_6_pt_or_more_in_the_pdf():
    """45 questions: the figure shows the first 40 (its title says so) at a size whose 7 pt
    numbers print at 6 pt or more once export.pdf fits the 100 dpi PNG to the page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import cm

    from vectrixdb.present.pdf import FIGURE_HEIGHT
    from vectrixdb.present.figures import DPI
    from vectrixdb.plotting.heatmap import question_heatmap

    many = [Question(f"{q.question} (variant {n})", q.reference, q.expected, f"{q.id}-{n}") for n in range(15) for q in QS]
    report = run_evaluation(passages, many, judge=judge, k=2)
    fig = question_heatmap(report)
    assert "first 40 of 45 questions" in fig.axes[0].get_title() and len(fig.axes[0].get_yticks()) == 40
    fig.canvas.draw()
    bbox = fig.get_tightbbox()  # what savefig(bbox_inches="tight") keeps, in inches
    w, h = bbox.width * DPI, bbox.height * DPI
    scale = min((A4[0] - 3 * cm) / w, FIGURE_HEIGHT / h, 72 / 100)  # export.pdf.image's rule, points per pixel
    sizes = {t.get_fontsize() for t in fig.axes[0].texts}
    assert sizes == {7} and 7 * DPI / 72 * scale >= 6, (w, h, scale)


def test_every_line_of_a_full_chunking_grid_looks_different_and_one_technique_is_said_not_drawn():
    """Six techniques with and without headings are twelve lines: matplotlib's default cycle has ten
    colours, so two lines once shared a colour and a dash. Each technique now has its colour, a heading
    build its dashes; a comparison of one technique says there is nothing to compare (no 1 x 1 matrix)."""
    from vectrixdb.plotting import tie_matrix

    docs = [str(SAMPLE / "deferment.md"), str(SAMPLE / "card-fraud.md")]
    grid = compare_chunking(docs, QS[:2], budget=400, sizes=[300], headings=[False, True], progress=False)
    lines = [line for line in grid.plot().axes[0].lines if not line.get_label().startswith("_")]
    assert len(lines) == 2 * len({t["name"] for t in grid["techniques"]}) >= 12
    looks = {(matplotlib.colors.to_hex(line.get_color()), line.get_linestyle()) for line in lines}
    assert len(looks) == len(lines)

    one = compare_chunking(docs, QS[:2], budget=400, techniques=["recursive"], sizes=[300], headings=[False],
                           progress=False)
    fig = tie_matrix(one)
    assert not fig.axes[0].images and "nothing to compare" in fig.axes[0].texts[0].get_text()


def test_a_long_verdict_title_wraps_between_words_and_is_never_cut_mid_word():
    """The embedders plot's title once ended "... leads on ndcg@10 (0.645) bu": cut at 90 characters."""
    from vectrixdb.evaluation.runs.report import Report
    from vectrixdb.plotting.studies import embedders_plot

    verdict = ("no best: all-MiniLM-L6-v2@fp32 leads on ndcg@10 (0.645) but these questions cannot tell it apart "
               "from all-MiniLM-L6-v2@int8, http://127.0.0.1:45843/v1#minilm (Holm-adjusted paired p >= 0.05)")
    rows = [{"name": n, "ndcg": 0.6, "ndcg low": 0.5, "ndcg high": 0.7, "query_p50_ms": 10.0 + i}
            for i, n in enumerate(("a", "b", "c"))]
    title = embedders_plot(Report("embedders", {"candidates": rows, "questions": 40, "verdict": verdict})).axes[0].get_title()
    lines = title.split("\n")
    assert 1 < len(lines) <= 3 and all(len(line) <= 100 for line in lines)
    assert " ".join(lines) == f"3 candidates, n = 40 questions: {verdict}"


def test_the_answers_plot_names_its_whole_judge():
    """The judge's name was cut at 40 characters ("answers judged by http://127.0.0.1:8090/v1#qwen2.5-co"):
    a served judge is named by its address and model, and the cut dropped the model."""
    from vectrixdb.evaluation.runs.report import Report
    from vectrixdb.plotting import answers_plot

    judge = "http://127.0.0.1:8090/v1#qwen2.5-coder-1.5b-instruct-q4_k_m"
    report = Report("answers", {"metrics": {"correctness": 0.5}, "ci": {"correctness": [0.4, 0.6]},
                                "judge": judge, "questions": 12})
    lines = answers_plot(report).axes[0].get_title().split("\n")
    assert " ".join(lines) == f"answers judged by {judge} (n=12)" and all(len(line) <= 60 for line in lines)
