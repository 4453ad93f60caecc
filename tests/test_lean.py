"""The lean core (issue 48 item 1): `pip install vectrixdb` holds what scoring an outside retriever
needs, and every other part is an extra that says so when missing.

Two checks. The first reads the package's source: every import of a library outside the core's
dependencies sits in a `with needs("extra"):` block (vectrixdb/extras.py) naming an extra of
pyproject.toml that brings that library, or is optional by construction (under TYPE_CHECKING, or in
a `try` that catches ImportError). The second installs the built wheel, with the core's dependencies
from the package index and nothing else, into a fresh virtualenv and there: measures its size, imports
every module (each imports or raises MissingExtra, never ModuleNotFoundError), runs the README's
outside-retriever example and `vectrixdb --help`, asks each gated part for MissingExtra naming its
extra, and runs the evaluation tests that need nothing more (tests/conftest.py turns a test stopped by
a missing extra into a skip there; a floor of passes keeps that honest)."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement

from tests.conftest import PDFS, ROOT

PACKAGE = ROOT / "vectrixdb"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
HEAVY = ("torch", "openvino", "transformers", "sentence-transformers", "usearch", "bm25s", "pypdf", "matplotlib", "nncf")


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def closure(requirements: list[str]) -> set[str]:
    """Distributions (normalised names) these requirements bring, through what is installed here;
    `vectrixdb[x]` stands for extra x's own requirements."""
    seen: set[tuple[str, str]] = set()  # (distribution, the extra of it asked for; "" for its own requirements)
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        if _name(req.name) == "vectrixdb":
            for x in req.extras:
                todo += [(Requirement(r), "") for r in PYPROJECT["optional-dependencies"][x]]
            continue
        name = _name(req.name)
        wanted = [(name, "")] + [(name, x) for x in req.extras]
        for dist, x in wanted:
            if (dist, x) in seen:
                continue
            seen.add((dist, x))
            try:
                todo += [(Requirement(r), x) for r in md.requires(dist) or ()]
            except md.PackageNotFoundError:
                pass  # not installed here: its own requirements cannot be followed
    return {d for d, _ in seen}


def _imports(tree: ast.AST):
    """(node, top-level module, how it is guarded) for every absolute import in a module."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        guard, at = None, node
        while at in parents and guard is None:
            at = parents[at]
            if isinstance(at, ast.With):
                for item in at.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "needs":
                        guard = ("needs", call.args[0].value)  # type: ignore[attr-defined]
            elif isinstance(at, ast.If) and "TYPE_CHECKING" in ast.unparse(at.test):
                guard = ("typing", None)
            elif isinstance(at, ast.Try) and any("ImportError" in ast.unparse(h.type or ast.Name("")) for h in at.handlers):
                guard = ("optional", None)
        for module in modules:
            yield node, module.split(".")[0], guard


def test_every_import_outside_the_core_is_in_a_needs_block_of_an_extra_that_brings_it():
    from vectrixdb.extras import PARTS

    extras = PYPROJECT["optional-dependencies"]
    assert set(PARTS) <= set(extras), f"extras.PARTS names extras pyproject.toml lacks: {set(PARTS) - set(extras)}"
    core = closure(PYPROJECT["dependencies"])
    assert not core & {_name(h) for h in HEAVY}, f"the core brings {core & {_name(h) for h in HEAVY}}"
    dists = {module: {_name(d) for d in names} for module, names in md.packages_distributions().items()}
    stdlib = set(sys.stdlib_module_names) | {"__future__", "vectrixdb"}
    wrong, brought = [], {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node, module, guard in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if module in stdlib:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno} import {module}"
            of = dists.get(module)
            assert of, f"{where}: no installed distribution provides it (the test environment lacks it)"
            if of & core:
                continue
            if guard is None:
                wrong.append(f"{where}: outside the core and not in a `with needs(extra):` block")
            elif guard[0] == "needs":
                extra = guard[1]
                if extra not in brought:
                    brought[extra] = closure([f"vectrixdb[{extra}]"]) if extra in extras else set()
                if not of & brought[extra]:
                    wrong.append(f"{where}: in needs({extra!r}), but that extra does not bring {sorted(of)}")
    assert not wrong, "\n".join(wrong)


# -- the core alone, in a fresh virtualenv ------------------------------------------------------------

# The evaluation tests the core run takes: files whose tests mostly need nothing more. A test in them
# that needs an extra (a Vectrix collection, pytrec_eval) is skipped there, naming it.
CORE_FILES = ("test_metrics.py", "test_stats.py", "test_golden.py", "test_retrieval.py", "test_power.py",
              "test_ppi.py", "test_settings.py", "test_directions.py", "test_conversations.py",
              "test_experiments.py", "test_interop.py", "test_judgement_holes.py", "test_cutoff.py", "test_roles.py")
CORE_PASSES = 175  # 190 passed when written (the rest need an extra); a core path that starts needing one drops below
PROBES = r"""
import os, tempfile
os.environ["VECTRIXDB_HOME"] = tempfile.mkdtemp()
from vectrixdb.errors import MissingExtra

