"""Plain text and Markdown: the text is kept as it is; a form feed (\\f) starts a new page."""
from __future__ import annotations

from vectrixdb.errors import BadInput
from vectrixdb.reading.document import Document, join_pages


def read_text(text: str, *, doc_id: str, source: str | None = None) -> Document:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise BadInput(f"{source or doc_id}: the document is empty")
    return join_pages(doc_id, text.split("\f"), source)
