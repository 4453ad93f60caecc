"""The documentation site (mkdocs.yml, docs/): it builds with `mkdocs build --strict` (no warning: a
broken link or anchor, a page left out of the nav, a docstring mkdocstrings cannot read), every code
block on every page is run or checked, the generated pages are what their scripts print, and the
README stays a first visit's page whose links all lead somewhere.

The helpers here (`pages`, `blocks`) are what the other document tests read: tests/test_readme.py
runs the Python blocks of the README and every page, in the site's order; tests/test_docs_commands.py
and tests/test_layout.py check the commands and imports they show.
"""
from __future__ import annotations

import ast
import html
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
README_LIMIT = 10 * 1024


def _flatten(nav) -> list[str]:
    out: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _flatten(value) if isinstance(value, list) else [value]
    return out


def nav_pages() -> list[Path]:
    """The site's pages in the order its navigation lists them."""
    import yaml  # here, not at the top: the other document tests import this module in a core-only venv

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    return [DOCS / page for page in _flatten(config["nav"])]


def pages() -> list[Path]:
    """The README, then every page of the site in its navigation's order."""
    return [ROOT / "README.md", *nav_pages()]


def blocks(*languages: str) -> list[tuple[Path, int, str, str]]:
    """(page, line, language, code) of every fenced block, of the languages given (all when none)."""
    out = []
    for path in pages():
        text = path.read_text()
        for m in BLOCK.finditer(text):
            if not languages or m[1] in languages:
                out.append((path, text.count("\n", 0, m.start()) + 1, m[1], m[2]))
    return out


def _load(script: str):
    spec = importlib.util.spec_from_file_location(script, ROOT / "scripts" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Text(HTMLParser):
    """A built page's visible text (scripts and styles left out)."""

    def __init__(self):
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)

    def text(self) -> str:
        return " ".join(" ".join(self.parts).split())


def _text_of(page: Path) -> str:
    parser = _Text()
    parser.feed(page.read_text())
    return html.unescape(parser.text())


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-4000:]
    warnings = [line for line in said.splitlines() if "WARNING" in line or line.startswith("ERROR")]
    assert not warnings, "\n".join(warnings)
    return out


def test_the_site_builds_strict_and_a_reader_sees_its_pages(site):
    home = _text_of(site / "index.html")
    for title in ("Getting started", "Golden files", "Retrieval reports and grains", "The answer cut-off",
                  "Outside retrievers, stores and traces", "Scale-out (Ray)", "CLI reference", "Published figures",
                  "Design and layout", "Chunkers"):
        assert title in home, f"the navigation has no {title!r}"
    assert "Any outside retriever can be evaluated" in home, "the home page is the README (scripts/docs_hooks.py)"
    api = _text_of(site / "api" / "retrieval" / "index.html")
    assert "retrieval_report" in api and "how well a retriever finds what your questions expect" in api
    cli = _text_of(site / "cli" / "index.html")
    assert "vectrixdb golden check" in cli and "--fail-under" in cli
    figures = _text_of(site / "figures" / "index.html")
    assert "AMD EPYC" in figures and "not recorded by the run" in figures and "hnsw.json" in figures


def test_every_page_is_in_the_navigation():
    listed = set(nav_pages())
    on_disk = set(DOCS.rglob("*.md"))
    assert on_disk == listed, f"not in mkdocs.yml's nav: {sorted(map(str, on_disk - listed))}; " \
                              f"missing: {sorted(map(str, listed - on_disk))}"


def test_the_cli_page_is_generated_from_the_command():
    assert (DOCS / "cli.md").read_text() == _load("docs_cli").page(), \
        "docs/cli.md is not the command's: python scripts/docs_cli.py --write"


def test_the_figures_table_is_generated_from_the_benchmark_files():
    figures = _load("docs_figures")
    page = (DOCS / "figures.md").read_text()
    shown = page.split(figures.START, 1)[1].split(figures.END, 1)[0].strip()
    assert shown == figures.table(), "docs/figures.md's figures are not the benchmarks': python scripts/docs_figures.py --write"
    assert all(row.count("|") == 5 for row in shown.splitlines()), "every row names its machine"


def test_drafts_read_by_hand_count_right_only_as_written_and_edits_only_one():
    """The figures table's "right when read by hand: R of N, E more after one edit": a draft is right
    when answerable, its evidence right (or partly), its reference right and a person would ask it;
    one edit is one of the last two marked "after an edit", the other right; anything else is wrong."""
    figures = _load("figures_table")

    def row(*drafts):
        marks = ("answerable_from_the_page", "evidence_right", "reference_right", "a_person_would_ask_it")
        d = {"written": {"kept": len(drafts), "asked": 40}, "model": "m at u", "n": 40,
             "checked_by_hand": {"drafts": [dict(zip(marks, x)) for x in drafts]}}
        return figures._golden_checked(d, "f.json")[0][0].split("read by hand: ")[1]

    edit = "after an edit"
    assert row((True, True, True, True), (True, "partly", True, True)) == "2 of 2, 0 more after one edit"
    assert row((True, True, edit, True), (True, True, True, edit)) == "0 of 2, 2 more after one edit"
    assert row((True, True, edit, edit), (False, True, True, True), (True, False, True, True),
               (True, True, False, edit)) == "0 of 4, 0 more after one edit"  # two edits, or wrong, count nowhere
    assert row((True, True, True, True)) == "1 of 1, 0 more after one edit"  # n = 1
    assert "read by hand" not in figures._golden_checked({"written": {"kept": 0, "asked": 40}, "model": "m", "n": 40},
                                                         "f.json")[0][0]  # none read: no claim


