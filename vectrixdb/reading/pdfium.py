"""PDF pages to Markdown with pypdfium2 (PDFium, BSD/Apache licences): the default PDF reader.

vectrixdb.reading.pdf.read_pdf dispatches here unless $VECTRIXDB_PDF_READER=pypdf. The Markdown has
the same shape as pypdf's reader: each page gives a fixed-width layout text and styled runs
`(text, size, heavy)`, and `layout.pages_document` turns them into Markdown by the same rules
(headings by size or bold, tables, two columns, bullets, page boundaries, notes).

The rules of this reader:
- PDFium parses each page in C. Python sees one record per text object (one per text-showing
  operator, Tj or TJ, also inside form XObjects): its text, baseline origin, right edge, font size
  (times the vertical scale of its matrix, as pypdf's runs) and font name, a few ctypes calls per
  object and never one per character.
- Objects are joined into groups (`_groups`): an object next to the one before it in the content
  (less than a font size up or down, less than 3 space widths right of its end, a space taken as a
  quarter of the font size) joins its group, as pypdf joins the strings of one text block; then a
  group that starts inside, or within 3 space widths after, another on its baseline joins it where
  it stands (superscripts, glyphs drawn later). Gaps inside a group become as many spaces as fit.
  A group is what pypdf's layout mode lays out: its own functions group them by baseline, take a
  fixed character width from them and put each group at its column, so wide gaps stay 3+ spaces
  (table cells, columns) as in pypdf's output.
- A run is an object's text with its spaces collapsed; it is heavy when its font's name says bold,
  black, heavy or semibold (as pypdf's reader).
- Rotated text is kept (pypdf's layout mode drops it): no character of PDFium's text is lost.
- A page with no characters is an empty page (noted as a scan by pages_document).
The whole file is read in this process, a page costing about 4 ms of CPU. PDFium is not thread-safe
(no two calls at once, even on different documents), so one file is read at a time per process:
threads that read PDFs at once take turns.
"""
from __future__ import annotations

import ctypes
import math
import threading
from typing import Any

from vectrixdb.errors import BadInput
from vectrixdb.extras import needs
from vectrixdb.reading.document import Document
from vectrixdb.reading.layout import collapse, pages_document

#: A line set in a heading size is a heading up to this many characters (pypdf's reader: 120). PDFium's
#: runs are whole text objects, so a full line of an exhibit set larger than the filing's body text
#: matches its run (pypdf's runs split such lines and rarely match); a heading is rarely this long.
HEADING_CHARS = 80
_HEAVY = ("bold", "black", "heavy", "semibold")
_JOIN_SPACES = 3  # objects closer than this many space widths on one baseline are one group
#: PDFium's text marks a hyphen that ends a line as \x02; line breaks and NULs inside an object are spaces
_CONTROLS = str.maketrans({"\x02": "-", "\x00": None, "\r": " ", "\n": " "})

Matrix = tuple[float, float, float, float, float, float]
_PDFIUM = threading.Lock()  # held while PDFium reads a file: it is not thread-safe


def _compose(inner: Matrix, outer: Matrix) -> Matrix:
    """The matrix of `inner` followed by `outer` (PDF row-vector convention)."""
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F)


