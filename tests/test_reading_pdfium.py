"""The pdfium reader (the default; $VECTRIXDB_PDF_READER=pypdf chooses pypdf's) on the real PDFs:
every page and every character of PDFium's own text kept, Markdown of pypdf's reader's shape
(headings, tables, two columns), the uber golden set's evidence on its pages; the variable's
dispatch, bad input, and threads reading at once."""
import io
from collections import Counter

import pypdfium2 as pdfium  # the pdf extra installs it: a missing one fails here, never skips
import pytest

from tests.conftest import PDFS, require
from vectrixdb.errors import BadInput
from vectrixdb.reading import read
from vectrixdb.reading.pdf import READER_ENV
from vectrixdb.reading.pdfium import read_pdf


#: What Markdown adds to a page's characters (heading marks, table pipes and rules, bullets' dashes,
#: an escaped pipe) and what it takes away (the bullet characters it turns into "- ").
_ADDED = set("#|-\\")
_BULLETS = set("•●▪◦‣∙·")


def _read(name: str):
    path = require(PDFS / name)
    return read_pdf(path.read_bytes(), doc_id=name, source=str(path))


@pytest.fixture(scope="module")
def uber():
    return _read("uber_2021.pdf")


@pytest.fixture(scope="module")
def lyft():
    return _read("lyft_2021.pdf")


def _plain_pages(name: str) -> list[str]:
    """PDFium's plain text of each page, its marks for a hyphen that ends a line (\\x02 in object
    text, \\ufffe in page text) read as the hyphen it is."""
    pdf = pdfium.PdfDocument(require(PDFS / name).read_bytes())
    try:
        return [pdf[i].get_textpage().get_text_range().replace("\x02", "-").replace("\ufffe", "-")
                for i in range(len(pdf))]
    finally:
        pdf.close()


def _letters(text: str) -> Counter:
    return Counter(c for c in text if not c.isspace())


@pytest.mark.parametrize("name", ["uber_2021.pdf", "lyft_2021.pdf", "multicolumn.pdf", "pdflatex-4-pages.pdf"])
def test_every_page_and_character_of_pdfiums_text_is_kept(name, request):
    """As many pages as pypdf counts, and on each page the non-space characters of PDFium's plain
    text, less only the bullets Markdown turns into "- ", plus only Markdown's marks."""
    from pypdf import PdfReader

    doc = request.getfixturevalue(name.split("_")[0]) if name.endswith("_2021.pdf") else _read(name)
    assert len(doc.pages) == len(PdfReader(str(require(PDFS / name))).pages)
    for number, plain in enumerate(_plain_pages(name), start=1):
        ours, theirs = _letters(doc.page_text(number)), _letters(plain)
        assert set(theirs - ours) <= _BULLETS, (number, theirs - ours)
        assert set(ours - theirs) <= _ADDED, (number, ours - theirs)


@pytest.mark.parametrize("name, page, heading", [
    ("uber_2021.pdf", 1, "# UBER TECHNOLOGIES, INC."),  # the largest size: the filing's cover
    ("uber_2021.pdf", 1, "## SECURITIES AND EXCHANGE COMMISSION"),  # the next size
    ("uber_2021.pdf", 6, "### ITEM 1. BUSINESS"),  # a short bold line in the body's size
    ("lyft_2021.pdf", 5, "### Our Mission"),
])
def test_headings_where_pypdfs_reader_finds_them(name, page, heading, request):
    """Headings checked by eye on both readers' output (scripts/reader_diff.py lists the others)."""
    doc = request.getfixturevalue(name.split("_")[0])
    assert heading in doc.page_text(page).split("\n")


def test_a_table_page_gives_a_markdown_table(uber):
    text = uber.page_text(77)  # the consolidated statements of operations
    assert "| Revenue | $ | 13,000 | $ | 11,139 | $ | 17,455 |" in text.split("\n")
    assert any(line.startswith("| --- |") for line in text.split("\n"))


@pytest.mark.parametrize("name, page, words", [
    ("uber_2021.pdf", 283, "1455 Market Street, 4th floor"),  # "th" is a superscript drawn after the line
    ("lyft_2021.pdf", 156, "do not apply to any Assigned Invention"),  # "gn" is drawn after the line
])
def test_text_drawn_later_is_put_where_it_stands(name, page, words, request):
    assert words in request.getfixturevalue(name.split("_")[0]).page_text(page)


def test_two_columns_read_left_column_first():
    doc = _read("multicolumn.pdf")
    text = doc.page_text(1)
    left, right = text.index("Lorem ipsum dolor sit amet"), text.index("molestie vitae, placerat a")
    assert left < right and "nissim rutrum." in text[left:right]  # the left column's last words come before


