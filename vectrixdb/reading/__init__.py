"""Sources to documents: text, Markdown and PDF become pages of Markdown with quality flags.

A file is read by the reader registered for its suffix: the "readers" kind of vectrixdb/registry.py,
a function `read(data: bytes, *, doc_id: str, source: str | None) -> Document` per suffix (text.py
reads .markdown .md .rst .text .txt, pdf.py .pdf). A new format is one file: a module here that
registers its reader, or, outside the package, an entry point in the group `vectrixdb.readers`
(`".html" = "mypkg.html:read_html"`). A file with no suffix is read as text (as a PDF when its
bytes start with %PDF-).

A page's number is its place in the file, 1-based, so `report.pdf#page=41` names what a PDF
viewer shows as page 41 of the file. The whole document is one Markdown string; each page is a
span of it, so chunk offsets and page numbers always agree.

Text or a path? A str is read as a path when it is one line of at most 1024 characters and
  - names something that exists on disk (a file is read; a folder, FIFO or device is an error), or
  - ends in a suffix a reader is registered for (.md, .markdown, .pdf, .rst, .text, .txt, and any
    registered from outside; spaces allowed), or
  - is an s3:// / Blob / web address, or
  - has no whitespace and contains a path separator (`data/sample`) or ends in a suffix-like
    `.abc` (`report.docx`): such a string is a path that is missing or of a type we cannot read,
    and saying so beats storing the path as a document.
Anything else is text. Text that would pass for a path is added as `{"text": ...}` (never a path).
A `pathlib.Path` is always a path. Text without a doc id gets `text-<sha256 of the text, 16 hex>`,
so the same text added twice is one document and different texts never replace each other.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any, Callable

from vectrixdb import registry
from vectrixdb.errors import BadInput, BadType, NotFound, Unsupported
from vectrixdb.reading.document import PAGE_BREAK, Document, Page, decode, join_pages  # noqa: F401  (public here)

Reader = Callable[..., Document]  # read(data: bytes, *, doc_id: str, source: str | None = None) -> Document


@registry.contract("readers")
def _fits(suffix: str, reader: Any) -> None:
    """A reader is registered for a suffix (a dot and up to 10 letters or digits, lower case) and takes
    the file's bytes positionally and doc_id= and source= by keyword."""
    if not re.fullmatch(r"\.[a-z0-9]{1,10}", suffix):
        raise BadInput(f"a reader is registered for a file suffix such as '.html' (lower case), not {suffix!r}")
    if not callable(reader):
        raise BadType(f"reader for {suffix!r}: a reader is read(data, *, doc_id, source=None) -> Document, "
                      f"not {type(reader).__name__}")
    try:
        inspect.signature(reader).bind(b"", doc_id="d", source=None)
    except TypeError as exc:
        raise BadType(f"reader for {suffix!r}: {getattr(reader, '__name__', reader)}{inspect.signature(reader)} "
                      f"cannot be called as read(data, *, doc_id, source=None): {exc}") from None
    except ValueError:
        pass  # a signature Python cannot read: trusted as it is


def suffixes() -> tuple[str, ...]:
    """The suffixes a reader is registered for, sorted."""
    return tuple(sorted(registry.names("readers")))


def __getattr__(name: str) -> Any:
    if name == "SUFFIXES":  # the old constant: the suffixes read today
        return suffixes()
    raise AttributeError(name)


MAX_PATH = 1024  # longer than any path a person types; a longer str is text
MAX_ID = 512
DEFAULT_MAX_CHARS = 50_000_000  # one document's text; $VECTRIXDB_MAX_CHARS or max_chars= changes it
_SUFFIX_LIKE = re.compile(r"\.[A-Za-z0-9]{0,9}[A-Za-z][A-Za-z0-9]{0,9}$")  # .docx, .md, .mp4; not .5


def looks_like_path(value: str) -> bool:
    """Whether a str is taken for a path rather than text (the rule is in the module docstring)."""
    from vectrixdb import io

    if not value or len(value) > MAX_PATH or "\n" in value or "\r" in value or "\x00" in value:
        return False
    if Path(value).suffix.lower() in suffixes() or io.is_remote(value):
        return True
    if not any(c.isspace() for c in value) and ("/" in value or "\\" in value or _SUFFIX_LIKE.search(value)):
        return True
    try:
        return os.path.lexists(os.path.expanduser(value))
    except (ValueError, UnicodeError):
        return False


def check_text(value: str, what: str) -> str:
    """The text itself, or a BadInput when it holds a lone surrogate (not valid Unicode, not storable)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(f"{what}: holds a lone surrogate ({value[exc.start]!r} at character {exc.start}), "
                       "which is not valid Unicode text") from None
    return value


def check_doc_id(doc_id: Any) -> str:
    """A doc id as given, or a BadInput: it must be non-empty text of at most 512 characters,
    without control characters or surrounding spaces, and without `#page=` (labels use
    `doc#page=3` to name a page, so such an id could not be told apart from one)."""
    if not isinstance(doc_id, str):
        raise BadInput(f"doc_id must be text, not {doc_id!r}")
    if not doc_id.strip():
        raise BadInput(f"doc_id {doc_id!r} is empty")
    if len(doc_id) > MAX_ID:
        raise BadInput(f"doc_id {doc_id[:40]!r}... is {len(doc_id)} characters; at most {MAX_ID}")
    bad = next((c for c in doc_id if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise BadInput(f"doc_id {doc_id!r} holds {bad!r}, a control character or lone surrogate")
    if doc_id != doc_id.strip():
        raise BadInput(f"doc_id {doc_id!r} starts or ends with a space")
    if "#page=" in doc_id:
        raise BadInput(f"doc_id {doc_id!r} contains '#page=', which labels use to name a page (doc#page=3)")
    return doc_id


def text_id(text: str) -> str:
    """The doc id of text given without one: `text-` and 16 hex digits of the text's SHA-256."""
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def max_chars_default() -> int:
    """$VECTRIXDB_MAX_CHARS when set, else DEFAULT_MAX_CHARS."""
    raw = os.environ.get("VECTRIXDB_MAX_CHARS")
    if raw is None or not raw.strip():
        return DEFAULT_MAX_CHARS
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise BadInput(f"VECTRIXDB_MAX_CHARS={raw!r}: give a positive whole number of characters")
    return value


