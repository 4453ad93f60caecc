"""Cells are keyed by the code that computes them (executors.code_digest): a chunker edited in a
copy of the package recomputes its builds instead of handing back what the old code kept in
cells.sqlite. Each step runs in a fresh process whose PYTHONPATH puts the copy first."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

from tests.conftest import ROOT

BUILD = """
import json, vectrixdb
from vectrixdb.evaluation.chunking.compare import make_builds
from vectrixdb.executors import code_digest
from vectrixdb.reading import Document, Page
text = " ".join(f"word{i}" for i in range(400))
doc = Document("d.md", text, (Page(1, 0, len(text)),))
(build,) = make_builds({"c": [doc]}, [("fixed", 300, False)], None)
print(json.dumps({"package": vectrixdb.__file__, "code": code_digest(), "chunks": build.chunks,
                  "spans": build.spans["c"]}))
"""


def build(copy, home) -> dict:
    env = {**os.environ, "PYTHONPATH": str(copy), "VECTRIXDB_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", BUILD], env=env, cwd=copy, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def kept(home) -> int:
    with sqlite3.connect(home / "cells.sqlite") as conn:
        return conn.execute("SELECT COUNT(*) FROM cells").fetchone()[0]


def test_an_edited_chunker_in_a_copy_of_the_package_recomputes_its_builds(tmp_path):
    copy, home = tmp_path / "copy", tmp_path / "home"
    shutil.copytree(ROOT / "vectrixdb", copy / "vectrixdb", ignore=shutil.ignore_patterns("__pycache__"))
    first = build(copy, home)
    assert first["package"].startswith(str(copy)) and first["chunks"] > 1 and kept(home) == 1
    again = build(copy, home)
    assert again == first and kept(home) == 1  # same code, same key: read back, nothing new kept
    fixed = copy / "vectrixdb" / "chunking" / "fixed.py"
    source = fixed.read_text()
    body = "    text, n = doc.markdown, len(doc.markdown)\n"
    assert source.count(body) == 1
    fixed.write_text(source.replace(body, "    chunk_size = chunk_size // 2  # the edit\n" + body))
    edited = build(copy, home)
    assert edited["code"] != first["code"] and kept(home) == 2  # a new key, computed and kept beside the old
    assert edited["chunks"] > first["chunks"]  # the edited chunker's windows, not the kept builds
    assert max(e - s for _, s, e in edited["spans"]) <= 150 < max(e - s for _, s, e in first["spans"])


CHUNKER_MODULE = '''"""A chunker of the user's own, outside the package: pieces of WIDTH(chunk_size) characters."""
from vectrixdb.chunking.base import cut_fixed, make_chunks, register

LOG = {log!r}
SHARE = {share}


def width(size):
    return size // SHARE


@register("trial_user_cut")
def user_cut(doc, *, chunk_size, overlap, embedder=None):
    with open(LOG, "a") as f:
        f.write("call\\n")
    return make_chunks(doc, cut_fixed(doc.markdown, 0, len(doc.markdown), width(chunk_size)))
