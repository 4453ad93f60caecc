"""Cutting a document's Markdown into chunks, by one of six techniques in one registry (and a
seventh, llm, that needs a chat model: cut_with=llm_cutter(chat)).

Every technique works on spans (start, end) of the document's Markdown, never on copies, so each
chunk's text is exactly `markdown[start:end]`, its pages are the pages that span overlaps, and its
heading path is the chain of Markdown headings above its start. The shared machinery lives here;
each technique module only decides where to cut.
"""
from __future__ import annotations

import bisect
import functools
import inspect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from vectrixdb import registry
from vectrixdb.errors import BadType
from vectrixdb.reading import Document, Page

if TYPE_CHECKING:
    from vectrixdb.roles import Embedder


@dataclass(frozen=True)
class Chunk:
    text: str
    doc_id: str
    start: int
    end: int
    pages: tuple[int, ...]
    headings: tuple[str, ...] = ()
    parent: "Chunk | None" = None  # parent-child: the section handed back in place of this chunk


class Chunker(Protocol):
    """A chunking technique: `fn(doc, *, chunk_size, overlap, embedder=None, **options) -> list[Chunk]`.

    Every caller (chunk_document, so ingest's add_documents and compare_chunking's builds) passes the
    Document positionally and `chunk_size` (characters) and `overlap` (characters, 0 <= overlap <
    chunk_size) by keyword; ingest and compare_chunking also pass `embedder=` (the collection's
    Embedder, for techniques that cut by meaning), chunk_document's own callers may not, so it needs
    a default. `**options` are what a caller of chunk_document adds for one technique (llm's
    `cut_with`): a technique takes those it names, each with a default. It returns chunks whose
    text is `doc.markdown[start:end]` (make_chunks builds them from spans)."""

    def __call__(self, doc: Document, *, chunk_size: int, overlap: int,
                 embedder: "Embedder | None" = None) -> list[Chunk]: ...


CHUNKERS: dict[str, Chunker] = registry.table("chunkers")  # the registry's table of techniques
ALIASES = {"markdown": "structure", "structure-aware": "structure", "parent-child": "parent_child",
           "fixed-size": "fixed"}
PASSED = ("chunk_size", "overlap", "embedder")  # the keywords every technique is called with (Chunker)


def register(name: str) -> Callable[[Chunker], Chunker]:
    """`@register("name")`: add a technique to the registry (registry.register("chunkers", ...)),
    refusing a name registered twice and a function that cannot be called as Chunker says (BadType
    naming the technique and the keyword).

    The same function registered again (same module and qualified name: an importlib.reload of its
    module, or its notebook cell run again) replaces the one registered, so an edited chunker takes
    effect; its code is part of the key of every cell that cuts with it (code_identity.py), so
    builds made with the old code are not handed back. Another function under a taken name is refused;
    so is another functools.partial: a partial is compared by its function and its arguments' values
    (code_identity.value_identity), and an argument that cannot be keyed is warned about once."""
    def add(fn: Chunker) -> Chunker:
        # read now: an argument that cannot be keyed is warned about at registration
        return registry.register("chunkers", name, fn, origin=_origin(fn))

    return add


@registry.contract("chunkers")
def _fits(name: str, fn: Any) -> None:
    reason = unfit(fn)
    if reason:
        raise BadType(f"chunking technique {name!r}: {getattr(fn, '__name__', fn)}{_signature(fn)} {reason}; "
                      "a chunker is fn(doc, *, chunk_size, overlap, embedder=None, **options)")


def plain() -> list[str]:
    """The registered techniques that take nothing beyond what every caller passes (PASSED), in
    registration order: those compare_chunking plans by default (llm, which needs cut_with=, is not)."""
    out = []
    for name, fn in registry.members("chunkers").items():
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []  # type: ignore[assignment]
        if all(p.name in PASSED or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in list(params)[1:]):
            out.append(name)
    return out


def _origin(fn: Callable[..., Any]) -> str:
    """Where `fn` comes from: module and qualified name; for a functools.partial, its function's
    origin and its arguments' identity (code_identity), so two different partials differ."""
    if isinstance(fn, functools.partial):
        from vectrixdb.code_identity import value_identity

        args = value_identity((fn.args, fn.keywords), f"an argument of the partial of {_origin(fn.func)}")[:12]
        return f"partial({_origin(fn.func)}, arguments {args})"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"


