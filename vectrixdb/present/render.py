"""The Jinja2 side of showing a run: the filters and globals every template uses, the templates a
run is shown with (present/templates: base.html, the run page's body, a question's drill-down, the
kinds' sections, the offline copy) and the stylesheet (present/static/style.css).

The offline HTML copy renders here (`render`); the dashboard (server/pages.py) builds its own
environment with `configure`, searching its page templates first and these after, so a run page
and its offline copy are drawn by the same templates with the same filters.

Autoescape is on for every template (they are all HTML), so a question, answer or passage
holding `<script>` is shown as text wherever it appears; nothing is marked safe in templates.
The one filter whose output is markup, `markdown` (present/markdown.py), escapes raw HTML itself.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from functools import lru_cache
from pathlib import Path
from typing import Any

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
    from vectrixdb.present.views import fmt

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
    """The unjudged share and power of a retrieval or RAG run (present/decisions.py), or None."""
    from vectrixdb.present.decisions import decisions as of

    return of(report)


def unjudged_of(report, qid: str) -> str | None:
    """One question's unjudged results in words, for its drill-down; None where the run has none."""
    got = decisions(report) if report is not None else None
    return got["unjudged"]["per_question"].get(str(qid)) if got else None


def configure(env: Any) -> Any:
    """Give a Jinja2 environment the filters and globals the templates use; returns it."""
    from vectrixdb.present.markdown import markup
    from vectrixdb.present.views import fmt

    env.filters["fmt"] = fmt
    env.filters["heat"] = heat
    env.filters["when"] = when
    env.filters["markdown"] = markup
    env.globals["figure_text"] = figure_text
    env.globals["run_type"] = run_type
    env.globals["decisions"] = decisions
    env.globals["unjudged_of"] = unjudged_of
    return env


def options() -> dict[str, Any]:
    """The settings every environment that renders these templates is made with."""
    with needs("serve"):
        import jinja2

    return dict(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@lru_cache(maxsize=1)
def environment():
    """The environment the offline copy renders with: present/templates only."""
    with needs("serve"):
        import jinja2

    return configure(jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), **options()))


def css() -> str:
    return (STATIC / "style.css").read_text(encoding="utf-8")


def render(name: str, **context) -> str:
    """A template of present/templates rendered to text (the offline copy)."""
    context.setdefault("offline", False)
    context.setdefault("css_inline", None)
    return environment().get_template(name).render(**context)
