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


def pytest_configure(config):
    """Under xdist with more than one worker, every process of the run (each worker, and the
    scripts, notebooks and servers it starts) does its math on one thread: torch (and MKL, OpenMP)
    default to a thread per core, so two workers on two cores ran four threads that waited on each
    other. Measured on this 2-core machine under load: 100 single-query encodes of the float model
    cost 1.9 CPU-s on one thread against 21 CPU-s on two (their OpenMP threads spin while the other
    is descheduled), and two processes embedding abstracts side by side did 5-15% more texts/s on
    one thread each. Set before any test imports torch; an OMP_NUM_THREADS already set is kept."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0) > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        if "torch" in sys.modules:  # a plugin imported it first: the variable is read only at import
            sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


# The files that take longest go first. xdist hands out whole files (--dist loadfile) in collection
# order (the Makefile passes --no-loadscope-reorder: xdist's own order is by test count, most first,
# which started test_scifact.py, 3 tests and 310 s, last). Measured on this 2-core machine, idle,
# the whole suite on 2 workers: one worker sat idle for the last 190 s of 950 while the other ran
# test_scifact.py. Worker-seconds then: notebooks 412, scripts 318, scifact 310, scripts_models 153,
# executors 78; the other 54 files 424 together.
FIRST = ("test_notebooks.py", "test_scripts.py", "test_scifact.py", "test_scripts_models.py", "test_executors.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))  # stable: each file keeps its order


@pytest.fixture(scope="session", autouse=True)
def vectrix_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("vhome")
    os.environ["VECTRIXDB_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may reach a hub; fail fast instead
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # The suite embeds with the float model, whose figures it checks (and no test pays the int8 export
    # in a home of its own); the int8 default has its own tests in test_embedding.py, which unset this.
    os.environ.setdefault("VECTRIXDB_DEFAULT_MODEL", "all-MiniLM-L6-v2@fp32")
    # Exported graphs go to the user's cache by default (one export per machine); the suite keeps its
    # own in the session's home, as a fresh machine would (a CI cache may give one instead).
    os.environ.setdefault("VECTRIXDB_MODELS", str(home / "models"))
    return home


@pytest.fixture(scope="session")
def uber_10k():
    """uber_2021.pdf (307 pages) read once per run (per worker) by the default reader: test_reading,
    test_reading_pdfium and test_chunking all need the whole filing. Treat it as read-only."""
    from vectrixdb.reading import read

    return read(str(require(PDFS / "uber_2021.pdf")))


@pytest.fixture
def db(tmp_path):
    from vectrixdb import Vectrix

    return Vectrix("test", path=tmp_path)


class StandInEmbedder:
    """A deterministic stand-in for the bundled model, for tests whose assertions hold whatever
    the vectors are (chunk invariants, bookkeeping): each word is hashed to a fixed random unit
    vector and a text is the normalised sum of its words. No model load, microseconds a text;
    texts sharing words still come out similar. Tests of search quality keep the bundled model."""

    name = "tests/stand-in-hash-embedder"
    dim = 384

    def encode(self, texts, *, progress: bool = False):
        import hashlib

        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in (text.lower().split() or [""]):
                seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i] += np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


@pytest.fixture
def fake_embedder():
    return StandInEmbedder()


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


@pytest.fixture(scope="session")
def s3_bucket():
    """A real S3 API (moto server) on loopback with an empty bucket; yields s3://bucket."""
    import boto3

    from tests.servers import start_moto

    proc, endpoint = start_moto()
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="golden")
    yield "s3://golden"
    proc.terminate()
    proc.wait(10)
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def blob_container(tmp_path_factory):
    """Azurite's Blob service on loopback with an empty container; yields az://container."""
    from azure.storage.blob import BlobServiceClient

    from tests.servers import start_azurite

    proc, conn = start_azurite(tmp_path_factory.mktemp("azurite"))
    old = os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
    os.environ["AZURE_STORAGE_CONNECTION_STRING"] = conn
    BlobServiceClient.from_connection_string(conn).create_container("golden")
    yield "az://golden"
    proc.terminate()
    proc.wait(10)
    if old is None:
        os.environ.pop("AZURE_STORAGE_CONNECTION_STRING", None)
    else:
        os.environ["AZURE_STORAGE_CONNECTION_STRING"] = old


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M on loopback, 4 parallel slots (the
    writer's concurrent asks are answered at once), started once per run; yields its base URL (…/v1).
    One that cannot start fails the tests that need it, never skips."""
    from tests.llama_server import start_slots

    log = tmp_path_factory.mktemp("llama") / "server.log"
    try:
        proc, base = start_slots(log)
    except Exception as exc:  # noqa: BLE001 - any reason it did not start is a failure to report
        pytest.fail(f"the local model server did not start: {exc}")
    yield base
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def measure_registry():
    """Measures a test declares and kernels it adds are gone after it."""
    from vectrixdb import registry
    from vectrixdb.evaluation.retrieval.measures import FAMILIES
    from vectrixdb.evaluation.retrieval.providers import PROVIDERS

    registry.names("measures")  # the entry points read first: a measure they bring is kept, not dropped after
    before = dict(FAMILIES), [dict(p.kernels) for p in PROVIDERS]
    yield
    FAMILIES.clear()
    FAMILIES.update(before[0])
    for p, kernels in zip(PROVIDERS, before[1]):
        p.kernels.clear()
        p.kernels.update(kernels)


@pytest.fixture
def distribution(tmp_path, monkeypatch):
    """install(name, entry_points, modules): a tiny distribution outside vectrixdb, made in tmp_path
    and put on sys.path as an installed one would be: a `<name>-0.1.dist-info` folder (METADATA and
    entry_points.txt, {group: {entry point: "module:attr"}}) beside its modules ({module: source}),
    found by importlib.metadata. The registry reads the kinds' entry points again, before and after."""
    import importlib
    import sys

    from vectrixdb import registry

    made: list[str] = []
    folder = tmp_path / "site"
    folder.mkdir()

    def install(name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
        info = folder / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{point} = {value}\n" for point, value in points.items()) + "\n"
            for group, points in entry_points.items()))
        for module, source in modules.items():  # a module's source, as its distribution ships it
            (folder / f"{module}.py").write_text(source)
            made.append(module)
        importlib.invalidate_caches()
        registry.refresh()
        return folder

    before = {kind: set(registry.table(kind)) for kind in registry.KINDS}
    monkeypatch.syspath_prepend(str(folder))
    yield install
    for module in made:
        sys.modules.pop(module, None)
    for kind, names in before.items():  # what the distribution registered goes with it
        for name in set(registry.table(kind)) - names:
            registry.unregister(kind, name)
    registry.refresh()


