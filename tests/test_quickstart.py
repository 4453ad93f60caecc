"""The quickstart is the steps: its commands, parsed from docs/getting-started.md (the README links it), run in order on the
sample data (data/sample as the reader's PDFs, data/golden/sample.jsonl as their golden file).

Each line of the quickstart's ```bash blocks is one command. Four kinds are not run as written,
each for a stated reason and each still checked:
- `make demo` sets up .venv (already there: the tests run in it), then runs scripts/demo.py, which is
  what runs here, with the demo's own home (.demo/ in the folder the commands run from);
- `source .venv/bin/activate` puts the virtualenv's commands first on PATH: here they are called
  from the virtualenv the tests run in, and the script must exist;
- `pip install -e '.[EXTRA]'`: the test environment holds every extra; the extra must be one that
  pyproject.toml defines;
- `vectrixdb serve` runs until stopped: it is started on a free port, must answer its first page,
  and is stopped; `jupyter lab notebooks/` opens a browser session, so only its folder is checked.
`RUN` is the id `vectrixdb runs list --json` gives first.

The walk is a fresh machine's: its own cache folder (no models folder shared with the other tests),
so the bundled model is exported once, by the demo, and every later command reads that export.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_model_export import EXPORTING

TITLE = "## Your PDFs to a report in five minutes"
PAGE = ROOT / "docs" / "getting-started.md"  # the quickstart's page (it was the README's section)
BIN = Path(sys.executable).parent


def quickstart() -> list[list[str]]:
    """The quickstart's commands in order, each split as a shell would (comments dropped)."""
    readme = PAGE.read_text()
    section = readme.split(TITLE, 1)[1].split("\n## ", 1)[0]
    lines = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()]
    return [argv for argv in (shlex.split(line, comments=True) for line in lines) if argv]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_quickstart_names_its_extras_data_and_demo_collection():
    commands = quickstart()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    installs = [argv[-1] for argv in commands if argv[:2] == ["pip", "install"]]
    assert installs == [".[serve]", ".[lab]"] and all(i[2:-1] in extras for i in installs)
    at: dict[str, int] = {}  # each command's first place
    for n, argv in enumerate(commands):
        at.setdefault(argv[1] if argv[0] == "vectrixdb" else " ".join(argv[:2]), n)
    assert at["pip install"] < at["serve"] < at["export"]  # the dashboard extra comes before serve and export
    section = PAGE.read_text().split(TITLE, 1)[1].split("\n## ", 1)[0]
    assert "$VECTRIXDB_SHARED_DATA" in section and "../shared/data" in section
    assert ["vectrixdb", "search", "demo"] == commands[2][:3] and commands[2][-2:] == ["--path", ".demo/collections"]


@pytest.mark.slow
def test_the_quickstart_runs_in_order_on_the_sample_data(tmp_path):
    work = tmp_path / "clone"  # the folder the reader runs the commands from
    work.mkdir()
    reports = sorted(str(p) for p in (ROOT / "data" / "sample").iterdir())
    shutil.copy(ROOT / "data" / "golden" / "sample.jsonl", work / "golden.jsonl")
    fresh = {k: v for k, v in os.environ.items() if k not in ("VECTRIXDB_MODELS", "VECTRIXDB_DEFAULT_MODEL")}
    env = {**fresh, "VECTRIXDB_HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    ran, demo_line, said = [], None, {}

    def run(argv: list[str], **extra) -> str:
        print("$", shlex.join(argv), flush=True)  # shown with the failure
        done = subprocess.run(argv, cwd=work, env={**env, **extra}, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{shlex.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        said[shlex.join(argv)] = done.stdout + done.stderr
        return done.stdout

    for argv in quickstart():
        argv = [a for arg in argv for a in (reports if arg == "~/reports/*.pdf" else [arg])]
        if argv == ["make", "demo"]:
            out = run([sys.executable, str(ROOT / "scripts" / "demo.py")], VECTRIXDB_HOME=str(work / ".demo"))
            demo_line = shlex.split(out.strip().splitlines()[-1].split(": ", 1)[1])
        elif argv[0] == "source":
            assert (ROOT / argv[1]).is_file() and argv[1] == ".venv/bin/activate"
        elif argv[:2] == ["pip", "install"]:
            pass  # the extras are checked in the test above
        elif argv[:2] == ["jupyter", "lab"]:
            assert sorted((ROOT / argv[2]).glob("[0-9][0-9]_*.ipynb"))
        elif argv[:2] == ["vectrixdb", "serve"]:
            saved = [r["run_id"] for r in json.loads(run(["vectrixdb", "runs", "list", argv[2], "--json"]))]
            port = free_port()
            server = subprocess.Popen([*argv, "--port", str(port)], cwd=work, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
            try:
                page = None
                for _ in range(240):
                    assert server.poll() is None, server.stdout.read()
                    try:
                        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
                        break
                    except OSError:
                        time.sleep(0.5)
                assert page and saved and all(run_id in page for run_id in saved)  # the dashboard lists the saved runs
            finally:
                server.terminate()
                server.wait(30)
        else:
            if "RUN" in argv:
                first = json.loads(run(["vectrixdb", "runs", "list", "evaluations", "--json"]))[0]["run_id"]
                argv = [first if a == "RUN" else a for a in argv]
            if argv[:3] == ["vectrixdb", "search", "demo"]:
                assert demo_line is not None and demo_line[:3] == argv[:3] and demo_line[4:] == argv[4:]
                out = run(argv)
                assert "deferment.md" in out.splitlines()[0]  # found where the page says, first as it shows
            else:
                out = run(argv)
        ran.append(argv[:2])
    assert ["vectrixdb", "compare-chunking"] in ran and ["vectrixdb", "export"] in ran
    assert (work / "report.pdf").read_bytes()[:5] == b"%PDF-"
    runs = json.loads(run(["vectrixdb", "runs", "list", "evaluations", "--json"]))
    assert {r["kind"] for r in runs} >= {"evaluate", "chunking"}
    everything = "".join(said.values())
    assert everything.count(EXPORTING) == 1 and EXPORTING in said[next(c for c in said if "demo.py" in c)], everything
    assert str(tmp_path / "cache" / "vectrixdb" / "models") in everything  # the user's cache, shared by every home
    report = said[next(c for c in said if c.startswith("vectrixdb report reports"))]
    assert "searched with mode=hybrid" in report  # the default mode, named where its figures are printed
    assert re.search(r"^\s+10\s+\S+ \[", report, re.M), report  # its figures at k=10, with their interval