def gated(what, extra, call):
    try:
        call()
    except MissingExtra as error:
        assert f"'{extra}' extra" in str(error) and f"vectrixdb[{extra}]" in str(error), (what, str(error))
        print(what, "->", extra)
        return
    raise AssertionError(f"{what}: no MissingExtra")

from vectrixdb import Vectrix
from vectrixdb.evaluation import ChatWriter, retrieval_report
from vectrixdb.reading import read
from vectrixdb import io

report = retrieval_report(lambda q: ["deferment.md"], __GOLDEN__, k=(1,))
gated("Vectrix", "store", lambda: Vectrix("notes"))
gated("read a PDF", "pdf", lambda: read(__PDF__))
gated("a report's plot", "plots", lambda: report.plot())
gated("s3://", "s3", lambda: io.read_bytes("s3://bucket/golden.jsonl"))
gated("the dashboard", "serve", lambda: __import__("vectrixdb.server.app"))
gated("a chat model", "chat", lambda: ChatWriter("http://127.0.0.1:9/v1", model="m").ask("hi"))
gated("to_ranx", "compare", lambda: __import__("vectrixdb.evaluation.retrieval.interop", fromlist=["x"]).to_ranx({}))
print("text read:", len(read(__TEXT__).pages), "page")
"""
IMPORT_ALL = r"""
import importlib, pkgutil, vectrixdb
from vectrixdb.errors import MissingExtra
gated = []
for m in pkgutil.walk_packages(vectrixdb.__path__, "vectrixdb."):
    if m.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(m.name)
    except MissingExtra:
        gated.append(m.name)
print("gated:", " ".join(gated))
"""


def run(*args, **kw) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **kw)
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def readme_example() -> str:
    """The README's outside-retriever example, the first Python block that defines my_retriever."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    [block] = [b for b in blocks if "def my_retriever" in b][:1]
    return block


@pytest.mark.slow
def test_the_core_alone_scores_an_outside_retriever_and_names_the_extra_of_every_other_part(tmp_path):
    from vectrixdb.version import __version__

    dist, scratch = tmp_path / "dist", ROOT / "build"
    had_scratch = scratch.exists()
    try:
        run(sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, ROOT)
    finally:
        if not had_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    wheel = dist / f"vectrixdb-{__version__}-py3-none-any.whl"
    core = tmp_path / "core"
    run(sys.executable, "-m", "venv", core)
    python = core / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", wheel)  # the core's dependencies from the package index
    [site] = list((core / "lib").glob("python3*/site-packages"))
    installed = {_name(line.split("==")[0]) for line in run(python, "-m", "pip", "freeze", "--all").splitlines()}
    assert not installed & {_name(h) for h in HEAVY}, installed & {_name(h) for h in HEAVY}
    size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file()) / 2**20
    tools = sum(f.stat().st_size for t in ("pip", "setuptools") for f in site.glob(f"{t}*/**/*") if f.is_file()) / 2**20
    print(f"core install: {len(installed)} distributions, {size:.0f} MiB of site-packages ({size - tools:.0f} MiB without pip)")
    assert size - tools < 450, f"the core takes {size - tools:.0f} MiB (goal about 350)"

    gated = run(python, "-c", IMPORT_ALL, cwd=tmp_path).split()
    assert "vectrixdb.server.app" in gated and "vectrixdb.evaluation.retrieval.scoring" not in gated, gated
    assert "Usage: vectrixdb" in run(core / "bin" / "vectrixdb", "--help", cwd=tmp_path)
    example = readme_example().replace('"data/golden/sample.jsonl"', repr(str(ROOT / "data" / "golden" / "sample.jsonl")))
    printed = run(python, "-c", "import vectrixdb; print(vectrixdb.__file__)\n" + example, cwd=tmp_path).splitlines()
    assert printed[0].startswith(str(site)), printed  # the wheel's copy, not this tree
    assert printed[-1].startswith("{1: 0.333"), printed
    probes = (PROBES.replace("__GOLDEN__", repr(str(ROOT / "data" / "golden" / "sample.jsonl")))
              .replace("__PDF__", repr(str(PDFS / "uber_2021.pdf")))  # the shared data, wherever it is set
              .replace("__TEXT__", repr(str(ROOT / "data" / "sample" / "deferment.md"))))
    out = run(python, "-c", probes, cwd=tmp_path)
    assert out.count("->") == 7 and "text read: 1 page" in out, out

    run(python, "-m", "pip", "install", "-q", "pytest", "hypothesis")
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rs",
                           *(f"tests/{f}" for f in CORE_FILES)], capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env={"PATH": f"{core / 'bin'}:/usr/bin:/bin", "VECTRIXDB_CORE_ONLY": "1", "HOME": str(tmp_path)})
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    passed = int(re.search(r"(\d+) passed", tail).group(1))  # type: ignore[union-attr]
    print(tail.splitlines()[-1])
    assert passed >= CORE_PASSES, tail