def _signature(fn: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


def unfit(fn: Callable[..., Any]) -> str | None:
    """Why `fn` cannot be called as the callers call a Chunker, or None when it can: it takes the
    document positionally, the keywords chunk_size, overlap and embedder (or **kwargs), and needs
    nothing else (every further parameter has a default)."""
    if not callable(fn):
        return "is not callable"
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None  # a builtin or C function whose signature Python cannot read: trusted as it is
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not positional and not any(p.kind == p.VAR_POSITIONAL for p in params):
        return "takes no positional parameter for the document"
    by_name = {p.name: p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    open_keywords = any(p.kind == p.VAR_KEYWORD for p in params)
    for keyword in PASSED:
        if keyword not in by_name and not open_keywords:
            return f"cannot take the keyword {keyword!r} the callers pass"
    embedder = by_name.get("embedder")
    if embedder is not None and embedder.default is embedder.empty:
        return "needs embedder= but chunk_document's callers may not pass it: give it a default (None)"
    rest = [p for p in params[1:] if p.name not in PASSED and p.default is p.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if rest:
        return f"needs {rest[0].name!r}, which no caller passes: give it a default"
    return None


# --- shared span machinery -------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


class Outline:
    """Markdown headings of a document, to give any offset its heading path."""

    def __init__(self, markdown: str):
        self.items = [(m.start(), len(m.group(1)), m.group(2).strip()) for m in _HEADING.finditer(markdown)]
        self.starts = [s for s, _, _ in self.items]

    def path_at(self, offset: int) -> tuple[str, ...]:
        path: list[tuple[int, str]] = []
        for _, level, title in self.items[: bisect.bisect_right(self.starts, offset)]:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
        return tuple(t for _, t in path)


def pages_of(pages: Sequence[Page], start: int, end: int) -> tuple[int, ...]:
    """Numbers of the pages whose text overlaps [start, end)."""
    return tuple(p.number for p in pages if p.start < end and start < p.end) or tuple(
        p.number for p in pages if p.start <= start <= p.end
    )[:1]


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@lru_cache(maxsize=4)
def outline_of(markdown: str) -> Outline:
    return Outline(markdown)


def make_chunks(doc: Document, spans: Sequence[tuple[int, int]], parent: Chunk | None = None) -> list[Chunk]:
    """Chunks for spans of doc.markdown, whitespace trimmed from their edges, empty ones dropped."""
    outline = outline_of(doc.markdown)
    out = []
    for s, e in spans:
        s, e = trim(doc.markdown, s, e)
        if e > s:
            out.append(Chunk(doc.markdown[s:e], doc.doc_id, s, e, pages_of(doc.pages, s, e), outline.path_at(s), parent))
    return out


def split_at(text: str, start: int, end: int, pattern: re.Pattern) -> list[tuple[int, int]]:
    """Cut [start, end) after every match of pattern; the pieces tile the span exactly."""
    cuts = [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]
    bounds = [start, *cuts, end]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def cut_fixed(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Pieces of at most `size` characters, each cut after the last space inside it if any."""
    out = []
    while end - start > size:
        window = text[start : start + size]
        cut = max(window.rfind(" "), window.rfind("\n"))
        stop = start + (cut + 1 if cut > size // 2 else size)
        out.append((start, stop))
        start = stop
    if end > start:
        out.append((start, end))
    return out


SEPARATORS = (re.compile(r"\n[ \t]*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?])[ \t]+"), re.compile(r"[ \t]+"))


def split_recursive(text: str, start: int, end: int, size: int, seps=SEPARATORS) -> list[tuple[int, int]]:
    """Pieces of at most `size`: cut at the coarsest separator that occurs, finer ones inside."""
    if end - start <= size:
        return [(start, end)]
    for i, sep in enumerate(seps):
        parts = split_at(text, start, end, sep)
        if len(parts) > 1:
            out: list[tuple[int, int]] = []
            for a, b in parts:
                out.extend(split_recursive(text, a, b, size, seps[i + 1 :]) if b - a > size else [(a, b)])
            return out
    return cut_fixed(text, start, end, size)


def merge(pieces: Sequence[tuple[int, int]], size: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy packing of consecutive pieces into spans of at most `size`, carrying about
    `overlap` characters of whole pieces from the end of one span into the next."""
    spans, i, n = [], 0, len(pieces)
    while i < n:
        j = i
        while j + 1 < n and pieces[j + 1][1] - pieces[i][0] <= size:
            j += 1
        spans.append((pieces[i][0], pieces[j][1]))
        if j + 1 >= n:
            break
        k = j + 1
        while k - 1 > i and pieces[j][1] - pieces[k - 1][0] <= overlap and pieces[j + 1][1] - pieces[k - 1][0] <= size:
            k -= 1
        i = k
    return spans
