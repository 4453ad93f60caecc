"""MkDocs hooks (mkdocs.yml `hooks:`): the site's home page is the README itself.

docs/index.md holds only a marker; its page is README.md with the README's links into docs/ made
relative to the site (`](docs/golden-files.md)` -> `](golden-files.md)`), so the two cannot drift apart.
"""
from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def home_page() -> str:
    return README.read_text(encoding="utf-8").replace("](docs/", "](")


def on_page_markdown(markdown: str, page, config, files) -> str:
    return home_page() if page.file.src_uri == "index.md" else markdown
