"""The package a stranger installs (issue 48 item 3): `python -m build` makes a wheel and an sdist
that `twine check` passes; the wheel holds the data files the code reads (the golden schema, the
dashboard's templates and stylesheet, the int8 calibration texts, BEIR's manifest, py.typed); and
the wheel itself, not this editable tree, installed into a fresh virtualenv, runs `vectrixdb --help`
and scores an outside retriever.

The fresh virtualenv takes its third-party libraries from this one's site-packages through a .pth
line (installing torch and the rest again would take minutes and gigabytes). A path in a .pth file
adds that folder only: this tree's editable hook, itself a .pth file in that folder, is not run, so
`vectrixdb` can only come from the wheel, and the test checks that it does."""
from __future__ import annotations

import shutil
import site
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

DATA = {"vectrixdb/golden.schema.json", "vectrixdb/report.schema.json", "vectrixdb/header.schema.json", "vectrixdb/py.typed", "vectrixdb/embedding_calibration.txt",
        "vectrixdb/evaluation/golden/beir_manifest.json", "vectrixdb/present/static/style.css",
        "vectrixdb/present/templates/base.html", "vectrixdb/server/templates/runs.html"}
OUTSIDE = """
from vectrixdb.evaluation import retrieval_report
import vectrixdb
print(vectrixdb.__file__)
answers = {"Can a customer postpone a loan payment after a wildfire?": ["deferment.md"]}
report = retrieval_report(lambda q: answers.get(q, ["fees.md"]), GOLDEN, k=(1,), by="doc")
print("recall@1", round(report["recall"][1], 3))
"""


def run(*args, **kw):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_wheel_installs_into_a_fresh_environment_and_runs(tmp_path):
    from vectrixdb.version import __version__

    dist, scratch = tmp_path / "dist", ROOT / "build"
    had_scratch = scratch.exists()
    try:
        run(sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", dist, ROOT)
    finally:  # setuptools leaves its build/ folder in the tree
        if not had_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    wheel, sdist = dist / f"vectrixdb-{__version__}-py3-none-any.whl", dist / f"vectrixdb-{__version__}.tar.gz"
    assert wheel.exists() and sdist.exists(), sorted(p.name for p in dist.iterdir())
    assert "PASSED" in run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert DATA <= names, DATA - names
    assert not any(n.startswith(("tests/", "notebooks/", "benchmarks/")) for n in names)

    fresh = tmp_path / "fresh"
    run(sys.executable, "-m", "venv", "--without-pip", fresh)
    run(sys.executable, "-m", "pip", "--python", fresh / "bin" / "python", "install", "-q", "--no-deps", wheel)
    [own] = [p for p in (fresh / "lib").glob("python3*/site-packages")]
    (own / "libraries.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    assert "Usage: vectrixdb" in run(fresh / "bin" / "vectrixdb", "--help")
    code = OUTSIDE.replace("GOLDEN", repr(str(ROOT / "data" / "golden" / "sample.jsonl")))
    out = run(fresh / "bin" / "python", "-c", code, cwd=tmp_path).splitlines()  # not from the tree's folder
    assert out[0].startswith(str(own)), out  # the wheel's copy, not this tree
    assert out[-1] == "recall@1 0.167", out  # 1 of the sample's 6 questions found at rank 1
