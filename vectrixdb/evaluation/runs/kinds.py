"""Report kinds: one declaration per kind says everything the rest of the package does with it.

A kind (`Kind`) is registered once (`register`) and from then on `runs list`, the dashboard's list
and run page, the certificate PDF, the offline HTML copy and the CLI read it from here only:

    name, folder, version        its name, the folder its runs are saved in, its schema version
    plot, tables, questions      its main figure, extra tables, the table with one row per question
    badges, badge_from           the dashboard badge (the first of badges, or the value named
                                 badge_from when it is one of them: an evaluation is Retrieval/RAG)
    headline                     values -> its headline figures by name, set figures with their k
                                 (`page_f1@10`): the listing row, `runs list`, the run page, the PDF
    figures                      report -> the figures the certificate adds
    grades                       figure names (without @k) the kind adds to the graded ones: each
                                 must reach 1 for every question at any k; certify's one rule
                                 (GRADE_RULE) grades the built-in names and averages these with them
    sla                          the SLA figure names that may apply (None: every threshold whose
                                 figure the run has)
    graded                       whether the run page leads with the grade and SLA verdict
    plots                        extra figures (Plot: title, caption, draw, when)
    cli                          a `runs list` row -> its headline text (None: the first of HEADLINE)
    what                         the kind in words ("a retrieval report"), or values -> them, for
                                 SLA verdicts
    tab                          the Evaluate page tab its runs are picked on (None: none)
    section, view, certificate,  how the kind is shown, for a kind declared outside the package that
    appendix, judged             shows itself (callables): the package's own kinds are shown by the
                                 presentation layer, which attaches a Show to each by name
                                 (present/shows.py says what each field is; evaluation never calls them)
    comparable                   whether compare_runs pairs its runs (the Experiments page's choices)
    saved_comparison             whether its saved runs are listed as saved experiments on the
                                 Experiments page (a saved compare_runs is one)
    check                        values -> why a saved run of it cannot be shown, or None (saved.py
                                 checks what every kind shares against report.schema.json; this, what
                                 only this kind's readers use)
    progress                     the module whose progress_values / progress_report rebuild a running
                                 run from its progress log (evaluation/runs/progress.py), or None
    units                        {column or figure name: unit} for those that are not 0..1 scores
                                 ("ms", "s", "tokens", "count", "rank", "$", ...): every table, the
                                 PDF and the CLI show them with their unit and never in the score
                                 colours; a name without a unit is a score (see `unit_of`); grades and sla
                                 may not name one, and certify's grade and SLA never read one
    optional                     names in `units` a run of this kind may lack (a chunking run decided
                                 without a model has no `right`): no save warning when absent

A hook is a callable. (A "module:function" string, imported when first called, is still read for
a declaration outside the package; the package's own kinds name every hook as a callable: the
figures of the power, pool, PPI and embedder studies are in plotting/studies.py, since the modules
computing those studies import runs/report.py, which registers the built-ins.) The built-in kinds are declared in
evaluation/runs/kinds_builtin.py; a new kind is one such declaration (a test registers one of its
own: tests/test_kinds.py).

Where the registration line goes: a kind registers when its module is imported, and a fresh
`vectrixdb runs list` or `vectrixdb serve` imports only what it needs, so the module must be named
where listings look. Kinds are the "report_kinds" kind of vectrixdb/registry.py (KINDS is its
table), and `declared()` (run before every listing and lookup here) has the registry load, once each:

    kinds_builtin            the package's own kinds (the registry's home for them: a new kind
                             inside vectrixdb goes there, or its module is added to those homes)
    vectrixdb.report_kinds   the entry-point group: a distribution's kinds
                             (`latency = "mypkg.latency_kind"`, a module that registers its kinds)
    VECTRIXDB_KINDS          a setting: comma-separated modules outside the package that declare
                             kinds (`VECTRIXDB_KINDS=mypkg.latency_kind vectrixdb serve runs/`)

A module named there that cannot be imported, or raises anything while imported, is refused
(BadInput naming it, where it was named and the error); the kinds it registered are taken out again.
A saved run whose kind is declared nowhere is still reported, never skipped in silence: listings
count the runs under folders no registered kind claims (store.unregistered_runs) and the CLI and the
dashboard list say how many, of which kind, and what to import.

What a run is and how it is shown are apart: this module and kinds_builtin.py import nothing from
the presentation layer (vectrixdb/present/), which attaches how each kind is shown by its name
(present/shows.py: Show(section, view, certificate, appendix, judged)) and imports this module,
never the other way round. `hooks(kind)` lists every hook a kind declares (its fields typed Hook,
and those of its Plots and Judged); tests/test_kinds.py calls `resolve` on each of every
registered kind and on each of every Show.

Each saved run also gets a header (`header_of`): a small `header.json` beside `report.json` with
what a listing shows (kind, schema version, state, times, questions, badge and headline figures),
so a folder of runs is listed without parsing any body.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Callable, Union

from vectrixdb import registry
from vectrixdb.errors import BadInput, BadType
from vectrixdb.evaluation.runs.headlines import standard_headline

Hook = Union[Callable[..., Any], str, None]
HEADER = "header.json"
HEADER_VERSION = 1
HEADLINE = ("best", "accuracy", "ndcg@", "recall@", "chunk_f1", "page_f1", "doc_f1", "groundedness", "mrr")


@dataclass(frozen=True)
class Plot:
    """A figure a run is shown with beside its own plot: `draw(report)` returns a matplotlib figure;
    `when(report)` says whether this run has what it needs; the caption may name {run_id}."""
    title: str
    caption: str
    draw: Hook
    when: Hook = None


@dataclass(frozen=True)
class Judged:
    """A kind whose runs have results a label judges (or not): `unjudged(report)` returns the share
    nobody judged ({"k", "grain", "rows": [{"what", "share", "questions"}], "rule", "note",
    "per_question": {id: text}}), `measures(report)` the per-question columns the power panel sizes
    (those missing or not numeric are dropped); `when(report)` says whether this run has them."""
    unjudged: Hook
    measures: Hook
    when: Hook = None


@dataclass(frozen=True)
class Kind:
    """Everything about one kind of report (the module docstring says what each field is for)."""
    name: str
    folder: str
    plot: Hook
    tables: tuple[str, ...] = ()
    questions: str | None = "frame"
    version: int = 2
    badges: tuple[str, ...] = ()
    badge_from: str | None = None
    headline: Hook = standard_headline
    figures: Hook = None
    grades: tuple[str, ...] = ()
    sla: tuple[str, ...] | None = None
    graded: bool = True
    plots: tuple[Plot, ...] = field(default=())
    cli: Hook = None
    what: str | Callable[[dict], str] | None = None
    tab: str | None = None
    section: str | None = None
    view: Hook = None
    certificate: Hook = None
    appendix: Hook = None
    comparable: bool = False
    saved_comparison: bool = False
    judged: Judged | None = None
    check: Hook = None
    progress: str | None = None
    units: Mapping[str, str] = field(default_factory=dict, hash=False)
    optional: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.units, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip() for k, v in self.units.items()):
            raise BadInput(f"kind {self.name!r}: units maps column names to unit names (neither blank), "
                           f"not {self.units!r}")
        scored = [n for n in (*self.grades, *(self.sla or ())) if n in self.units or n.split("@")[0] in self.units]
        if scored:  # a name with a unit is not a 0..1 score: grading or SLA-checking it would mix scales
            raise BadInput(f"kind {self.name!r}: {sorted(set(scored))} named both in grades/sla and in units; a "
                           "figure with a unit is not a score and is never graded or SLA-checked: drop it from one")
        object.__setattr__(self, "units", MappingProxyType(dict(self.units)))  # frozen: a copy nobody changes

    def unit_of(self, name: Any) -> str | None:
        """The unit of a column or figure, None for a 0..1 score: the name's own entry in `units`
        (or SHARED_UNITS, names every run has), else its stem before `@` or a space (`wait_ms@10`,
        `median_ms low` read as `wait_ms`, `median_ms`)."""
        name = str(name)
        for candidate in (name, re.split(r"[@ ]", name, maxsplit=1)[0]):
            unit = self.units.get(candidate) or SHARED_UNITS.get(candidate)
            if unit:
                return unit
        return None

    def unknown_units(self, report) -> list[str]:
        """The names in `units` that no column (of its frame or tables), value or headline figure of
        this report has, by name or stem (`wait_ms` for `wait_ms@10`): sorted, for a save warning."""
        names: set[str] = {str(k) for k in dict(report)} | {str(k) for k in self.headline_of(dict(report))}
        for table in (report.frame, *report.tables.values()):
            if table is not None:
                names |= {str(c) for c in table.columns} | {str(n) for n in table.index.names if n}
        names |= {re.split(r"[@ ]", n, maxsplit=1)[0] for n in names}
        return sorted(set(self.units) - names - set(self.optional))

    def badge(self, values: dict | None) -> str | None:
        """The badge a run of this kind shows; None for none (the dashboard shows Unknown)."""
        if self.badge_from:
            return (values or {}).get(self.badge_from)
        return self.badges[0] if self.badges else None

    def headline_of(self, values: dict) -> dict[str, Any]:
        return dict(call(self.headline, values) or {}) if self.headline else {}

    def words(self, values: dict) -> str:
        """The kind in words for a verdict ("a retrieval report"); `a <name> run` when undeclared."""
        if isinstance(self.what, str):
            return self.what  # words, not a hook
        return call(self.what, values) if self.what else f"a {self.name} run"

    def cli_text(self, row: dict) -> str:
        return call(self.cli, row) if self.cli else first_headline(row, self)

    def judged_for(self, report) -> Judged | None:
        """Its own Judged (an outside kind that shows itself) when this run has judged results (its
        `when` holds), else None; present/shows.judged_for also reads the Show attached to its name."""
        spec = self.judged
        return spec if spec is not None and (spec.when is None or call(spec.when, report)) else None


#: Units of the names every run has, whatever its kind (certify adds the run's duration_s).
SHARED_UNITS: dict[str, str] = {"duration_s": "s"}
KINDS: dict[str, Kind] = registry.table("report_kinds")  # the registry's table of report kinds
SETTING = "VECTRIXDB_KINDS"
_imported = registry.IMPORTED  # the modules a setting named, imported once each (tests forget theirs)


def declared() -> dict[str, Kind]:
    """KINDS after the registry has loaded them: the built-ins, the entry points in the group
    vectrixdb.report_kinds and (once each) the modules the VECTRIXDB_KINDS setting names, so a kind
    declared outside the modules a command happens to import is known to every listing."""
    registry.names("report_kinds")
    return KINDS


failure = registry.failure  # kept: an extension module's failure at import in words


@registry.alias
def register(kind: Kind) -> Kind:
    """Add a kind (registry.register("report_kinds", kind.name, kind)); a name registered twice is
    refused (a second declaration would shadow the first)."""
    return registry.register("report_kinds", kind.name, kind)


@registry.contract("report_kinds")
def _fits(name: str, kind: Any) -> None:
    if not isinstance(kind, Kind) or kind.name != name:
        raise BadType(f"report kind {name!r}: a report kind is a Kind registered under its own name, not {kind!r}")


def unregister(name: str) -> None:
    """Remove a kind (tests that register a kind of their own take it out again)."""
    registry.unregister("report_kinds", name)


def kind_of(name: str) -> Kind:
    return registry.get("report_kinds", name)


def folders() -> list[str]:
    """Every folder runs are saved in, sorted."""
    return sorted({k.folder for k in declared().values()})


def badges() -> tuple[str, ...]:
    """Every badge a run can show, in the order the kinds were registered (the list's Type filter)."""
    out: list[str] = []
    for kind in declared().values():
        out += [b for b in kind.badges if b not in out]
    return tuple(out)


def resolve(hook: Hook) -> Callable[..., Any]:
    """The callable a hook names ("module:function" imported now)."""
    if isinstance(hook, str):
        module, _, function = hook.partition(":")
        return getattr(importlib.import_module(module), function)
    if hook is None:
        raise BadType("this kind declares no such hook: nothing to call")
    return hook


def call(hook: Hook, *args: Any) -> Any:
    """Call a hook given as a callable or as "module:function"."""
    return resolve(hook)(*args)


def hooks(kind: Kind) -> list[tuple[str, Hook]]:
    """Every hook a kind declares, by where ("certificate", "plots[0].draw", "judged.unjudged"):
    the fields typed Hook of the kind, of its Plots and of its Judged."""
    def of(value: Any, where: str) -> list[tuple[str, Hook]]:
        return [(f"{where}{f.name}", getattr(value, f.name)) for f in fields(value)
                if f.type == "Hook" and getattr(value, f.name) is not None]

    out = of(kind, "")
    for i, plot in enumerate(kind.plots):
        out += of(plot, f"plots[{i}].")
    return out + (of(kind.judged, "judged.") if kind.judged else [])


def first_headline(row: dict, kind: Kind | None = None) -> str:
    """The one figure `runs list` shows for a run: for a kind with a headline of its own (not the
    standard one), the first of its headline figures the row has (the row's `headline` names them,
    in order); else the first the row has of HEADLINE (a sweep's or a comparison's best in words;
    else accuracy, nDCG, recall, then set F1 from the finest grain); with its unit when the kind
    declares one."""
    def shown(value: Any) -> bool:
        return value is not None and value == value and value != ""

    own = row.get("headline") if kind is not None and kind.headline != Kind.headline else None
    if isinstance(own, (list, tuple)) and any(shown(row.get(n)) for n in own):
        column = next(n for n in own if shown(row.get(n)))
        return _figure(column, row[column], kind)
    for prefix in HEADLINE:
        for column, value in row.items():
            if str(column).startswith(prefix) and shown(value):
                return _figure(column, value, kind)
    return "—"


def _figure(column: Any, value: Any, kind: Kind | None) -> str:
    unit = kind.unit_of(column) if kind else None
    if unit and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{column} {with_unit(value, unit)}"
    return f"{column} {value:.3f}" if isinstance(value, float) else f"{column}: {str(value)[:64]}"


def with_unit(value: float, unit: str) -> str:
    """A number with its unit, as every table, the PDF and the CLI print it: money as `$0.0123`
    (4 significant digits), a rank as `rank 2`, a count as its number alone (`1,234`: it has no
    unit to print, and is still not a score), whole numbers of another unit with thousands
    separators (`1,500 tokens`), times and other measures to 1 decimal (`412.5 ms`), or 3 below 1
    (`0.412 ms`)."""
    if unit == "$":
        return f"${value:,.4g}" if abs(value) < 1000 else f"${value:,.2f}"
    if unit in ("rank", "count"):
        number = f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
        return f"rank {number}" if unit == "rank" else number
    if float(value).is_integer() and abs(value) >= 1 or isinstance(value, int):
        return f"{int(value):,} {unit}"
    return f"{value:,.1f} {unit}" if abs(value) >= 1 else f"{value:.3f} {unit}"


HEADER_META = ("kind", "schema_version", "vectrixdb", "run_id", "name", "status", "started", "finished", "duration_s",
               "questions", "error", "pid", "pid_started", "host", "heartbeat")


def header_of(data: dict) -> dict[str, Any]:
    """The header of a report (its saved form, Report.to_dict()): what a listing shows of it, the
    headline figures computed by its kind's declaration when it was written."""
    kind = kind_of(data["kind"])
    values = data.get("values") or {}
    return {"header_version": HEADER_VERSION, **{k: data.get(k) for k in HEADER_META},
            "badge": kind.badge(values), "headline": kind.headline_of(values),
            "cannot_fail": [str(x) for x in values.get("cannot_fail") or []],
            "cannot_fail_levels": {str(k): str(v) for k, v in (values.get("cannot_fail_levels") or {}).items()},
            "body": "report.json"}
