"""One registry for every part vectrixdb can be extended with.

Each kind of part has one table, name -> member. A member inside the package is registered in the
module that defines it; a member outside it is registered the same way by its own module, or is
found through a Python entry point in the kind's group (one group per kind), loaded the first
time that kind is looked up. The API:

    from vectrixdb import registry

    registry.register("chunkers", "paragraphs", cut)         # a call: returns the member
    @registry.register("chunkers", "paragraphs")              # or a decorator
    def cut(doc, *, chunk_size, overlap, embedder=None): ...
    registry.get("chunkers", "paragraphs")                   # the member
    registry.names("chunkers")                               # its names, in registration order
    registry.members("chunkers")                             # {name: member}, in the same order
    registry.unregister("chunkers", "paragraphs")            # a test takes its toy out again

Names are unique per kind. Registering a taken name is refused (BadInput) naming both registrants
(module and qualified name of a function or class; the registering module of any other value);
the same member again (the same object, an equal value, or a function of the same module and
qualified name: a reloaded module) replaces the one held. An unknown name is refused with the
known names and how a member of that kind is registered. Before a member is added, its kind's
contract check runs (set by the module that defines the kind's type, `contract(kind)`), so a member
that cannot work is refused where it is registered, never where it is first used.

The kinds, their entry-point groups and where the package's own members live:

    kind          group                    a member is                         package's own in
    measures      vectrixdb.measures       a measure Family class              evaluation/retrieval/measures.py
    rubrics       vectrixdb.rubrics        a judge Rubric                      evaluation/generation/judges.py
    chunkers      vectrixdb.chunkers       a chunking function (Chunker)       chunking/<technique>.py
    readers       vectrixdb.readers        fn(data, *, doc_id, source) -> Document, by file suffix (".md")
                                                                               reading/<format>.py
    report_kinds  vectrixdb.report_kinds   a report Kind                       evaluation/runs/kinds_builtin.py
    pages         vectrixdb.pages          a dashboard Page                    server/pages_builtin.py
    routes        vectrixdb.routes         a model route builder               chat/routes.py
    embedders     vectrixdb.embedders      fn(model, **options) -> Embedder    embedders.py
    rerankers     vectrixdb.rerankers      fn(model=None) -> (query, texts) -> scores
                                                                               search.py
    adapters      vectrixdb.adapters       an outside-retriever Adapter        evaluation/retrieval/adapters.py,
                                                                               evaluation/retrieval/stores.py

Lookups of a kind (get, names, members) first import the package's own modules of that kind (a
home ending in `.*` is every public module of that package, so a new chunker or reader inside
the package is one new file), then read the kind's entry points once. An entry point names an
object (`html = "mypkg.html_reader:read_html"`: registered under the entry point's name) or a
module that registers its members when imported (`mine = "mypkg.parts"`). One that fails to load
is reported (`problems()`, a logged warning, and the error of a lookup of its name) naming its
distribution and entry point; the kind's other members keep working. Two kinds also read a setting
naming modules to import (VECTRIXDB_KINDS for report kinds, VECTRIXDB_PAGES for pages): a module
named there that cannot be imported is refused naming it, the members it registered taken out.
"""
from __future__ import annotations

import functools
import importlib
import logging
import os
import pkgutil
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from vectrixdb.errors import BadInput

log = logging.getLogger("vectrixdb")


@dataclass(frozen=True)
class Kind:
    """One kind of part: its table's name, the member in words, its entry-point group, the module
    defining its type and contract (`base`), the package's modules holding its members (`homes`),
    how a member is registered (for the unknown-name error) and the setting naming more modules."""
    name: str
    member: str
    group: str
    base: str
    homes: tuple[str, ...]
    how: str
    setting: str | None = None