class _PageReader:
    """Reads the text objects of pages with PDFium's raw calls, reusing its ctypes buffers."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.matrix = raw.FS_MATRIX()
        self.size = ctypes.c_float()
        self.box = [ctypes.c_float() for _ in range(4)]
        self.name = ctypes.create_string_buffer(256)
        self.text = (ctypes.c_ushort * 1)()
        self.fonts: dict[int | None, bool] = {}
        #: the font handle's address, as a plain int (a cache key without a ctypes cast per object)
        self.font_key = ctypes.cast(raw.FPDFTextObj_GetFont, ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p))

    def page(self, page: Any, textpage: Any, chars: int) -> tuple[str, list[tuple[str, float, bool]]]:
        """A page's layout text and styled runs."""
        if len(self.text) < 2 * chars + 64:
            self.text = (ctypes.c_ushort * (2 * chars + 64))()
        self.fonts = {}  # font handles belong to a page's data: not kept across pages
        raw = self.raw
        records: list[tuple[float, float, float, float, float, str]] = []
        runs: list[tuple[str, float, bool]] = []
        self._walk(textpage, raw.FPDFPage_CountObjects(page), lambda k: raw.FPDFPage_GetObject(page, k),
                   None, records, runs)
        return _layout(records), runs

    def _walk(self, textpage: Any, count: int, get: Any, outer: Matrix | None, records: list, runs: list) -> None:
        raw = self.raw
        for k in range(count):
            obj = get(k)
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_TEXT:
                self._text_object(textpage, obj, outer, records, runs)
            elif kind == raw.FPDF_PAGEOBJ_FORM:
                m = self.matrix
                raw.FPDFPageObj_GetMatrix(obj, m)
                form: Matrix = (m.a, m.b, m.c, m.d, m.e, m.f)
                self._walk(textpage, raw.FPDFFormObj_CountObjects(obj),
                           lambda j, obj=obj: raw.FPDFFormObj_GetObject(obj, j),
                           form if outer is None else _compose(form, outer), records, runs)

    def _text_object(self, textpage: Any, obj: Any, outer: Matrix | None, records: list, runs: list) -> None:
        raw, buf = self.raw, self.text
        got = raw.FPDFTextObj_GetText(obj, textpage, buf, ctypes.sizeof(buf))
        if got > ctypes.sizeof(buf):  # more than the page's characters (line feeds added): a larger buffer
            self.text = buf = (ctypes.c_ushort * (got // 2 + 1))()
            got = raw.FPDFTextObj_GetText(obj, textpage, buf, ctypes.sizeof(buf))
        if got <= 2:
            return
        text = ctypes.string_at(buf, got - 2).decode("utf-16-le", "replace").replace("\r\n", " ").translate(_CONTROLS)
        text = text.rstrip(" ")  # PDFium's space after an object (often its own): its gap is measured instead
        if not text.strip():
            return
        m = self.matrix
        raw.FPDFPageObj_GetMatrix(obj, m)
        matrix: Matrix = (m.a, m.b, m.c, m.d, m.e, m.f)
        left, bottom, right, top = self.box
        raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top)
        x1 = right.value
        if outer is not None:
            x1 = _compose((1, 0, 0, 1, right.value, matrix[5]), outer)[4]
            matrix = _compose(matrix, outer)
        raw.FPDFTextObj_GetFontSize(obj, self.size)
        size = self.size.value * math.hypot(matrix[1], matrix[3])
        key = self.font_key(obj)
        heavy = self.fonts.get(key)
        if heavy is None:
            font = raw.FPDFTextObj_GetFont(obj)
            length = raw.FPDFFont_GetBaseFontName(font, self.name, len(self.name)) if font else 0
            name = self.name.value.decode("latin-1").lower() if 0 < length <= len(self.name) else ""
            heavy = self.fonts[key] = any(w in name for w in _HEAVY)
        flip = -1.0 if matrix[3] < 0 else 1.0
        records.append((matrix[4], matrix[5] * flip, max(x1, matrix[4]), size, flip, text))
        runs.append((collapse(text), round(size, 1), heavy))


Part = tuple[float, float, float, str]  # an object's x, right edge, font size and text


def _join(parts: list[Part]) -> str:
    """One group's text: its objects in order, each gap holding as many spaces as fit (a space
    taken as a quarter of the font size), one less when either side already has a space there."""
    text, end = parts[0][3], parts[0][1]
    for x, right, size, piece in parts[1:]:
        spaces = max(0, round((x - end) / (size / 4 or 1.0)))
        if text.endswith(" ") or piece.startswith(" "):
            spaces = max(0, spaces - 1)
        text += " " * spaces + piece
        end = max(end, right)
    return text


def _groups(records: list[tuple[float, float, float, float, float, str]]) -> list[dict[str, Any]]:
    """The groups pypdf's layout functions lay out, from a page's text objects in content order.

    1. An object less than a font size above or below the last one, and from 5 space widths left
       of its end to less than _JOIN_SPACES space widths right of it, joins its group (pypdf joins
       the strings of one text block so).
    2. Then, left to right, a group that starts inside another group on its line (baselines less
       than half a font size apart), or less than _JOIN_SPACES space widths after its end, joins
       it at its place: a superscript ("4" "th" " floor") or a glyph drawn later ("Assi" "gn"
       "ed") is put where it stands, not after the line.
    """
    staged: list[dict[str, Any]] = []
    for x, y, right, size, flip, text in records:
        last = staged[-1] if staged else None
        if last is not None and abs(last["ty"] - y) <= size and last["flip_sort"] == flip:
            if -5 * size / 4 <= x - last["displaced_tx"] < _JOIN_SPACES * size / 4:
                last["parts"].append((x, right, size, text))
                last["displaced_tx"] = max(right, last["displaced_tx"])
                continue
        staged.append({"tx": x, "ty": y, "font_size": size, "font_height": size, "displaced_tx": right,
                       "flip_sort": flip, "parts": [(x, right, size, text)]})
    kept: list[dict[str, Any]] = []
    rightmost: dict[tuple[float, int], dict[str, Any]] = {}  # (flip, whole point of baseline) -> its line's rightmost group
    for group in sorted(staged, key=lambda g: g["tx"]):
        y, size, reach = group["ty"], group["font_size"], int(group["font_size"] / 2) + 1
        host = None
        for key in ((group["flip_sort"], round(y) + d) for d in range(-reach, reach + 1)):
            other = rightmost.get(key)
            if (other is not None and abs(other["ty"] - y) < max(size, other["font_size"]) / 2
                    and group["tx"] < other["displaced_tx"] + _JOIN_SPACES * size / 4):
                host = other
                break
        if host is None:
            kept.append(group)
            rightmost[(group["flip_sort"], round(y))] = group
            continue
        parts = host["parts"]
        at = max((i + 1 for i, part in enumerate(parts) if part[0] <= group["tx"]), default=0)
        parts[at:at] = group["parts"]
        host["displaced_tx"] = max(host["displaced_tx"], group["displaced_tx"])
    for group in kept:
        group["text"] = _join(group.pop("parts"))
    return kept


def _layout(records: list[tuple[float, float, float, float, float, str]]) -> str:
    """A page's fixed-width text from its text objects `(x, y, right, size, flip, text)` in content
    order (y already times flip): objects are joined into groups (`_groups`), then laid out by
    pypdf's layout-mode functions with its defaults (character width weight 1.25, blank lines from
    vertical gaps at a font height's weight of 1)."""
    with needs("pdf"):
        from pypdf._text_extraction._layout_mode import fixed_char_width, fixed_width_page, y_coordinate_groups
    groups = _groups(records)
    if not groups:
        return ""
    groups.sort(key=lambda g: (g["ty"], -g["tx"]), reverse=True)  # top to bottom, left to right (as pypdf)
    min_x = min(g["tx"] for g in groups)
    for g in groups:
        g["tx"] -= min_x
        g["displaced_tx"] -= min_x
    return fixed_width_page(y_coordinate_groups(groups), fixed_char_width(groups, 1.25), True, 1)  # type: ignore[arg-type]


def read_pdf(data: bytes, *, doc_id: str, source: str | None = None) -> Document:
    """A PDF's pages as Markdown, read with PDFium in this process. An empty file, bytes PDFium
    cannot open, or a PDF encrypted with a password other than the empty one raise BadInput naming
    the source; a page without text is kept empty and noted."""
    with needs("pdf"):
        import pypdfium2 as pdfium  # type: ignore[import-untyped]
        import pypdfium2.raw as raw  # type: ignore[import-untyped]

    where = source or doc_id
    if not data:
        raise BadInput(f"{where}: the file is empty (0 bytes)")
    with _PDFIUM:
        pages = _read_pages(pdfium, raw, data, where)
    if not pages:
        raise BadInput(f"{where}: the PDF has no pages")
    return pages_document(pages, doc_id, source, HEADING_CHARS)


def _read_pages(pdfium: Any, raw: Any, data: bytes, where: str) -> list[tuple[str, list[tuple[str, float, bool]]]]:
    """Every page's layout text and runs; BadInput naming `where` for bytes PDFium cannot read."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == raw.FPDF_ERR_PASSWORD:
            raise BadInput(f"{where}: the PDF is encrypted; decrypt it first") from None
        raise BadInput(f"{where}: not a readable PDF ({exc})") from None
    reader = _PageReader(raw)
    pages: list[tuple[str, list[tuple[str, float, bool]]]] = []
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            try:
                chars = textpage.count_chars()
                pages.append(reader.page(page.raw, textpage.raw, chars) if chars > 0 else ("", []))
            finally:
                textpage.close()
                page.close()
    except pdfium.PdfiumError as exc:
        raise BadInput(f"{where}: not a readable PDF ({exc})") from None
    finally:
        pdf.close()
    return pages
