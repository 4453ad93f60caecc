"""The package's layout holds (issue 27, item 3):
(a) every import that README.md, the documentation pages (docs/) and the two spec documents show still
    imports, from the place shown, and every dotted `vectrixdb.…` path they name is a module or a name of one;
(b) the package's modules import each other without a circle, counting imports made inside
    functions (only `if TYPE_CHECKING:` blocks, which never run, are left out), and nothing outside
    vectrixdb.server, vectrixdb.export and vectrixdb.cli imports those three (they sit on top).
"""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from tests.conftest import ROOT, SHARED_DATA

PACKAGE = ROOT / "vectrixdb"
SPEC = SHARED_DATA.parent / "spec"  # ../shared/spec, beside the shared data conftest.py reads
TOP = ("vectrixdb.server", "vectrixdb.export", "vectrixdb.cli")
IMPORT = re.compile(r"^\s*(?:from\s+(?P<mod>vectrixdb[\w.]*)\s+import\s+(?P<names>\([^)]*\)|[^#\n]+)"
                    r"|import\s+(?P<plain>vectrixdb[\w.]*(?:\s*,\s*vectrixdb[\w.]*)*))", re.M)
DOTTED = re.compile(r"(?<![\w./])vectrixdb(?:\.\w+)+")


def docs() -> list[Path]:
    spec = sorted(SPEC.glob("*.txt"))
    assert len(spec) == 2, f"expected the two spec documents in {SPEC}, found {[p.name for p in spec]}"
    from tests.test_docs_site import pages

    return [*pages(), *spec]


def doc_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None for `import module`) for every vectrixdb import the text shows."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in IMPORT.finditer(text):
        line = text.count("\n", 0, m.start()) + 1 + (text[m.start()] == "\n")
        if m["plain"]:
            out += [(line, mod.strip(), None) for mod in m["plain"].split(",")]
            continue
        for part in m["names"].strip("() \n").split(","):
            name = part.split(" as ")[0].strip()
            if name:
                out.append((line, m["mod"], name))
    return out


def test_documented_imports_import():
    failures, seen = [], 0
    for path in docs():
        for line, mod, name in doc_imports(path):
            seen += 1
            try:
                module = importlib.import_module(mod)
                if name is not None and not hasattr(module, name):
                    importlib.import_module(f"{mod}.{name}")  # `from package import submodule`
            except Exception as exc:  # noqa: BLE001 - every failure is listed, naming doc and line
                failures.append(f"{path.name}:{line}: from {mod} import {name}: {type(exc).__name__}: {exc}")
    assert seen >= 15, f"only {seen} vectrixdb imports found in the README and the spec: is the parsing broken?"
    assert not failures, "documented imports that no longer work:\n" + "\n".join(failures)


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_readme_module_paths_exist():
    from tests.test_docs_site import pages

    text = "\n".join(page.read_text(encoding="utf-8") for page in pages())  # the README and the site's pages
    named = sorted({m.group(0).rstrip(".") for m in DOTTED.finditer(text)})
    assert "vectrixdb.evaluation" in named
    from vectrixdb.registry import KINDS

    from vectrixdb.evaluation.retrieval.traces import QUESTION_ID

    groups = {kind.group for kind in KINDS.values()}  # entry-point groups: names, not modules
    groups.add(QUESTION_ID)  # a span attribute's name
    missing = [d for d in named if d not in groups and not resolves(d)]
    assert not missing, f"README.md or docs/ name module paths that do not exist: {missing}"


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
                                         or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The package modules `name` imports anywhere in its file (module level or in a function), with
    the first line of each; `from pkg import sub` counts as importing pkg.sub."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for block in ast.walk(tree) if _type_checking(block) for s in block.body for n in ast.walk(s)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def known_prefix(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [known_prefix(a.name) for a in node.names if a.name.split(".")[0] == "vectrixdb"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "vectrixdb":
                continue
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else known_prefix(base) for a in node.names]
        for target in targets:
            if target and target != name:
                out.setdefault(target, node.lineno)
    return out


def graph() -> dict[str, dict[str, int]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in sorted(known.items())}


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan), written a -> b -> ... -> a."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in edges:
        if v not in index:
            visit(v)
    out = []
    for group in groups:  # a path back to the start inside the group, for the message
        start, inside = group[0], set(group)
        path, seen = [start], {start}
        while True:
            step = next((w for w in edges[path[-1]] if w == start and len(path) > 1), None) or \
                next((w for w in edges[path[-1]] if w in inside and w not in seen), None)
            if step is None or step == start:
                break
            path.append(step)
            seen.add(step)
        out.append(path + [start])
    return out


def test_graph_sees_imports_inside_functions():
    edges = graph()
    assert "vectrixdb.collection" in edges["vectrixdb"], "the lazy `Vectrix` import in vectrixdb/__init__ is an edge"
    assert "vectrixdb.ingest" in edges["vectrixdb.collection"], "collection's in-function import of ingest is an edge"
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {}}) == [["a", "b", "c", "a"]]


def test_no_import_circles():
    edges = graph()
    found = cycles(edges)
    lines = []
    for path in found:
        lines.append(" -> ".join(path) + "   (" + ", ".join(
            f"{a} line {edges[a][b]}" for a, b in zip(path, path[1:]) if b in edges[a]) + ")")
    assert not found, "import circles (imports inside functions count):\n" + "\n".join(lines)


def test_nothing_below_imports_server_export_or_cli():
    def top(module: str) -> bool:
        return any(module == t or module.startswith(t + ".") for t in TOP)

    bad = [f"{name} imports {target} (line {line})" for name, targets in graph().items() if not top(name)
           for target, line in targets.items() if top(target)]
    assert not bad, "modules below server/, export/ and cli/ must not import them:\n" + "\n".join(bad)


def flow() -> list[list[str]]:
    """The layers vectrixdb/__init__.py's docstring lists, bottom first, as glob patterns of
    top-level module names (`embedding*.py` -> `embedding*`, `chat/` -> `chat`)."""
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))) or ""
    table = doc.split("The flow, bottom to top", 1)[1].split("\n", 1)[1]
    layers = []
    for line in table.splitlines():
        m = re.match(r"^ {4}(\S.*?)(?: {2,}|$)", line)
        if m:
            layers.append([name.strip().removesuffix("/").removesuffix(".py") for name in m.group(1).split(",")])
    return layers


def test_flow_in_the_package_docstring_holds():
    import fnmatch

    layers = flow()
    assert len(layers) >= 8 and layers[-1] == ["server", "export", "cli"], layers

    def layer(module: str) -> int | None:
        top = module.split(".")[1] if "." in module else None
        if top is None:  # vectrixdb itself: its lazy `Vectrix` reaches collection.py, nothing above
            return None
        return next((i for i, names in enumerate(layers) if any(fnmatch.fnmatch(top, n) for n in names)), -1)

    edges = graph()
    unlisted = sorted({m.split(".")[1] for m in edges if layer(m) == -1})
    assert not unlisted, f"add {unlisted} to the flow in vectrixdb/__init__.py's docstring (the map of the package)"
    upward = [f"{m} imports {t} (line {line}), which the flow lists above it" for m, targets in edges.items()
              for t, line in targets.items() if layer(m) is not None and layer(t) is not None and layer(t) > layer(m)]
    assert not upward, "\n".join(upward)
