"""Plain text and Markdown: the text is kept as it is; a form feed (\\f) starts a new page.

The reader of .markdown, .md, .rst, .text and .txt files (and of a file with no suffix)."""
from __future__ import annotations

from vectrixdb import registry
from vectrixdb.errors import BadInput
from vectrixdb.reading.document import Document, decode, join_pages

TEXT_SUFFIXES = (".markdown", ".md", ".rst", ".text", ".txt")


def read_text(text: str, *, doc_id: str, source: str | None = None) -> Document:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise BadInput(f"{source or doc_id}: the document is empty")
    return join_pages(doc_id, text.split("\f"), source)


def read_text_file(data: bytes, *, doc_id: str, source: str | None = None) -> Document:
    """A text or Markdown file's bytes as a Document: UTF-8 (a BOM dropped), else BadInput."""
    return read_text(decode(data, source or doc_id), doc_id=doc_id, source=source)


for _suffix in TEXT_SUFFIXES:
    registry.register("readers", _suffix, read_text_file)
