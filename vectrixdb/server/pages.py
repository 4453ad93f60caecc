"""The one Jinja2 environment the dashboard renders with: a template is found in server/templates
(the dashboard's pages), then in present/templates (what a run is shown with, shared with the
offline copy), then in the folder a registered page names (server/registry.py). Its filters and
globals are the presentation layer's (present/render.configure), so a run page and its offline
copy show the same things the same way.
"""
from __future__ import annotations
from vectrixdb.extras import needs

from functools import lru_cache
from pathlib import Path

from vectrixdb.present.render import STATIC, TEMPLATES as SHOWN, configure, options

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
__all__ = ["STATIC", "TEMPLATES", "SHOWN", "template_source", "environment"]


def template_source(name: str):
    """A template's (source, filename, uptodate): a registered page's html= source (named
    `page:<name>`), else from server/templates, else from present/templates, else from a registered
    page's own folder (registry.folders(), read at each load, so a page registered after the
    environment was made finds its template); None when no folder has it (Jinja raises TemplateNotFound)."""
    with needs("serve"):
        import jinja2

    from vectrixdb.server.registry import INLINE, PAGES, folders, inline_source

    inline = inline_source(name)
    if inline is not None:  # a page's html= source: compiled once, again only when the page is registered anew
        page = PAGES[name[len(INLINE):]]
        return inline, None, lambda: PAGES.get(page.name) is page
    try:
        return jinja2.FileSystemLoader([str(TEMPLATES), str(SHOWN), *folders()]).get_source(environment(), name)
    except jinja2.TemplateNotFound:
        return None


@lru_cache(maxsize=1)
def environment():
    with needs("serve"):
        import jinja2

    return configure(jinja2.Environment(loader=jinja2.FunctionLoader(template_source), **options()))