'''


def test_a_users_chunker_edited_and_reregistered_recomputes_its_builds(tmp_path, monkeypatch):
    """A chunker registered from a module outside the package (here a file in tmp_path) is part of
    its builds' keys by its code (vectrixdb/code_identity.py): the same code is a cache hit, an edit
    to a constant or a helper of its module, reloaded, recomputes; an edit on disk that was not
    reloaded still runs, and is keyed as, the old code."""
    import importlib

    from vectrixdb.chunking.base import CHUNKERS
    from vectrixdb.evaluation.chunking.compare import make_builds
    from vectrixdb.reading import Document, Page

    home, log, source = tmp_path / "home", tmp_path / "calls.log", tmp_path / "trial_user_chunker.py"
    monkeypatch.setenv("VECTRIXDB_HOME", str(home))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # a reload reads the edited source, never a stale .pyc
    monkeypatch.syspath_prepend(str(tmp_path))
    text = " ".join(f"word{i}" for i in range(400))
    doc = Document("d.md", text, (Page(1, 0, len(text)),))

    def build() -> dict:
        (got,) = make_builds({"c": [doc]}, [("trial_user_cut", 300, False)], None)
        return {"chunks": got.chunks, "widest": max(e - s for _, s, e in got.spans["c"]),
                "calls": log.read_text().count("call") if log.exists() else 0, "kept": kept(home)}

    source.write_text(CHUNKER_MODULE.format(log=str(log), share=1))
    try:
        module = importlib.import_module("trial_user_chunker")
        first = build()
        assert first["calls"] == 1 and first["kept"] == 1 and 150 < first["widest"] <= 300
        assert build() == first  # same code: read back from cells.sqlite, the chunker not called
        module = importlib.reload(module)  # the same code reloaded (and re-registered): still a hit
        assert build() == first

        source.write_text(CHUNKER_MODULE.format(log=str(log), share=2))  # the module's constant: half the width
        assert build() == first  # not reloaded: the old code runs, keyed as the old code
        module = importlib.reload(module)
        halved = build()
        assert halved["calls"] == 2 and halved["kept"] == 2  # a new key, computed and kept beside the old
        assert halved["widest"] <= 150 and halved["chunks"] > first["chunks"]

        source.write_text(CHUNKER_MODULE.format(log=str(log), share=2).replace("return size // SHARE",
                                                                               "return size // SHARE // 2"))
        importlib.reload(module)  # a helper of the chunker's module edited: followed, so recomputed
        quarter = build()
        assert quarter["calls"] == 3 and quarter["kept"] == 3 and quarter["widest"] <= 75
    finally:
        CHUNKERS.pop("trial_user_cut", None)
        sys.modules.pop("trial_user_chunker", None)


def test_code_without_python_source_is_keyed_by_name_with_one_warning(monkeypatch):
    """A builtin has no code to read: its cells are keyed by its qualified name and a warning says
    once that edits to it will not be noticed. A lambda made without any source file (a REPL's)
    still has its code object, so it is keyed by its code, with no warning."""
    import warnings

    import pytest

    from vectrixdb import code_identity as ci
    from vectrixdb.executors import Cell

    monkeypatch.setattr(ci, "_warned", set())
    with pytest.warns(RuntimeWarning, match=r"builtins\.max has no Python code to read.*will not be noticed"):
        one = Cell(json.dumps, {"x": 1}, code=(max,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the second cell is keyed silently the same way
        assert Cell(json.dumps, {"x": 1}, code=(max,)).key == one.key
        assert ci.code_identity(max).startswith("builtins.max#")
        assert ci.code_identity(max) == ci.code_identity(max)
        made: dict = {}
        exec("cut = lambda doc, **kw: [doc] * 2", made)  # no file, no linecache entry
        before = ci.code_identity(made["cut"])
        exec("cut = lambda doc, **kw: [doc] * 3", made)
        assert ci.code_identity(made["cut"]) != before
        exec("cut = lambda doc, **kw: [doc] * 2", made)
        assert ci.code_identity(made["cut"]) == before  # the same code: the same identity
        assert Cell(json.dumps, {"x": 1}, code=(made["cut"],)).key != one.key
    with pytest.warns(RuntimeWarning, match=r"builtins\.min has no Python code"):  # another builtin: its own warning
        assert ci.code_identity(min) != ci.code_identity(max)


def test_a_sweep_builds_a_users_edited_chunker_again(tmp_path, monkeypatch):
    """The same rule for sweep's builds (a scratch collection each, embedded with the bundled model):
    kept while the chunker's code is the same, built again once its edit is reloaded."""
    import importlib

    from vectrixdb.chunking.base import CHUNKERS
    from vectrixdb.evaluation import Question, sweep

    home, log, source = tmp_path / "home", tmp_path / "calls.log", tmp_path / "trial_sweep_chunker.py"
    monkeypatch.setenv("VECTRIXDB_HOME", str(home))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    docs = {"loans": "Loan payments may be deferred after a disaster. " * 12, "cards": "Report a stolen card. " * 20}
    qs = [Question("Can I defer a loan payment?", None, ["loans"], "q1")]

    def run() -> tuple[int, int, int]:
        report = sweep(docs, qs, chunk=["trial_user_cut"], chunk_size=[300], k=(1, 2), progress=False)
        return int(report["best"]["chunks"]), log.read_text().count("call"), kept(home)

    source.write_text(CHUNKER_MODULE.format(log=str(log), share=1))
    try:
        module = importlib.import_module("trial_sweep_chunker")
        first = run()
        assert first[1] == 2 and first[2] == 1  # one call per document, one build kept
        assert run() == first
        source.write_text(CHUNKER_MODULE.format(log=str(log), share=3))
        importlib.reload(module)
        chunks, calls, builds = run()
        assert calls == 4 and builds == 2 and chunks > first[0]
    finally:
        CHUNKERS.pop("trial_user_cut", None)
        sys.modules.pop("trial_sweep_chunker", None)


def test_every_global_a_users_chunker_names_is_keyed_or_warned_about(tmp_path, monkeypatch):
    """The rule of code_identity.py: a global is hashed by what it holds, whichever module it came
    from (lists, dicts, sets, regexes, enums, instances of the user's classes, helpers imported
    from another module or read as `module.attr`); an edited and reloaded value changes the key,
    the same value keeps it; a value that cannot be keyed (an open file) is warned about once,
    naming the global and the function."""
    import functools
    import importlib
    import warnings

    import pytest

    from vectrixdb import code_identity as ci

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(ci, "_warned", set())
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cut = "def cut(doc, *, chunk_size, overlap, embedder=None):\n    return {}\n"
    cases = {  # module name: (other module's source before, after, chunker module source before, after)
        "ci_list": ("", "", "SEPS = ['\\n\\n']\n", "SEPS = ['\\n']\n", "doc.split(SEPS[0])"),
        "ci_dict": ("", "", "OPT = {'w': {'n': [1]}}\n", "OPT = {'w': {'n': [2]}}\n", "OPT['w']"),
        "ci_set": ("", "", "S = {'a', 'b'}\n", "S = {'a', 'c'}\n", "S"),
        "ci_re": ("", "", "import re\nPAT = re.compile('x')\n", "import re\nPAT = re.compile('x', re.I)\n",
                  "PAT.split(doc)"),
        "ci_enum": ("", "", "import enum\nclass K(enum.Enum):\n    A = 1\nMODE = K.A\n",
                    "import enum\nclass K(enum.Enum):\n    A = 2\nMODE = K.A\n", "MODE"),
        "ci_from": ("def width(n):\n    return n\n", "def width(n):\n    return n // 2\n",
                    "from ci_from_h import width\n", "from ci_from_h import width\n", "width(chunk_size)"),
        "ci_attr": ("def width(n):\n    return n\n", "def width(n):\n    return n // 2\n",
                    "import ci_attr_h\n", "import ci_attr_h\n", "ci_attr_h.width(chunk_size)"),
        "ci_obj": ("class Cfg:\n    def __init__(self, w):\n        self.w = w\n",
                   "class Cfg:\n    def __init__(self, w):\n        self.w = w\n",
                   "from ci_obj_h import Cfg\nCFG = Cfg(3)\n", "from ci_obj_h import Cfg\nCFG = Cfg(4)\n", "CFG.w"),
    }

    def key(name: str, helper: str, head: str, body: str) -> str:
        (tmp_path / f"{name}_h.py").write_text(helper)
        (tmp_path / f"{name}.py").write_text(head + cut.format(body))
        for mod in (f"{name}_h", name):
            if mod in sys.modules:
                importlib.reload(sys.modules[mod])
            else:
                importlib.import_module(mod)
        return ci.code_identity(sys.modules[name].cut)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every one of these is keyable: no warning
            for name, (h1, h2, m1, m2, body) in cases.items():
                first = key(name, h1, m1, body)
                assert key(name, h1, m1, body) == first, name  # the same code and values: the same key
                assert key(name, h2, m2, body) != first, name  # an edited value or helper: another key
            obj = cases["ci_obj"]
            assert key("ci_obj", obj[0], obj[2], obj[4]) == first  # the same state again: the first key

            def base(doc, *, chunk_size, overlap, embedder=None, cfg=None):
                return [doc]

            one = functools.partial(base, cfg=sys.modules["ci_obj"].Cfg(3))  # repr holds an address
            assert ci.code_identity(one) == ci.code_identity(functools.partial(base, cfg=sys.modules["ci_obj"].Cfg(3)))
            assert ci.code_identity(one) != ci.code_identity(functools.partial(base, cfg=sys.modules["ci_obj"].Cfg(5)))
        with open(tmp_path / "ci_list.py") as handle:
            (tmp_path / "ci_file.py").write_text(cut.format("HANDLE.name"))
            module = importlib.import_module("ci_file")
            module.HANDLE = handle
            with pytest.warns(RuntimeWarning, match=r"the global 'HANDLE' of ci_file\.cut is a _io\.TextIOWrapper"):
                ci.code_identity(module.cut)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # once per global and function
                ci.code_identity(module.cut)
    finally:
        for name in [*cases, "ci_file"]:
            sys.modules.pop(name, None)
            sys.modules.pop(f"{name}_h", None)


def test_two_different_partials_under_one_chunker_name_are_refused(monkeypatch):
    """register compares a functools.partial by its function and its arguments' values: the same
    partial again (a module reloaded) replaces it, another function or other arguments under the
    taken name are refused; an argument that is an object of the user's own class is keyed by its
    class and attributes (not its repr's address), one that cannot be keyed is warned about once."""
    import functools
    import warnings

    import pytest

    from vectrixdb import code_identity as ci
    from vectrixdb.chunking.base import CHUNKERS, register
    from vectrixdb.errors import BadInput

    def a(doc, *, chunk_size, overlap, embedder=None, share=1, cfg=None):
        return ["a"]

    def b(doc, *, chunk_size, overlap, embedder=None, share=1, cfg=None):
        return ["b"]

    class Cfg:
        def __init__(self, w):
            self.w = w

    monkeypatch.setattr(ci, "_warned", set())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            register("trial_partial")(functools.partial(a, share=2, cfg=Cfg(1)))
            register("trial_partial")(functools.partial(a, share=2, cfg=Cfg(1)))  # equal: replaces, no error
            for other in (functools.partial(b, share=2, cfg=Cfg(1)), functools.partial(a, share=3, cfg=Cfg(1)),
                          functools.partial(a, share=2, cfg=Cfg(2))):
                with pytest.raises(BadInput, match=r"'trial_partial' is registered twice: by partial\(.*\.a, arguments"):
                    register("trial_partial")(other)
        assert CHUNKERS["trial_partial"](None, chunk_size=1, overlap=0) == ["a"]
        with open(__file__) as handle:
            with pytest.warns(RuntimeWarning, match=r"an argument of the partial of .*\.a is a _io\.TextIOWrapper"):
                register("trial_partial_file")(functools.partial(a, cfg=handle))
    finally:
        CHUNKERS.pop("trial_partial", None)
        CHUNKERS.pop("trial_partial_file", None)


CUT = "def cut(doc, *, chunk_size, overlap, embedder=None):\n    return {}\n"


def _made(source: str):
    """The `cut` a module of the user's own defines (no file, as a notebook cell's): `source` is run
    as a fresh module `ci_made` (in sys.modules while it runs: a dataclass looks itself up there)."""
    import types

    module = types.ModuleType("ci_made")
    sys.modules["ci_made"] = module
    try:
        exec(source, vars(module))
    finally:
        del sys.modules["ci_made"]
    return module.cut


def test_a_helpers_default_changes_the_key_not_the_id_of_a_freed_temporary():
    """Keys hash values, never the id of an object already freed: two chunkers that differ only in
    a default of a helper they call (through another helper) get two keys (the tuple holding a
    function's defaults is made for the walk and freed; its id came back for the helper's, which was
    then skipped as met). A value met twice is keyed as that one value: C = A and C = B are two keys."""
    from vectrixdb import code_identity as ci

    helper = ("def split(text, width={}):\n    return [text[i:i + width] for i in range(0, len(text), width)]\n"
              "def pieces(text, size=2):\n    return split(text)[:size]\n" + CUT.format("pieces(doc)"))
    narrow, wide = (ci.code_identity(_made(helper.format(w))) for w in (100, 5000))
    assert narrow != wide
    assert ci.code_identity(_made(helper.format(100))) == narrow
    lists = "A = [1]\nB = [2]\nC = {}\n" + CUT.format("A + B + C")
    assert ci.code_identity(_made(lists.format("A"))) != ci.code_identity(_made(lists.format("B")))
    assert ci.code_identity(_made(lists.format("A"))) == ci.code_identity(_made(lists.format("A")))


def test_every_dataclass_instance_in_a_global_list_is_keyed():
    """Each instance of a list is keyed by its fields: the second one's edit changes the key (its
    fields were gathered in a dict made and freed like the first's, whose id it took)."""
    from vectrixdb import code_identity as ci

    source = ("import dataclasses\n@dataclasses.dataclass\nclass Cfg:\n    w: int\n"
              "CFGS = [Cfg(1), Cfg({}), Cfg(7)]\n" + CUT.format("[c.w for c in CFGS]"))
    keys = [ci.code_identity(_made(source.format(w))) for w in (2, 3, 2)]
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_a_global_nested_too_deep_is_keyed_by_its_type_with_one_warning(monkeypatch):
    """A linked structure deeper than code_identity.DEPTH (500 nodes) is not a RecursionError: the
    global is keyed by its type and what lies above the cut, with one RuntimeWarning naming the
    global and the function and saying what to do. One within the bound is keyed whole: its last
    node's edit changes the key."""
    import warnings

    import pytest

    from vectrixdb import code_identity as ci

    monkeypatch.setattr(ci, "_warned", set())
    chain = ("class Node:\n    def __init__(self, nxt, w=0):\n        self.nxt, self.w = nxt, w\n"
             "HEAD = Node(None, {})\nfor _ in range({}):\n    HEAD = Node(HEAD)\n" + CUT.format("HEAD"))
    with pytest.warns(RuntimeWarning, match=r"the global 'HEAD' of ci_made\.cut is a structure nested more than"):
        deep = ci.code_identity(_made(chain.format(1, 500)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ci.code_identity(_made(chain.format(1, 500))) == deep  # warned once; the same key again
        shallow = [ci.code_identity(_made(chain.format(w, 30))) for w in (1, 2)]
    assert shallow[0] != shallow[1]
