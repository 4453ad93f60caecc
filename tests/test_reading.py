"""Reading: text, Markdown and real PDFs into pages of Markdown; quality flags; bad input."""
import pytest

from tests.conftest import PDFS, require
from vectrixdb.reading import read
from vectrixdb.reading.pdf import READER_ENV, READERS
from vectrixdb.reading.quality import assess


@pytest.fixture(scope="module")
def uber(uber_10k):  # one read of the filing per run, shared with test_chunking (conftest)
    return uber_10k


@pytest.fixture(scope="module")
def lyft():
    return read(str(require(PDFS / "lyft_2021.pdf")))


@pytest.fixture
def pypdf_reader(monkeypatch):
    """PDFs read by the pypdf reader (VECTRIXDB_PDF_READER=pypdf): the tests of its reading processes."""
    monkeypatch.setenv(READER_ENV, "pypdf")


@pytest.fixture(params=READERS)
def reader(request, monkeypatch):
    """Each PDF reader in turn, the default first: what every reader must do."""
    monkeypatch.setenv(READER_ENV, request.param)
    return request.param


def test_text_and_markdown_keep_their_text():
    doc = read("# Title\n\nBody text.\fSecond page.", doc_id="d")
    assert doc.markdown == "# Title\n\nBody text.\n\nSecond page."
    assert [p.number for p in doc.pages] == [1, 2] and doc.page_text(2) == "Second page."


