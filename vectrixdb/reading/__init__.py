"""Sources to documents: text, Markdown and PDF become pages of Markdown with quality flags.

A page's number is its place in the file, 1-based, so `report.pdf#page=41` names what a PDF
viewer shows as page 41 of the file. The whole document is one Markdown string; each page is a
span of it, so chunk offsets and page numbers always agree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PAGE_BREAK = "\n\n"  # what joins two pages in a document's Markdown


@dataclass(frozen=True)
class Page:
    number: int
    start: int
    end: int
    flags: tuple[str, ...] = ()
    score: float = 1.0


@dataclass(frozen=True)
class Document:
    doc_id: str
    markdown: str
    pages: tuple[Page, ...]
    source: str | None = None
    notes: tuple[str, ...] = field(default=())

    def page_text(self, number: int) -> str:
        page = self.pages[number - 1]
        return self.markdown[page.start : page.end]


def join_pages(doc_id: str, texts: list[str], source: str | None, notes: tuple[str, ...] = ()) -> Document:
    """One Markdown string from page texts, with each page's span and quality flags."""
    from vectrixdb.reading.quality import assess

    parts, pages, pos = [], [], 0
    for number, text in enumerate(texts, start=1):
        if number > 1:
            parts.append(PAGE_BREAK)
            pos += len(PAGE_BREAK)
        flags, score = assess(text)
        pages.append(Page(number, pos, pos + len(text), flags, score))
        parts.append(text)
        pos += len(text)
    return Document(doc_id, "".join(parts), tuple(pages), source, notes)


def decode(data: bytes, where: str) -> str:
    """UTF-8 (a BOM is dropped); anything else is an error naming the place and the byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None


_SUFFIXES = {".pdf", ".md", ".markdown", ".txt", ".text", ".rst"}


def looks_like_path(value: str) -> bool:
    return "\n" not in value and len(value) < 1024 and Path(value).suffix.lower() in _SUFFIXES


def read(source: Any, *, doc_id: str | None = None) -> Document:
    """A Document from a path, a str of text, or bytes; the default doc id of a file is its name."""
    from vectrixdb import io
    from vectrixdb.reading import pdf, text

    if isinstance(source, Document):  # already read (kept Markdown with its pages)
        return source if doc_id in (None, source.doc_id) else Document(doc_id, source.markdown, source.pages,
                                                                       source.source, source.notes)
    if isinstance(source, bytes):
        return text.read_text(decode(source, doc_id or "<bytes>"), doc_id=doc_id or "document")
    if isinstance(source, Path) or (isinstance(source, str) and (io.is_remote(source) or looks_like_path(source))):
        name = str(source)
        data = io.read_bytes(name)
        doc_id = doc_id or io.basename(name)
        if name.lower().endswith(".pdf") or data[:5] == b"%PDF-":
            return pdf.read_pdf(data, doc_id=doc_id, source=name)
        return text.read_text(decode(data, name), doc_id=doc_id, source=name)
    if isinstance(source, str):
        return text.read_text(source, doc_id=doc_id or "document")
    raise TypeError(f"cannot read a document from {type(source).__name__}; give text, bytes or a path")
