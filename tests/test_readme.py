"""The Python snippets of the README and of every page of the documentation site run as written (those
that need no chat model or your own files), in the site's order, in one process: a page may use what an
earlier one made, as a reader going through them would."""
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.test_docs_site import blocks

BLOCKS = [code for *_, code in blocks("python")]
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


# The published figures table moved to docs/figures.md: tests/test_docs_site.py checks it is generated.