def test_a_file_gets_its_name_as_doc_id(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nHello.\r\n")
    doc = read(str(path))
    assert doc.doc_id == "notes.md" and doc.markdown == "# Notes\n\nHello.\n"


@pytest.mark.slow
def test_the_10ks_are_read_in_full_every_page_numbered(uber, lyft):
    assert len(uber.pages) == 307 and len(lyft.pages) == 238
    for doc in (uber, lyft):
        assert [p.number for p in doc.pages] == list(range(1, len(doc.pages) + 1))
        assert all(doc.markdown[p.start : p.end] == doc.page_text(p.number) for p in doc.pages)


@pytest.mark.slow
@pytest.mark.parametrize("page, words", [
    (10, "approximately 29,300 employees globally"),
    (12, "Our principal executive offices are located at 1515 3rd Street"),
    (53, "| Trips (2) | 5,025 | 6,368 |"),
    (77, "| Revenue | $ | 13,000 | $ | 11,139 | $ | 17,455 |"),
])
def test_uber_facts_are_on_the_page_a_viewer_shows(uber, page, words):
    assert words in uber.page_text(page)
    assert all(words not in uber.page_text(n) for n in (page - 1, page + 1))


@pytest.mark.parametrize("name, pages", [pytest.param("uber_2021.pdf", [0, 9, 52, 76, 120], marks=pytest.mark.slow),
                                         ("multicolumn.pdf", None),
                                         ("pdflatex-4-pages.pdf", None)])
def test_one_parse_of_a_page_reads_what_pypdfs_two_public_calls_read(name, pages):
    """The reader parses each page's content stream once for both of its passes (the speed-up);
    its layout text and styled runs are exactly those of extract_text(extraction_mode="layout")
    and of the visitor pass on a fresh reader: a filing's cover, prose and table pages, two
    columns, a pdflatex paper."""
    from pypdf import PdfReader

    from vectrixdb.reading.pdf import _read_page, _styles

    path = str(require(PDFS / name))
    ours, theirs = PdfReader(path), PdfReader(path)
    for i in pages if pages is not None else range(len(ours.pages)):
        text, runs = _read_page(ours.pages[i])
        assert text == theirs.pages[i].extract_text(extraction_mode="layout") and text.strip()
        assert runs == _styles(PdfReader(path).pages[i]) and runs


@pytest.mark.slow
def test_page_numbers_agree_with_an_independent_reader(uber):
    import pdfplumber

    with pdfplumber.open(str(PDFS / "uber_2021.pdf")) as pdf:
        assert "29,300" in pdf.pages[9].extract_text()  # 0-based index 9 = page 10
        assert "1515 3rd Street" in pdf.pages[11].extract_text()


@pytest.mark.slow
def test_headings_and_tables_are_recovered(uber, lyft):
    assert "### Employees" in uber.page_text(10)
    assert "| --- |" in uber.page_text(77)
    assert "185 Berry Street" in lyft.page_text(1)


@pytest.mark.slow
def test_a_page_without_text_is_flagged_not_fatal(lyft):
    page = lyft.pages[166]
    assert page.flags == ("empty",) and page.score == 0.0
    assert any("no text layer" in n and "167" in n for n in lyft.notes)
    assert "contents" in lyft.pages[1].flags  # the table of contents


def test_quality_flags():
    assert assess("") == (("empty",), 0.0)
    assert "contents" in assess("Table of Contents\nPart I 3\nItem 1 4\nItem 2 9\nItem 3 11\nItem 4 12")[0]
    assert "numbers" in assess(" ".join(["12,345", "(6.7)", "$", "89%"] * 10))[0]
    assert "caption" in assess("Figure 3: revenue by segment")[0]
    assert "scrap" in assess("Page 4")[0]
    assert "garbled" in assess("\ufffd\ufffd\ufffd\ufffd xk zq \ufffd" * 5)[0]
    flags, score = assess("A normal paragraph of text. " * 20)
    assert flags == () and score == 1.0


def test_small_pdfs(tmp_path, reader):
    latex = read(str(require(PDFS / "pdflatex-4-pages.pdf")))
    assert len(latex.pages) == 4 and latex.doc_id == "pdflatex-4-pages.pdf"
    assert all(p.score > 0 for p in latex.pages)
    two = read(str(require(PDFS / "multicolumn.pdf")))
    assert len(two.pages) == 3 and two.markdown.strip()


def test_bad_pdfs_are_named(tmp_path, reader):
    from pypdf import PdfReader, PdfWriter

    zero = tmp_path / "zero.pdf"
    zero.write_bytes(b"")
    with pytest.raises(ValueError, match="zero.pdf: the file is empty"):
        read(str(zero))
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes((PDFS / "pdflatex-4-pages.pdf").read_bytes()[:3000])
    with pytest.raises(ValueError, match="truncated.pdf: not a readable PDF"):
        read(str(truncated))
    writer = PdfWriter()
    for p in PdfReader(str(PDFS / "pdflatex-4-pages.pdf")).pages:
        writer.add_page(p)
    writer.encrypt("secret")
    locked = tmp_path / "locked.pdf"
    with open(locked, "wb") as fh:
        writer.write(fh)
    with pytest.raises(ValueError, match="locked.pdf: the PDF is encrypted"):
        read(str(locked))


def _write_pdf(path, pages, password: str | None = None):
    """A PDF of these pypdf pages at `path`, encrypted when a password is given (the owner's is set)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for page in pages:
        writer.add_page(page)
    if password is not None:
        writer.encrypt(user_password=password, owner_password="the owner's")
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


@pytest.mark.usefixtures("pypdf_reader")
def test_a_long_pdf_read_by_several_processes_is_the_one_process_document(tmp_path, monkeypatch):
    """A PDF of PROCESSES_FROM pages or more is read by child processes, pages dealt out in turn; the
    Document is the one read in one process, page for page (headings need the whole file's font
    sizes, which are gathered after the pages come back). 60 of uber_2021's pages, prose and tables,
    to 3 processes."""
    from vectrixdb.reading import pdf

    from pypdf import PdfReader

    path = str(_write_pdf(tmp_path / "uber_60.pdf", PdfReader(str(require(PDFS / "uber_2021.pdf"))).pages[40:100]))
    used = []
    real = pdf._read_in_processes
    monkeypatch.setattr(pdf, "_read_in_processes", lambda *a: used.append(a[2]) or real(*a))
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "1")
    one = read(path)
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "3")
    many = read(path)
    assert used == [3] and len(one.pages) == 60 and any("| --- |" in one.page_text(p.number) for p in one.pages)
    assert many.markdown == one.markdown and many.pages == one.pages and many.notes == one.notes


def test_what_a_reading_process_raises_is_raised_here():
    """A child that cannot read a page sends back what it raised, and the reader raises it (so
    read() turns it into BadInput naming the file, as in one process); the other child's pages are
    not returned half. Asked for 6 pages of a 4-page PDF: the child given pages 1, 3, 5 fails on page 5."""
    from vectrixdb.reading import pdf

    data = require(PDFS / "pdflatex-4-pages.pdf").read_bytes()
    assert len(pdf._read_in_processes(data, 4, 2, None)) == 4
    with pytest.raises(IndexError):
        pdf._read_in_processes(data, 6, 2, None)


def _long_pdf(path, password: str | None = None):
    """PROCESSES_FROM + 4 pages (the pdflatex paper's 4, over and over), encrypted when a password is given."""
    from pypdf import PdfReader

    from vectrixdb.reading import pdf

    source = PdfReader(str(require(PDFS / "pdflatex-4-pages.pdf")))
    return _write_pdf(path, [source.pages[i % 4] for i in range(pdf.PROCESSES_FROM + 4)], password)


@pytest.mark.usefixtures("pypdf_reader")
def test_a_long_pdf_that_opens_with_no_password_is_read_by_processes_too(tmp_path, monkeypatch):
    """Encrypted with an empty user password (a viewer opens it without asking): each child
    decrypts its own copy, and the document is the one-process document."""
    from vectrixdb.reading import pdf

    path = str(_long_pdf(tmp_path / "locked_open.pdf", password=""))
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "1")
    one = read(path)
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "2")
    two = read(path)
    assert len(one.pages) == pdf.PROCESSES_FROM + 4 and two.markdown == one.markdown and two.pages == one.pages
    assert one.page_text(1).strip()