@pytest.mark.slow
def test_the_golden_sets_evidence_is_on_its_pages(uber):
    """Each of the 40 evidence quotes of data/golden/uber_2021.jsonl is on a page it is labelled
    with, found as `vectrixdb check` finds it (label_check.evidence_findings: case and whitespace
    folded, Markdown marks ignored)."""
    from pathlib import Path

    from vectrixdb.evaluation.golden.files import read_golden
    from vectrixdb.evaluation.golden.label_check import evidence_findings

    class Held:  # the two calls evidence_findings makes of a collection
        def documents(self):
            return [{"doc_id": "uber_2021.pdf"}]

        def document(self, doc_id):
            return uber

    questions = read_golden(str(Path(__file__).resolve().parent.parent / "data/golden/uber_2021.jsonl"))
    assert sum(len(q.evidence) for q in questions) == 40
    assert [f.message for f in evidence_findings(questions, Held())] == []


def test_the_variable_chooses_the_reader(monkeypatch):
    """Unset, empty or `pdfium`: this reader (PDFium gives "fi" for multicolumn.pdf's "ﬁ" ligature);
    `pypdf`: pypdf's reader (which keeps the ligature); anything else: BadInput naming the variable
    and the allowed values, the default first."""
    path = str(require(PDFS / "multicolumn.pdf"))
    for value in (None, "", " pdfium "):
        if value is None:
            monkeypatch.delenv(READER_ENV, raising=False)
        else:
            monkeypatch.setenv(READER_ENV, value)
        doc = read(path)
        assert "filled" in doc.page_text(1) and doc.markdown == _read("multicolumn.pdf").markdown
    monkeypatch.setenv(READER_ENV, "pypdf")
    assert "ﬁlled" in read(path).page_text(1)
    monkeypatch.setenv(READER_ENV, "pymupdf")
    with pytest.raises(BadInput, match=f"{READER_ENV}='pymupdf'.*pdfium, pypdf"):
        read(path)


def _encrypted(user_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(str(require(PDFS / "pdflatex-4-pages.pdf"))))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("data, says", [(b"", "empty"), (b"not a pdf at all" * 10, "not a readable PDF"),
                                        ("encrypted", "encrypted")])
def test_bad_bytes_raise_bad_input_naming_the_source(data, says):
    data = _encrypted("secret") if data == "encrypted" else data
    with pytest.raises(BadInput, match=f"^in/report.pdf: .*{says}"):
        read_pdf(data, doc_id="report.pdf", source="in/report.pdf")


def test_an_empty_user_password_is_opened():
    doc = read_pdf(_encrypted(""), doc_id="open.pdf")
    assert len(doc.pages) == 4 and "Hello, here is some text" in doc.page_text(1)


def test_text_in_a_form_xobject_and_rotated_text_are_read_where_they_stand():
    """Text drawn by a form XObject is placed by the form's matrix (here on the line of the text
    left of it); rotated text is kept (pypdf's layout mode drops it)."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out, pagesize=(612, 792))
    page.beginForm("stamp")
    page.setFont("Helvetica", 10)
    page.drawString(0, 0, "Drawn by a form")
    page.endForm()
    page.setFont("Helvetica", 10)
    page.drawString(72, 720, "First line.")
    page.saveState()
    page.translate(300, 600)
    page.doForm("stamp")
    page.restoreState()
    page.drawString(72, 600, "Left of the form")
    page.saveState()
    page.translate(550, 400)
    page.rotate(90)
    page.drawString(0, 0, "Rotated note")
    page.restoreState()
    page.drawString(72, 500, "Last line.")
    page.showPage()
    page.save()
    lines = read_pdf(out.getvalue(), doc_id="form.pdf").page_text(1).split("\n")
    assert lines[:3] == ["First line.", "Left of the form Drawn by a form", "Last line."]
    assert "Rotated note" in lines


def test_threads_reading_at_once_get_what_one_reads_alone(uber):
    """PDFium is not thread-safe: four threads reading PDFs at once (two 10-Ks, two small ones)
    take turns, and each gets the document it gets alone."""
    from concurrent.futures import ThreadPoolExecutor

    names = ["lyft_2021.pdf", "multicolumn.pdf", "uber_2021.pdf", "pdflatex-4-pages.pdf"] * 2
    alone = {name: (uber if name == "uber_2021.pdf" else _read(name)) for name in set(names)}
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(_read, names))
    assert [doc.markdown for doc in together] == [alone[name].markdown for name in names]
