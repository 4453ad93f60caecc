"""PDF pages to Markdown with pypdf (BSD licence; PyMuPDF is AGPL and is not used).

pypdf gives each page's text in reading order; a visitor sees every text run with its font, so
lines set larger than the document's body text, or short bold lines, become Markdown headings
(`#` for the largest size in the document, then `##`, then `###`). Bullets become `-` items.
A page with no text layer (a scan) is kept as an empty page with a note and a score of 0.
"""
from __future__ import annotations

import io
import logging
import re
from collections import Counter

from vectrixdb.reading import Document, join_pages

_BULLET = re.compile(r"^\s*[•●▪◦‣∙·]\s*")


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _runs(page) -> tuple[str, list[tuple[str, float, bool]]]:
    runs: list[tuple[str, float, bool]] = []

    def visit(text, cm, tm, font, size):
        text = _collapse(text)
        if not text:
            return
        scale = abs(tm[3] * cm[3]) or abs(tm[0] * cm[0]) or 1.0
        name = str((font or {}).get("/BaseFont", "")) if hasattr(font, "get") else ""
        runs.append((text, round(float(size or 0) * scale, 1), "bold" in name.lower() or "black" in name.lower()))

    text = page.extract_text(visitor_text=visit) or ""
    return text, runs


def read_pdf(data: bytes, *, doc_id: str, source: str | None = None) -> Document:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    where = source or doc_id
    if not data:
        raise ValueError(f"{where}: the file is empty (0 bytes)")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # e.g. lyft_2021.pdf's startxref warning
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ValueError(f"{where}: the PDF is encrypted; decrypt it first")
        pages = [_runs(p) for p in reader.pages]
    except PdfReadError as exc:
        raise ValueError(f"{where}: not a readable PDF ({exc})") from None
    except ValueError:
        raise
    except Exception as exc:  # pypdf raises many kinds on broken files
        raise ValueError(f"{where}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    sizes: Counter = Counter()
    for _, runs in pages:
        for text, size, _bold in runs:
            sizes[size] += len(text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    heading_sizes = sorted({s for s in sizes if body and s >= body * 1.15}, reverse=True)
    level = {s: min(i + 1, 3) for i, s in enumerate(heading_sizes)}
    texts = [_markdown(text, runs, body, level) for text, runs in pages]
    empty = [i + 1 for i, t in enumerate(texts) if not t.strip()]
    notes = ()
    if empty:
        notes = (f"{len(empty)} of {len(texts)} pages have no text layer (scanned images?): pages {empty[:20]}",)
    return join_pages(doc_id, texts, source, notes)


def _markdown(text: str, runs, body: float, level: dict[float, int]) -> str:
    styles: dict[str, tuple[float, bool]] = {}
    for run_text, size, bold in runs:
        old = styles.get(run_text)
        if old is None or size > old[0]:
            styles[run_text] = (size, bold)
    out = []
    for line in text.replace("\r\n", "\n").split("\n"):
        key = _collapse(line)
        style = styles.get(key)
        if key and style and len(key) <= 120 and not key.startswith("#"):
            size, bold = style
            if size in level:
                line = "#" * level[size] + " " + key
            elif bold and body and size >= body * 0.95 and len(key) < 80 and not key.endswith((".", ",", ";")) and any(
                c.isalpha() for c in key
            ):
                line = "#" * (len(level) + 1 if len(level) < 3 else 3) + " " + key
        line = _BULLET.sub("- ", line)
        out.append(line.rstrip())
    return "\n".join(out).strip("\n")