_KINDS = (
    Kind("measures", "measure", "vectrixdb.measures", "vectrixdb.evaluation.retrieval.measures",
         ("vectrixdb.evaluation.retrieval.measures", "vectrixdb.evaluation.retrieval.metrics"),
         "a measure is a Family class decorated @declare, its kernel @RANKED.provides('name')"),
    Kind("rubrics", "rubric", "vectrixdb.rubrics", "vectrixdb.evaluation.generation.judges",
         ("vectrixdb.evaluation.generation.judges",), "a rubric is register(Rubric(...)) from judges.py"),
    Kind("chunkers", "chunking technique", "vectrixdb.chunkers", "vectrixdb.chunking.base", ("vectrixdb.chunking.*",),
         "a technique is @register('name') in its own module (vectrixdb/chunking/<name>.py inside the package)"),
    Kind("readers", "document reader", "vectrixdb.readers", "vectrixdb.reading", ("vectrixdb.reading.*",),
         "a reader is registered for its suffix: registry.register('readers', '.html', read_html)"),
    Kind("report_kinds", "report kind", "vectrixdb.report_kinds", "vectrixdb.evaluation.runs.kinds",
         ("vectrixdb.evaluation.runs.kinds_builtin",),
         "a kind is register(Kind(...)) in the module declaring it; outside vectrixdb, name that module in "
         "VECTRIXDB_KINDS or give it an entry point", "VECTRIXDB_KINDS"),
    Kind("pages", "dashboard page", "vectrixdb.pages", "vectrixdb.server.registry", ("vectrixdb.server.pages_builtin",),
         "a page is register_page(Page(...)) in the module declaring it; outside vectrixdb, name that module in "
         "VECTRIXDB_PAGES or give it an entry point", "VECTRIXDB_PAGES"),
    Kind("routes", "model route", "vectrixdb.routes", "vectrixdb.chat.routes", ("vectrixdb.chat.routes",),
         "a route is register_route('name', builder) in the module holding its builder"),
    Kind("embedders", "embedder", "vectrixdb.embedders", "vectrixdb.embedders",
         ("vectrixdb.embedders", "vectrixdb.served.embedding"),
         "an embedder is registry.register('embedders', 'name', make) with make(model, **options) -> Embedder"),
    Kind("rerankers", "reranker", "vectrixdb.rerankers", "vectrixdb.search", ("vectrixdb.search", "vectrixdb.served.rerank"),
         "a reranker is registry.register('rerankers', 'name', make) with make(model=None) -> "
         "scorer(query, texts) -> scores"),
    Kind("adapters", "retriever adapter", "vectrixdb.adapters", "vectrixdb.evaluation.retrieval.adapters",
         ("vectrixdb.evaluation.retrieval.adapters", "vectrixdb.evaluation.retrieval.stores"),
         "an adapter is registry.register('adapters', 'name', Adapter(...)) (evaluation/retrieval/adapters.py)"),
)
KINDS: dict[str, Kind] = {k.name: k for k in _KINDS}

_tables: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
_origins: dict[str, dict[str, str]] = {k: {} for k in KINDS}
_contracts: dict[str, Callable[[str, Any], None]] = {}
_loaded: set[str] = set()  # kinds whose homes were imported and entry points read
_broken: dict[str, dict[str, str]] = {k: {} for k in KINDS}  # kind -> entry point name -> why it failed
IMPORTED: set[str] = set()  # modules a setting named, imported once each
_aliases: set[Any] = set()  # code of the old register functions: the registrant is whoever called them
_MISSING = object()


def kind_of(kind: str) -> Kind:
    if kind not in KINDS:
        raise BadInput(f"no kind of part {kind!r}; the kinds: {', '.join(KINDS)}")
    return KINDS[kind]


def table(kind: str) -> dict[str, Any]:
    """The kind's table itself (the old names CHUNKERS, RUBRICS, KINDS, PAGES, ROUTES, FAMILIES are
    it): reading it imports nothing; get, names and members load the kind first."""
    kind_of(kind)
    return _tables[kind]


