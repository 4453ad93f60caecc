"""A read document: one Markdown string and its pages, each page a span of it with quality flags.

The types every reader (pdf.py, text.py, or one registered from outside) builds and everything
downstream reads; they sit below the readers so that vectrixdb.reading (which looks a reader up in
the registry by the file's suffix) and the readers never import each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from vectrixdb.errors import BadInput

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


def decode(data: bytes, where: str) -> str:
    """UTF-8 (a BOM is dropped); anything else is an error naming the place and the byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where}: not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})") from None


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