def test_every_benchmark_file_names_its_machine():
    """A run that recorded no CPU carries the one its session's closing note names, and says so."""
    for path in sorted((ROOT / "benchmarks").glob("*.json")):
        d = json.loads(path.read_text())
        assert d.get("cpu") or d.get("machine"), f"{path.name} names no machine"


def test_a_benchmark_file_without_a_machine_says_not_recorded(tmp_path):
    """And a file that read PDFs names its reader beside the machine."""
    figures = _load("docs_figures")
    (tmp_path / "bare.json").write_text('{"what": "x"}')
    (tmp_path / "read.json").write_text('{"what": "x", "pdf_reader": "pypdf"}')
    assert figures.machine("bare.json", tmp_path) == "not recorded"
    assert figures.machine("read.json", tmp_path) == "not recorded; PDFs read by pypdf"
    assert figures.machine("tenk_to_report_xeon.json").startswith("Intel(R) Xeon(R) Processor, 2 cores") and \
        figures.machine("tenk_to_report_xeon.json").endswith("; PDFs read by pypdf")
    assert figures.machine("cli_cold.json").startswith("AMD EPYC") and "PDFs" not in figures.machine("cli_cold.json")
    assert figures.machine("hnsw_rule.json") == "Intel(R) Xeon(R) Processor, 16 cores"
    assert figures.machine("hnsw_rule_1m.json") == "AMD EPYC, 2 cores, avx2, avx512f, avx512_vnni, avx512_bf16"
    assert figures.machine("tenk_to_report.json").endswith("; PDFs read by pdfium")


def test_the_readme_is_a_first_visit():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= README_LIMIT, f"README.md is {len(readme.encode())} bytes; move a section to docs/"
    assert readme.index("make demo") < readme.index("## ") and "`make test` from nothing" in readme
    assert "docs/outside-stacks.md" in readme and "## Install" in readme
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("store", "pdf", "plots", "serve", "chat", "notebook", "lab", "compare", "polars", "s3", "azure", "ray",
                  "traces", "interop", "chroma", "lancedb", "qdrant", "postgres", "langchain", "llamaindex",
                  "haystack", "docs", "all"):
        assert f"`{extra}`" in readme or f"[{extra}]" in readme, f"the install table does not name {extra}"
        assert extra in declared, f"the install table names {extra}, which pyproject.toml does not declare"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_link_in_the_readme_and_the_pages_leads_somewhere():
    broken = []
    for path in pages():
        prose = BLOCK.sub("", path.read_text())
        for target in LINK.findall(prose):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            file = target.split("#", 1)[0]
            if not (path.parent / file).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_every_code_block_is_checked():
    """Python blocks compile (tests/test_readme.py runs them, tests/test_layout.py imports what they
    import); JSON lines, TOML and bash are read here; `text` blocks are a command's output."""
    from tests.test_docs_commands import check_command

    found = blocks()
    assert {lang for *_, lang, _ in found} <= {"python", "bash", "json", "toml", "text", ""}, \
        {f"{p.name}:{n}": lang for p, n, lang, _ in found if lang not in ("python", "bash", "json", "toml", "text", "")}
    for path, line, lang, code in found:
        where = f"{path.relative_to(ROOT)}:{line}"
        if lang == "python":
            ast.parse(code, filename=where)
        elif lang == "json":
            for row in code.splitlines():
                json.loads(row)
        elif lang == "toml":
            tomllib.loads(code)
        elif lang == "bash" or (lang == "" and code.lstrip().startswith("make")):
            for command in code.splitlines():
                argv = shlex.split(command, comments=True)  # a line is one command, as a shell reads it
                if argv[:1] == ["vectrixdb"]:
                    check_command(where, shlex.join(argv))
                elif argv:
                    assert argv[0] in ("make", "source", "pip", "jupyter", "python", "mkdocs"), \
                        f"{where}: `{command}` is a command these tests do not know"


def test_the_python_blocks_are_run():
    from tests.test_readme import BLOCKS, NEEDS_MORE

    assert len(BLOCKS) == len(blocks("python"))
    runnable = [b for b in BLOCKS if not any(word in b for word in NEEDS_MORE)]
    assert len(runnable) >= 10