def contract(kind: str) -> Callable[[Callable[[str, Any], None]], Callable[[str, Any], None]]:
    """`@contract("chunkers")` on check(name, member): run before every member of the kind is added;
    it raises BadInput (or BadType) saying why a member cannot be one. Set by the kind's base module."""
    def set_check(check: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
        _contracts[kind_of(kind).name] = check
        return check
    return set_check


def alias(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark an old register function (register_page, register_route, ...) that calls register: the
    registrant named in a clash is its caller, not it."""
    _aliases.add(fn.__code__)
    return fn


def register(kind: str, name: str, member: Any = _MISSING, *, origin: str | None = None) -> Any:
    """Add `member` to the kind's table under `name` (the module docstring says what is refused);
    without a member, a decorator. `origin` names the registrant where the default would not say
    enough (a chunker's functools.partial, with its arguments)."""
    if member is _MISSING:
        return lambda given: register(kind, name, given, origin=origin)
    spec = kind_of(kind)
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise BadInput(f"a {spec.member}'s name is non-empty text without surrounding spaces, not {name!r}")
    if spec.base not in sys.modules:
        importlib.import_module(spec.base)  # its contract check is set there
    check = _contracts.get(kind)
    if check is not None:
        check(name, member)
    origin = origin or origin_of(member)
    held = _tables[kind].get(name, _MISSING)
    if held is not _MISSING and not _same(held, member, _origins[kind][name], origin):
        raise BadInput(f"{spec.member} {name!r} is registered twice: by {_origins[kind][name]} and by {origin}; "
                       f"names are unique per kind: rename one")
    _tables[kind][name] = member
    _origins[kind][name] = origin
    return member


def unregister(kind: str, name: str) -> None:
    """Take a member out (tests that register a toy of their own take it out again)."""
    _tables[kind_of(kind).name].pop(name, None)
    _origins[kind].pop(name, None)


def get(kind: str, name: str) -> Any:
    """The member registered as `name`, the kind loaded first; an unknown name is BadInput listing the
    known ones and how one is registered, a broken entry point of that name is BadInput saying why."""
    members = _load(kind)
    if name in members:
        return members[name]
    spec = KINDS[kind]
    if name in _broken[kind]:
        raise BadInput(_broken[kind][name])
    raise BadInput(f"unknown {spec.member} {name!r}; known: {sorted(members)} ({spec.how}; from outside "
                   f"vectrixdb, an entry point in the group {spec.group!r})")


def names(kind: str) -> list[str]:
    """The kind's names in registration order (the package's own first, then entry points)."""
    return list(_load(kind))


def members(kind: str) -> dict[str, Any]:
    """{name: member} of the kind, in registration order (a copy)."""
    return dict(_load(kind))


def origin(kind: str, name: str) -> str | None:
    """Who registered a name (as a clash names it), or None."""
    return _origins[kind_of(kind).name].get(name)


def problems(kind: str | None = None) -> list[str]:
    """Why each entry point that failed to load failed (all kinds, or one), naming distribution and entry point."""
    return [why for k in ([kind] if kind else list(KINDS)) for why in _broken[k].values()]


def refresh(kind: str | None = None) -> None:
    """Read the entry points again at the next lookup (a distribution installed into a running
    process; tests that make one)."""
    for k in [kind_of(kind).name] if kind else list(KINDS):
        _loaded.discard(k)
        _broken[k].clear()


def origin_of(member: Any) -> str:
    """Module and qualified name of a function or class; for a functools.partial its function's; for
    any other value its type and the module that registered it."""
    if isinstance(member, functools.partial):
        return f"partial({origin_of(member.func)})"
    if isinstance(member, type) or callable(member) and hasattr(member, "__qualname__"):
        return f"{getattr(member, '__module__', '?')}.{member.__qualname__}"
    return f"{_registrant()} (a {type(member).__qualname__})"


def _registrant() -> str:
    """The module that called register (or one of the old register functions marked `alias`)."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_globals.get("__name__") == __name__ or frame.f_code in _aliases):
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_globals.get("__name__", "?") if frame is not None else "?"


def _same(held: Any, member: Any, held_origin: str, origin: str) -> bool:
    """Whether `member` is the one held again: the same object, an equal value, or a function or class
    of the same module and qualified name (its module reloaded, its notebook cell run again)."""
    if held is member:
        return True
    if callable(held) and callable(member) and (isinstance(member, type) or hasattr(member, "__code__")
                                                or isinstance(member, functools.partial)):
        return held_origin == origin
    try:
        return bool(held == member)
    except Exception:  # noqa: BLE001 - a value that cannot be compared is another value
        return False


def _load(kind: str) -> dict[str, Any]:
    spec = kind_of(kind)
    if kind not in _loaded:
        _loaded.add(kind)  # first: a home that looks its own kind up while it loads does not loop
        try:
            for home in spec.homes:
                for module in _modules(home):
                    importlib.import_module(module)
        except BaseException:
            _loaded.discard(kind)
            raise
        _entry_points(spec)
    if spec.setting:
        _import_setting(spec)
    return _tables[kind]


def _modules(home: str) -> list[str]:
    """A home's modules: itself, or for `package.*` each public module of the package, by name."""
    if not home.endswith(".*"):
        return [home]
    package = importlib.import_module(home[:-2])
    return [f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")]


def _entry_points(spec: Kind) -> None:
    from importlib.metadata import entry_points

    for point in entry_points(group=spec.group):
        dist = getattr(point, "dist", None)
        where = (f"entry point {point.name!r} = {point.value!r} of distribution "
                 f"{getattr(dist, 'name', '?')} {getattr(dist, 'version', '')}".rstrip())
        before = set(_tables[spec.name])
        try:
            loaded = point.load()
            if not isinstance(loaded, ModuleType):
                register(spec.name, point.name, loaded, origin=f"{origin_of(loaded)} ({where})")
            elif point.name not in _tables[spec.name]:
                raise BadInput(f"its module registers no {spec.member} named {point.name!r}")
        except Exception as exc:  # noqa: BLE001 - one broken extension never takes the others down
            for name in set(_tables[spec.name]) - before:
                unregister(spec.name, name)
            why = (f"{spec.member} {point.name!r} cannot be used: {where} (group {spec.group}) failed to load: "
                   f"{failure(exc)}")
            _broken[spec.name][point.name] = why
            log.warning(why)


def _import_setting(spec: Kind) -> None:
    named = [m.strip() for m in os.environ.get(spec.setting or "", "").split(",") if m.strip()]
    for module in named:
        if module in IMPORTED:
            continue
        IMPORTED.add(module)  # before importing: a module that looks its kind up while it loads does not loop
        before = set(_tables[spec.name])
        try:
            importlib.import_module(module)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure, an exit too: its members go, it is named
            IMPORTED.discard(module)
            for name in set(_tables[spec.name]) - before:
                unregister(spec.name, name)
            raise BadInput(f"{spec.setting} names {module!r}, which cannot be imported ({failure(exc)}); "
                           f"name a module that declares {spec.member}s") from None


def failure(exc: BaseException) -> str:
    """An extension module's failure in words: a SystemExit (an argparse run at import, a sys.exit)
    says the module tried to end the program, with its status."""
    if isinstance(exc, SystemExit):
        return f"it exits while being imported (SystemExit {exc.code!r}): a module run as a script at import?"
    return f"{type(exc).__name__}: {exc}"