@pytest.mark.usefixtures("pypdf_reader")
def test_of_two_bad_pages_the_first_is_the_one_refused_as_in_one_process(tmp_path, monkeypatch):
    """Pages 4 and 5 are broken, and page 2 is slow, so the child given pages 1, 3, 5, ... meets
    page 5 long before the other child reaches page 4: the refusal still names page 4's error, the
    one a single process meets first (that child keeps reading until it is past page 4)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DecodedStreamObject, NameObject

    from vectrixdb.errors import BadInput
    from vectrixdb.reading import pdf

    source, writer = PdfReader(str(require(PDFS / "pdflatex-4-pages.pdf"))), PdfWriter()
    for i in range(pdf.PROCESSES_FROM):
        writer.add_page(source.pages[i % 4])
    for i, data in ((1, b"BT /F1 10 Tf " + b"1 0 Td (a slow page) Tj " * 20000 + b"ET"),
                    (3, b"BT (page four) Tj ] ET"), (4, b"BT (page five) Tj } ET")):
        stream = DecodedStreamObject()
        stream.set_data(data)
        writer.pages[i][NameObject("/Contents")] = writer._add_object(stream)
    path = tmp_path / "two_bad.pdf"
    with open(path, "wb") as fh:
        writer.write(fh)
    refusals = []
    for processes in ("1", "2"):
        monkeypatch.setenv(pdf.READ_PROCESSES_ENV, processes)
        with pytest.raises(BadInput, match="two_bad.pdf: not a readable PDF") as refused:
            read(str(path))
        refusals.append(str(refused.value))
    assert "page four" in refusals[0] and refusals[1] == refusals[0]


@pytest.mark.usefixtures("pypdf_reader")
def test_a_module_in_the_working_folder_is_not_run_by_the_reading_processes(tmp_path):
    """The children run isolated with the parent's import path: a `secrets.py` (a standard library
    name) or another `vectrixdb` in the folder a script is run from is not what they import, so no
    warning and the same pages. (Run as a script from another folder, as a user would.)"""
    import os
    import subprocess
    import sys

    from vectrixdb.reading import pdf

    work = tmp_path / "work"
    (work / "vectrixdb").mkdir(parents=True)
    (work / "secrets.py").write_text("print('this is not a pickle')\n")
    (work / "vectrixdb" / "__init__.py").write_text("raise SystemExit('the wrong vectrixdb')\n")
    script = tmp_path / "bin" / "read_it.py"
    script.parent.mkdir()
    script.write_text("import sys, warnings\nwarnings.simplefilter('error', RuntimeWarning)\n"
                      "from vectrixdb.reading import read\nprint(len(read(sys.argv[1]).pages))\n")
    path = _long_pdf(tmp_path / "long.pdf")
    done = subprocess.run([sys.executable, str(script), str(path)], cwd=work, capture_output=True, text=True,
                          env={**os.environ, pdf.READ_PROCESSES_ENV: "2"}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(pdf.PROCESSES_FROM + 4)]


@pytest.mark.usefixtures("pypdf_reader")
@pytest.mark.parametrize("interpreter", ["/bin/false", "/nonexistent/python3"])
def test_reading_processes_that_cannot_run_leave_the_file_read_here(tmp_path, monkeypatch, interpreter):
    """A child that cannot start, or ends without a word (here: an interpreter that is not there,
    or one that exits at once), is not the file's fault: one warning saying so, and the file is
    read in this process, the same document."""
    import sys

    from vectrixdb.reading import pdf

    path = _long_pdf(tmp_path / "long.pdf")
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "1")
    here = read(str(path))
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "2")
    monkeypatch.setattr(sys, "executable", interpreter)
    with pytest.warns(RuntimeWarning, match="long.pdf: reading in 2 processes failed .*reading it in this process"):
        again = read(str(path))
    assert again.markdown == here.markdown and again.pages == here.pages


def test_how_many_processes_read_a_pdf(monkeypatch):
    """One below PROCESSES_FROM pages or in a frozen app; else one per core, at most 8, at least
    20 pages each; $VECTRIXDB_READ_PROCESSES overrides the count (20 pages each still holds), and a
    value that is not a whole number of 1 or more is refused."""
    import os
    import sys

    from vectrixdb.errors import BadInput
    from vectrixdb.reading import pdf

    monkeypatch.delenv(pdf.READ_PROCESSES_ENV, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    assert [pdf.read_processes(n) for n in (1, pdf.PROCESSES_FROM - 1, pdf.PROCESSES_FROM, 100, 307, 5000)] == \
        [1, 1, 2, 5, 8, 8]
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert pdf.read_processes(307) == 1
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "3")
    assert pdf.read_processes(307) == 3 and pdf.read_processes(10) == 1
    monkeypatch.setenv(pdf.READ_PROCESSES_ENV, "40")
    assert pdf.read_processes(40) == 2 and pdf.read_processes(5000) == 40
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a PyInstaller app: sys.executable is the app
    assert pdf.read_processes(5000) == 1
    monkeypatch.delattr(sys, "frozen")
    for bad in ("0", "-2", "two", "1.5", "\u00b2", " 3x"):
        monkeypatch.setenv(pdf.READ_PROCESSES_ENV, bad)
        with pytest.raises(BadInput, match="VECTRIXDB_READ_PROCESSES"):
            pdf.read_processes(307)


def test_a_scanned_pdf_gets_a_note_and_a_poor_score(tmp_path, reader):
    from PIL import Image

    scan = tmp_path / "scan.pdf"
    Image.new("RGB", (200, 280), "white").save(scan, "PDF")
    doc = read(str(scan))
    assert doc.pages[0].flags == ("empty",) and doc.pages[0].score == 0.0 and "no text layer" in doc.notes[0]


@pytest.mark.slow
def test_one_ten_megabyte_line(db):
    line = ("word " * 2_000_000)[:10_000_000]
    doc = read(line, doc_id="long")
    assert len(doc.markdown) == len(line.rstrip()) or len(doc.markdown) == len(line)
    from vectrixdb.chunking import chunk_document

    chunks = chunk_document(doc, "fixed", chunk_size=2000, overlap=0)
    assert sum(len(c.text) for c in chunks) >= 9_990_000 and max(len(c.text) for c in chunks) <= 2000


def test_two_columns_are_read_one_after_the_other(reader):
    doc = read(str(require(PDFS / "multicolumn.pdf")))
    text = " ".join(doc.page_text(1).split())
    left = text.index("This is a sample document with two columns")
    assert left < text.index("Lorem ipsum dolor sit amet") < text.index("molestie vitae, placerat a")
    assert "|" not in doc.page_text(1)


def test_the_rule_between_text_and_a_path(tmp_path, monkeypatch):
    from vectrixdb.reading import looks_like_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "README").write_text("a file without a suffix")
    paths = ["report.docx", "data/sample", "notes.md", "my notes.md", "s3://bucket/key.pdf", "C:\\docs\\a",
             "README", str(tmp_path)]
    texts = ["Hello world.", "Revenue grew 5.5 percent", "v2.0", "hello", "a sentence/with a slash and spaces",
             "two\nlines.md", "x" * 1100 + ".md", ""]
    assert [p for p in paths if not looks_like_path(p)] == []
    assert [t for t in texts if looks_like_path(t)] == []


def test_reading_refuses_what_it_cannot_read(tmp_path):
    import os

    from vectrixdb.errors import BadInput, NotFound, Unsupported

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "slides.pptx").write_bytes(b"PK")
    with pytest.raises(BadInput, match="FIFO"):
        read(str(tmp_path / "fifo"))  # refused without opening it (that would block)
    with pytest.raises(BadInput, match="is a folder"):
        read(tmp_path)
    with pytest.raises(Unsupported, match="pptx"):
        read(str(tmp_path / "slides.pptx"))
    with pytest.raises(NotFound, match="gone.txt: no such file"):
        read(str(tmp_path / "gone.txt"))
    with pytest.raises(BadInput, match="not UTF-8"):
        read(b"\xff\xfe\xfa")


def test_a_file_without_a_suffix_is_read_as_text(tmp_path):
    (tmp_path / "LICENSE").write_text("Permission is hereby granted.")
    doc = read(tmp_path / "LICENSE")
    assert doc.doc_id == "LICENSE" and doc.markdown == "Permission is hereby granted."
    assert read("Plain text.").doc_id == read("Plain text.").doc_id != read("Other text.").doc_id


def test_every_unreadable_pdf_is_bad_input(tmp_path, reader):
    """The edge's one error family: any cut of a real PDF, garbage named .pdf, or a %PDF- header
    followed by noise is either read or refused with BadInput naming the file, never another error."""
    from vectrixdb.errors import BadInput, VectrixError

    data = (PDFS / "pdflatex-4-pages.pdf").read_bytes()
    cases = {f"cut{n}.pdf": data[:n] for n in (5, 100, 1000, 3000, len(data) // 2, len(data) - 200)}
    cases.update({"garbage.pdf": bytes(range(256)) * 40, "header.pdf": b"%PDF-1.7\n" + b"\x00\xff" * 500,
                  "noext": b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>"})
    refused = 0
    for name, body in cases.items():
        (tmp_path / name).write_bytes(body)
        try:
            doc = read(str(tmp_path / name))
        except BadInput as exc:
            assert isinstance(exc, VectrixError) and str(exc).startswith(str(tmp_path / name))
            refused += 1
        else:
            assert doc.pages  # what the reader could recover is a document with pages
    assert refused >= 6  # the cut-short files and the garbage at least


def test_a_latin1_golden_file_is_bad_input(tmp_path):
    from vectrixdb.errors import BadInput
    from vectrixdb.evaluation import check_golden, load_questions

    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"question": "Où est la clé ?", "expected": ["d"]}\n'.encode("latin-1"))
    with pytest.raises(BadInput, match=r"latin1.jsonl, line 1: not UTF-8"):
        load_questions(str(path))
    check = check_golden(str(path))  # the check lists it as a finding instead of raising
    assert not check.ok and "not UTF-8" in check.summary()
