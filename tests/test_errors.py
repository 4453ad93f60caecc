"""One error family: every error a user can cause is a VectrixError (vectrixdb/errors.py), the CLI
gives each kind one line and its exit status, and a checksum mismatch shows expected and actual.

The walk reads every raise statement in the package (ast): one that raises a built-in exception
is a failure unless INTERNAL lists it with the reason it cannot be a user's doing."""
from __future__ import annotations

import ast
import builtins
import json

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT
from vectrixdb import errors
from vectrixdb.cli.commands import EXIT_CODES, app, exit_code

PACKAGE = ROOT / "vectrixdb"
BUILTIN = {name for name, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}

# (file, function, exception): raises no user can cause, each caught inside the package or a bug guard.
INTERNAL = {
    ("store/derived.py", "_read", "NotImplementedError"),  # abstract: each derived index implements it
    ("store/derived.py", "_stamp_bytes", "NotImplementedError"),  # abstract: each derived index names its stamp
    ("store/keywords.py", "save", "RuntimeError"),  # invariant: save() right after a build, never from outside
    ("store/vectors.py", "save", "RuntimeError"),  # the same invariant for the vector index
    ("evaluation/runs/saved.py", "_constant", "ValueError"),  # json's parse_constant hook; parse() turns it into a reason
    ("chat/cache.py", "put", "ValueError"),  # the writer caches answers only; a bug guard, not reachable by a user
    # Python's attribute protocol: getattr/hasattr and copy expect AttributeError from these
    ("__init__.py", "__getattr__", "AttributeError"),
    ("evaluation/__init__.py", "__getattr__", "AttributeError"),
    ("chat/__init__.py", "__getattr__", "AttributeError"),
    ("cli/__init__.py", "__getattr__", "AttributeError"),
    ("evaluation/runs/report.py", "__getattr__", "AttributeError"),
    ("evaluation/runs/store.py", "__getattr__", "AttributeError"),
    ("evaluation/chunking/compare.py", "__getattr__", "AttributeError"),  # TECHNIQUES, read from the registry
    ("reading/__init__.py", "__getattr__", "AttributeError"),  # SUFFIXES, read from the registry
    ("collection.py", "__setattr__", "AttributeError"),  # a principal's view is frozen, as a frozen dataclass is
    # after a loop that always returns: a bug guard
    ("chat/writer.py", "_ask_model", "AssertionError"),
    ("evaluation/retrieval/metrics.py", "_score_array", "AssertionError"),
}


class _Raises(ast.NodeVisitor):
    """Each raise of a built-in exception with the innermost function around it."""

    def __init__(self, file: str):
        self.file, self.stack, self.found = file, ["<module>"], []

    def visit_FunctionDef(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Raise(self, node):
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(target, ast.Name) and target.id in BUILTIN:
            self.found.append((self.file, self.stack[-1], target.id, node.lineno))


def raises() -> list[tuple[str, str, str, int]]:
    """(file, enclosing function, built-in raised, line) for each raise of a built-in exception."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        walker = _Raises(path.relative_to(PACKAGE).as_posix())
        walker.visit(ast.parse(path.read_text(encoding="utf-8")))
        out += walker.found
    return out


def test_every_raise_in_the_package_is_a_vectrix_error_or_listed_as_internal():
    found = raises()
    sites = {(f, fn, name) for f, fn, name, _ in found}
    public = [f"vectrixdb/{f}:{line} in {fn}(): raise {name}" for f, fn, name, line in found
              if (f, fn, name) not in INTERNAL]
    assert not public, "raise a VectrixError kind (vectrixdb/errors.py) instead:\n" + "\n".join(public)
    assert INTERNAL <= sites, f"listed as internal but no longer raised: {sorted(INTERNAL - sites)}"
    planted = _Raises("x.py")
    planted.visit(ast.parse("def f():\n    def g():\n        raise ValueError('x')\n    raise KeyError(1)\n"))
    assert planted.found == [("x.py", "g", "ValueError", 3), ("x.py", "f", "KeyError", 4)]  # the walk sees them


def test_every_kind_derives_from_the_builtin_a_caller_already_catches():
    assert issubclass(errors.BadInput, ValueError) and issubclass(errors.BadType, TypeError)
    assert issubclass(errors.BadType, ValueError) and issubclass(errors.NotFound, FileNotFoundError)
    assert issubclass(errors.AlreadyExists, FileExistsError) and issubclass(errors.ChecksumMismatch, ValueError)
    kinds = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, errors.VectrixError)]
    assert all(any(isinstance(kind("x") if kind is not errors.ChecksumMismatch else kind("f", "a", "b"), k)
                   for k, _, _ in EXIT_CODES) for kind in kinds)


def test_the_cli_gives_each_kind_one_line_and_its_exit_status(tmp_path):
    runner = CliRunner()
    codes = {kind: code for kind, code, _ in reversed(EXIT_CODES)}
    missing = runner.invoke(app, ["search", "nowhere", "a question", "--path", str(tmp_path)])
    assert missing.exit_code == codes[errors.NotFound] == 3, missing.output
    assert missing.output.startswith("error: ") and "Traceback" not in missing.output
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"question": "q?", "expected": ["a"]}) + "\n")
    bad = runner.invoke(app, ["golden", "check", str(golden), "--as", "group=staff"])
    assert bad.exit_code == codes[errors.BadInput] == 2 and bad.output == "error: --as needs --collection: a principal sees a collection\n"
    checked = runner.invoke(app, ["golden", "check", str(golden)])
    assert checked.exit_code == 0, checked.output  # a check that passes; one that fails exits 1, not an error
    assert exit_code(errors.AlreadyExists("x")) == 4 and exit_code(errors.Refused("no")) == 6
    assert exit_code(errors.ChecksumMismatch("f", "a", "b")) == 5 and exit_code(errors.VectrixError("?")) == 7
    shown = runner.invoke(app, ["--help"])
    assert all(f"{code} {kind.__name__}" in " ".join(shown.output.split()) for kind, code, _ in EXIT_CODES)


def test_a_checksum_mismatch_shows_expected_and_actual(tmp_path):
    """A folder named like a published BEIR set whose corpus differs: both digests are shown."""
    from vectrixdb.evaluation.golden.beir import load_beir, manifest, sha256

    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "1", "title": "t", "text": "changed"}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "?"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\t1\t1\n")
    with pytest.raises(errors.ChecksumMismatch) as got:
        load_beir(folder)
    expected, actual = manifest()["scifact"]["corpus.jsonl"], sha256(folder / "corpus.jsonl")
    assert (got.value.expected, got.value.actual) == (expected, actual) and expected != actual
    assert f"expected {expected}" in str(got.value) and f"actual   {actual}" in str(got.value)
    assert len(load_beir(folder, verify=False).documents) == 1  # a modified copy, knowingly
