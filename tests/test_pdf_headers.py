"""The certificate's table headers break only where a name may (issue 50.4): `ndcg_judged@1` in a
narrow per-question column printed as `ndcg_ju` / `dged@1`, since reportlab breaks a word too long
for its column anywhere. present/pdf.py's header_cells breaks after a space, an underscore or a
slash and before an @, and shrinks the header's font where a piece is still too wide."""
from __future__ import annotations

import io

import pytest

from vectrixdb.evaluation import Question, retrieval_report
from vectrixdb.present.pdf import SMALLEST, _styles, header_cells, name_pieces

NAMES = ["question", "ndcg_judged@1", "unjudged@1", "doc_precision@3", "bpref@100", "recall@1", "ndcg@5",
         "median_search_ms", "embed heading", "parent_child/1000/heading", "x"]


def _whole(name: str) -> set[str]:
    """The pieces of a name run together, as a line may hold them (an underscore may end one)."""
    pieces = name_pieces(name)
    runs = {"".join(pieces[i:j]).strip() for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1)}
    return runs | {r.rstrip("_") for r in runs}


def _cut_inside_a_word(text: str, names: list[str]) -> list[str]:
    """The words of `text` that are part of a column name but not whole pieces of any."""
    return sorted({t for t in text.split() if len(t) > 1 and any(t in n for n in names)
                   and not any(t in _whole(n) for n in names)})


def test_a_name_breaks_after_an_underscore_or_a_space_and_before_an_at():
    assert name_pieces("ndcg_judged@1") == ["ndcg_", "judged", "@1"]
    assert name_pieces("embed heading") == ["embed ", "heading"] and name_pieces("recall") == ["recall"]
    assert name_pieces("parent_child/1000/heading") == ["parent_", "child/", "1000/", "heading"]
    assert _cut_inside_a_word("ndcg_ju dged@1 0.500", ["ndcg_judged@1"]) == ["dged@1", "ndcg_ju"]
    assert _cut_inside_a_word("ndcg_ judged @1 unjudged@1", ["ndcg_judged@1", "unjudged@1"]) == []


@pytest.mark.parametrize("width", [42, 60, 120])  # a per-question column is about 42 points wide
def test_reportlab_breaks_no_header_further_than_its_pieces(width):
    st = _styles()
    cells = header_cells(NAMES, [width] * len(NAMES), st["small"])
    for name, cell in zip(NAMES, cells):
        lines = cell.text.split("<br/>")
        assert "".join(lines).replace(" ", "") == name.replace(" ", "")
        assert all(line.strip() in _whole(name) for line in lines), (name, lines)
        cell.wrap(width - 12, 1000)  # the room inside the cell's padding
        assert len(cell.blPara.lines) == len(lines), (name, lines, width)  # no break of reportlab's own
        assert cell.style.fontSize >= SMALLEST


def test_the_certificate_per_question_headers_are_not_cut_inside_a_word():
    from pypdf import PdfReader

    from vectrixdb.present.certificate import certificate, pdf_bytes

    graded = {"a": 1, "b": 0, "d": 0, "c": 2}  # grade 0 labels: the judged measures are computed
    questions = [Question(f"q{i}", None, graded, f"question-{i}") for i in range(4)]
    report = retrieval_report(lambda q: ["x", "b", "a", "y", "d", "c"], questions, k=(1, 3, 5))
    columns = certificate(report)["heatmap"]["columns"]
    assert any("_" in c and "@" in c for c in columns), columns  # a name like ndcg_judged@1 is among them
    pages = [p.extract_text() for p in PdfReader(io.BytesIO(pdf_bytes(report))).pages]
    text = next(t for t in pages if "Per-question scores" in t).split("Per-question scores", 1)[1]
    assert _cut_inside_a_word(text, columns) == []
