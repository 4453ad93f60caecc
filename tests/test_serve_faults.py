"""The dashboard and `vectrixdb serve` / `export` against a folder that changes or is wrong (issue 44):
a run removed while served is 404, an extension module that fails at import (even by exiting) is
named with its setting at start, a folder that is not there is refused, exports get the umask."""
from __future__ import annotations

import shutil
import stat
import os

import pytest
from typer.testing import CliRunner

from tests.servers import serve_app
from vectrixdb.cli.commands import app
from vectrixdb.evaluation import Question, retrieval_report

runner = CliRunner()
LOCAL = "http://127.0.0.1"


def saved_run(folder) -> str:
    report = retrieval_report(lambda q: ["a"], [Question("q?", None, ["a"], "q")], k=1)
    return report.save(str(folder))


def test_a_run_removed_while_served_is_not_found(tmp_path):
    import httpx

    from vectrixdb.server import create_app

    run_id = saved_run(tmp_path)
    with serve_app(create_app(str(tmp_path))) as url:
        assert httpx.get(f"{url}/runs/{run_id}").status_code == 200  # read, and kept in the cache
        shutil.rmtree(tmp_path / "retrieval" / "runs" / run_id)
        assert run_id not in httpx.get(f"{url}/").text
        for path in (f"/runs/{run_id}", f"/runs/{run_id}/offline.html"):
            assert httpx.get(url + path).status_code == 404, path


@pytest.fixture
def no_server(monkeypatch):
    """uvicorn.run recorded instead of run: `serve` returns as soon as it would have started serving."""
    import uvicorn

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **kw: started.append(a))
    return started


@pytest.mark.parametrize("setting", ["VECTRIXDB_PAGES", "VECTRIXDB_KINDS"])
def test_an_extension_module_that_exits_or_raises_at_import_is_named_at_start(setting, tmp_path, monkeypatch,
                                                                                no_server):
    module = f"exits_at_import_{setting.lower()}"
    (tmp_path / f"{module}.py").write_text("import argparse\n\nargparse.ArgumentParser(prog='mine').parse_args()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(setting, module)
    monkeypatch.setattr("sys.argv", ["vectrixdb", "serve", str(tmp_path)])  # what the module's argparse reads
    done = runner.invoke(app, ["serve", str(tmp_path)])
    assert done.exit_code != 0 and not no_server, done.output
    assert f"{setting} names '{module}', which cannot be imported (it exits while being imported" in done.output
    raising = f"raises_at_import_{setting.lower()}"
    (tmp_path / f"{raising}.py").write_text("raise RuntimeError('no database here')\n")
    monkeypatch.setenv(setting, raising)
    done = runner.invoke(app, ["serve", str(tmp_path)])
    assert done.exit_code != 0 and not no_server, done.output
    assert f"{setting} names '{raising}', which cannot be imported (RuntimeError: no database here)" in done.output


def test_serving_a_folder_that_is_not_there_is_refused(tmp_path, no_server):
    done = runner.invoke(app, ["serve", str(tmp_path / "typo")])
    assert done.exit_code == 3 and f"{tmp_path / 'typo'}: no such folder" in done.output and not no_server
    (tmp_path / "file").write_text("x")
    done = runner.invoke(app, ["serve", str(tmp_path / "file")])
    assert done.exit_code == 2 and "is a file, not a folder of runs" in done.output and not no_server
    done = runner.invoke(app, ["serve", str(tmp_path)])
    assert done.exit_code == 0 and no_server, done.output


def test_an_exported_file_gets_the_umask(tmp_path):
    run_id = saved_run(tmp_path)
    old = os.umask(0o022)
    try:
        done = runner.invoke(app, ["export", run_id, "--folder", str(tmp_path), "--html", str(tmp_path / "run.html")])
    finally:
        os.umask(old)
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(os.stat(tmp_path / "run.html").st_mode) == 0o644
