"""The one Jinja2 environment the dashboard and the offline HTML copy render with; it finds a
template in server/templates, then in the folder a registered page names (server/registry.py).

Autoescape is on for every template (they are all HTML), so a question, answer or passage
holding `<script>` is shown as text wherever it appears; nothing is marked safe in templates.
The one filter whose output is markup, `markdown` (server/markdown.py), escapes raw HTML itself.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


def heat(value) -> str:
    """A cell's background for a score in 0..1, red through amber to green, and the text colour
    legible on it; empty when undefined."""
    from vectrixdb.plotting.heatmap import heat_css

    return heat_css(value)


def when(value) -> str:
    """An ISO time as the list shows it: date and time, no T and Z."""
    return str(value).replace("T", " ").rstrip("Z") if value else "—"


def figure_text(name: str, value, kind: str | None = None) -> str:
    """An 'other figure' on the Evaluations page, with its unit when the run's kind declares one;
    a chunking run's best build by its name."""
    import json

    from vectrixdb.evaluation.runs.kinds import KINDS
    from vectrixdb.server.views import fmt

    if name == "best" and isinstance(value, str) and value.startswith("{"):
        best = json.loads(value)
        return f"{best.get('name')} ({best.get('found')}/{best.get('of')} found)"
    declared = KINDS.get(kind) if kind else None
    return fmt(value, declared.unit_of(name) if declared else None)


def run_type(report) -> str | None:
    """The badge of a run (evaluation/runs/store.py's type map, which the listing uses too)."""
    from vectrixdb.evaluation.runs.store import type_of

    return type_of(report.kind, dict(report))


def decisions(report):
    """The unjudged share and power of a retrieval or RAG run (server/decisions.py), or None."""
    from vectrixdb.server.decisions import decisions as of

    return of(report)


def unjudged_of(report, qid: str) -> str | None:
    """One question's unjudged results in words, for its drill-down; None where the run has none."""
    got = decisions(report) if report is not None else None
    return got["unjudged"]["per_question"].get(str(qid)) if got else None


def template_source(name: str):
    """A template's (source, filename, uptodate): a registered page's html= source (named
    `page:<name>`), else from server/templates, else from a registered page's own folder (registry.folders(), read at each load, so a page registered after the environment
    was made finds its template); None when no folder has it (Jinja raises TemplateNotFound)."""
    with needs("serve"):
        import jinja2

    from vectrixdb.server.registry import INLINE, PAGES, folders, inline_source

    inline = inline_source(name)
    if inline is not None:  # a page's html= source: compiled once, again only when the page is registered anew
        page = PAGES[name[len(INLINE):]]
        return inline, None, lambda: PAGES.get(page.name) is page
    try:
        return jinja2.FileSystemLoader([str(TEMPLATES), *folders()]).get_source(environment(), name)
    except jinja2.TemplateNotFound:
        return None


@lru_cache(maxsize=1)
def environment():
    with needs("serve"):
        import jinja2

    from vectrixdb.server.markdown import markup
    from vectrixdb.server.views import fmt

    env = jinja2.Environment(loader=jinja2.FunctionLoader(template_source), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    env.filters["heat"] = heat
    env.filters["when"] = when
    env.filters["markdown"] = markup
    env.globals["figure_text"] = figure_text
    env.globals["run_type"] = run_type
    env.globals["decisions"] = decisions
    env.globals["unjudged_of"] = unjudged_of
    return env


def css() -> str:
    return (STATIC / "style.css").read_text(encoding="utf-8")


def render(name: str, **context) -> str:
    """A template rendered to text (the offline copy and the server share this)."""
    context.setdefault("offline", False)
    context.setdefault("css_inline", None)
    return environment().get_template(name).render(**context)