@pytest.fixture
def identity(monkeypatch):
    """start(token): an App Service identity endpoint on loopback handing out `token`, named by
    IDENTITY_ENDPOINT / IDENTITY_HEADER, with every other Azure credential and route setting unset
    (test_chat's and test_served's Azure routes get their token from it through azure-identity)."""
    from tests.llama_server import IdentityEndpoint

    opened = []

    def start(token: str, header: str = "s3cret") -> IdentityEndpoint:
        endpoint = IdentityEndpoint("s3cret", token)
        opened.append(endpoint)
        monkeypatch.setenv("IDENTITY_ENDPOINT", endpoint.url)
        monkeypatch.setenv("IDENTITY_HEADER", header)
        return endpoint

    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "MSI_ENDPOINT", "AZURE_OPENAI_KEY",
                 "VECTRIXDB_EMBEDDER_URL", "VECTRIXDB_DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    yield start
    for endpoint in opened:
        endpoint.close()



@pytest.fixture(scope="module")
def uber(tmp_path_factory):
    """(db, golden, records): the first 12 pages of uber_2021.pdf in a collection, the golden rows they
    answer, and each chunk as a vector database keeps it (tests/test_stores.py uber_cut); a module's own."""
    from tests.test_stores import uber_cut

    return uber_cut(tmp_path_factory.mktemp("uber"))


@pytest.fixture(scope="module")
def dense(uber):
    """The dense-mode report of `uber`'s collection on its golden rows, which every store must equal."""
    from tests.test_stores import dense_report

    return dense_report(uber)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under VECTRIXDB_CORE_ONLY=1 (tests/test_lean.py runs the evaluation tests in a venv holding the
    core install alone), a test stopped by a missing optional part is a skip naming it: MissingExtra
    from the package, or a library the test itself needs (pytrec_eval, statsmodels) not installed.
    Anything else still fails, and test_lean.py requires a floor of passes, so a core path that
    starts needing an extra cannot pass by turning its tests into skips."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("VECTRIXDB_CORE_ONLY") != "1" or call.excinfo is None or report.passed:
        return
    from vectrixdb.errors import MissingExtra

    if call.excinfo.errisinstance((MissingExtra, ModuleNotFoundError)):
        reason = str(call.excinfo.value).splitlines()[0]
        report.outcome, report.longrepr = "skipped", (str(item.path), item.location[1] or 0, f"needs more than the core: {reason}")
