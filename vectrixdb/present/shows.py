"""How each report kind is shown, attached by the kind's name: the presentation side of a kind.

A kind (evaluation/runs/kinds.py) says what a run is; how the dashboard's run page, the certificate
PDF and the offline copy show it is a `Show`, registered here under the kind's name:

    section       a template of present/templates the run page includes (`_chunking.html`)
    view          report -> the section's context
    certificate   report -> extra tables [{"title", "rows"}] for the PDF (and the run page, when the
                  kind has no section of its own)
    appendix      report -> the PDF's appendix entries (None: the run's misses)
    judged        Judged(unjudged, measures, when): the "before deciding" panel (present/decisions.py)

The package's own kinds are shown in present/shows_builtin.py (imported by present/__init__.py, so
any use of the presentation layer has them). A kind declared outside the package may instead give
the same fields, as callables, on its own Kind (`Kind(..., certificate=my_tables, judged=Judged(...))`):
`of(kind)` takes what is registered here for its name and fills each field it leaves empty from the
kind's own declaration. evaluation/runs never imports this module; it imports evaluation/runs.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable

from vectrixdb.errors import BadInput
from vectrixdb.evaluation.runs.kinds import Judged, Kind, call


@dataclass(frozen=True)
class Show:
    """How one kind of run is shown (the module docstring says what each field is for)."""
    section: str | None = None
    view: Callable[[Any], dict[str, Any]] | None = None
    certificate: Callable[[Any], list[dict[str, Any]]] | None = None
    appendix: Callable[[Any], list[dict[str, Any]]] | None = None
    judged: Judged | None = None


SHOWS: dict[str, Show] = {}


def show(kind: str, **hooks: Any) -> Show:
    """Attach how runs of `kind` are shown (Show's fields by name); a kind shown twice is refused."""
    if kind in SHOWS:
        raise BadInput(f"report kind {kind!r} is already shown (present/shows.py): one Show per kind")
    unknown = set(hooks) - {f.name for f in fields(Show)}
    if unknown:
        raise BadInput(f"a Show has no field(s) {sorted(unknown)}; its fields: {', '.join(f.name for f in fields(Show))}")
    SHOWS[kind] = Show(**hooks)
    return SHOWS[kind]


def unshow(kind: str) -> None:
    """Take a kind's Show out again (tests that show a kind of their own)."""
    SHOWS.pop(kind, None)


def of(kind: Kind) -> Show:
    """How runs of `kind` are shown: its Show registered here, each empty field filled from the
    kind's own declaration (an outside kind's callables)."""
    own = SHOWS.get(kind.name, Show())
    return Show(**{f.name: getattr(own, f.name) if getattr(own, f.name) is not None else getattr(kind, f.name)
                   for f in fields(Show)})


def judged_for(kind: Kind, report) -> Judged | None:
    """The kind's Judged when this run has judged results (its `when` holds), else None."""
    spec = of(kind).judged
    return spec if spec is not None and (spec.when is None or call(spec.when, report)) else None