def _check_size(n: int, what: str, limit: int) -> None:
    if n > limit:
        raise BadInput(f"{what}: {n:,} characters is over the size cap of one document ({limit:,}); "
                       "raise it with max_chars= or $VECTRIXDB_MAX_CHARS, or split the document")


def check_source(source: Any) -> None:
    """A NotFound / BadInput / Unsupported error when `source` is a path that cannot be read
    (missing, a folder, a FIFO or other non-file, an unsupported suffix); nothing otherwise.
    Checks without reading (a FIFO would block), so it is cheap to run on a whole batch first."""
    from vectrixdb import io

    if isinstance(source, str):
        check_text(source, "source")
    if not (isinstance(source, Path) or (isinstance(source, str) and looks_like_path(source))):
        return
    name = str(source)
    suffix = Path(name).suffix.lower()
    if not io.is_remote(name):
        try:
            mode = Path(name).expanduser().stat().st_mode
        except FileNotFoundError:
            raise NotFound(f"{name}: no such file") from None
        except OSError as exc:
            raise BadInput(f"{name}: cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(mode):
            raise BadInput(f"{name}: is a folder, not a file; give the files in it (e.g. {name.rstrip('/')}/*.md)")
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device or special file"
            raise BadInput(f"{name}: is {kind}, not a regular file")
    if suffix and suffix not in suffixes() and _SUFFIX_LIKE.search(name):
        raise Unsupported(f"{name}: cannot read {suffix!r} files; vectrixdb reads {', '.join(suffixes())} "
                          "(a file without a suffix is read as text; a reader for another suffix is registered "
                          "as the 'readers' kind of vectrixdb.registry, or by an entry point in the group "
                          "vectrixdb.readers)")


def read(source: Any, *, doc_id: str | None = None, as_text: bool = False, max_chars: int | None = None) -> Document:
    """A Document from a path, a str of text, or bytes (see the module docstring for text or path).

    The default doc id of a file is its name, of text `text-<hash>`. as_text: take a str as text
    even when it looks like a path. max_chars: the cap on the document's text (default
    $VECTRIXDB_MAX_CHARS, else 50,000,000 characters); a bigger document is refused, naming it.
    """
    from vectrixdb import io

    limit = max_chars if max_chars is not None else max_chars_default()
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise BadInput(f"max_chars must be a positive whole number, not {limit!r}")
    if doc_id is not None:
        check_doc_id(doc_id)
    if isinstance(source, Document):  # already read (kept Markdown with its pages)
        _check_size(len(source.markdown), check_doc_id(doc_id or source.doc_id), limit)
        return source if doc_id in (None, source.doc_id) else Document(doc_id, source.markdown, source.pages,
                                                                       source.source, source.notes)
    if isinstance(source, bytes):
        source, as_text = decode(source, doc_id or "<bytes>"), True
    if isinstance(source, str) and (as_text or not looks_like_path(source)):
        _check_size(len(source), doc_id or "text", limit)
        check_text(source, f"document {doc_id}" if doc_id else "document text")
        from vectrixdb.reading.text import read_text

        return read_text(source, doc_id=doc_id or text_id(source))
    if not isinstance(source, (str, Path)):
        raise BadType(f"cannot read a document from {type(source).__name__}; give text, bytes or a path")
    check_source(source)
    name = str(source)
    doc_id = doc_id or check_doc_id(io.basename(name))
    reader = reader_for(name)
    if not io.is_remote(name) and _reads_text(reader):  # over the cap even at 4 bytes a character
        _check_size(Path(name).expanduser().stat().st_size // 4, name, limit)
    try:
        data = io.read_bytes(name)
    except FileNotFoundError as exc:
        raise NotFound(str(exc)) from None
    except (IsADirectoryError, PermissionError) as exc:  # e.g. a file the user may not read
        raise BadInput(f"{name}: cannot be read ({exc.strerror or exc})") from None
    if _reads_text(reader) and data[:5] == b"%PDF-":
        reader = reader_for(name + ".pdf")  # a PDF saved under another suffix, or none
    doc = reader(data, doc_id=doc_id, source=name)
    if not isinstance(doc, Document):
        raise BadType(f"{name}: the reader for {Path(name).suffix.lower() or 'text'} "
                      f"({registry.origin('readers', Path(name).suffix.lower())}) returned "
                      f"{type(doc).__name__}, not a Document")
    _check_size(len(doc.markdown), name, limit)
    return doc


def reader_for(name: str) -> Reader:
    """The reader registered for a file's suffix; a file without a suffix (or with one no reader is
    registered for and that does not look like a suffix: `v1.5`) is read as text."""
    suffix = Path(name).suffix.lower()
    readers = registry.members("readers")
    return readers[suffix] if suffix in readers else readers[".txt"]


def _reads_text(reader: Reader) -> bool:
    return reader is registry.members("readers").get(".txt")
