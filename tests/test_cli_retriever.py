"""An outside retriever measured from a terminal and named (issue 47, item 6): `vectrixdb report` and
`evaluate` with `--retriever module:function` (a real module written to disk) or `--store` (a real
Chroma PersistentClient folder, a real Qdrant local-mode folder) over the first 12 pages of
uber_2021.pdf (tests/test_stores.py's cut and its chunks, with the collection's own vectors): the same
figures as vectrixdb's dense mode, `--name` on the saved run, and what was measured recorded in the
run and shown on the dashboard's run page and on the certificate. A bad `module:function` is one
line naming what was read, a non-zero exit status and no traceback. `name=` works for any retriever."""
from __future__ import annotations

import json
import subprocess
import textwrap

import pytest
from typer.testing import CliRunner

from tests.conftest import ROOT
from tests.test_cli_eval import QS
from vectrixdb.evaluation import save_questions
from tests.test_stores import chunks_table, postgres  # noqa: F401 - their fixtures: a PostgreSQL server and table
from tests.test_stores import FIGURES, chroma_collection, qdrant_collection
from vectrixdb.cli.commands import app

MODEL = "all-MiniLM-L6-v2@fp32"  # the suite's default model (conftest), the collection's
NAMED = "sentence-transformers/all-MiniLM-L6-v2"  # its name as the embedder gives it (and a collection records)


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def figures_of(output: str) -> dict:
    values = json.loads(output)["values"]
    return {f: values[f] for f in FIGURES}


def as_json(report) -> dict:
    """A report's figures as `--json` prints them (JSON's string keys)."""
    return json.loads(json.dumps({f: report[f] for f in FIGURES}))


def rag_module(folder, name: str, db_path, body: str = "") -> None:
    """A module a team might have: its own search over the collection's dense mode, as dicts."""
    (folder / f"{name}.py").write_text(textwrap.dedent(f'''
        from vectrixdb import Vectrix

        db = Vectrix("uber12", path={str(db_path)!r})


        def search(query, k):
            return [{{"chunk_id": h.chunk_id, "doc_id": h.doc_id, "pages": list(h.pages), "text": h.text,
                     "score": h.score}} for h in db.search(query, k, mode="dense")]
        ''') + textwrap.dedent(body))


def test_a_function_from_a_file_is_measured_named_and_recorded(uber, dense, tmp_path):
    from vectrixdb.evaluation import list_runs, load_run

    db, golden, _ = uber
    assert db.spaces["default"]["model"] == NAMED
    rag_module(tmp_path, "team_rag", db.folder.parent)
    runs = tmp_path / "runs"
    done = run("report", "--retriever", f"{tmp_path / 'team_rag.py'}:search", "--golden", golden, "--by", "page",
               "--json", "--save-to", runs, "--name", "team rag, dense")
    assert done.exit_code == 0, done.output
    assert figures_of(done.stdout) == as_json(dense)  # the same rankings as the dense mode it calls
    saved = load_run(str(runs), list_runs(str(runs)).loc[0, "run_id"])
    assert saved.meta["name"] == "team rag, dense"
    assert saved.meta["system"] == {"adapter": "function", "function": "team_rag:search"}
    shown = run("runs", "show", saved.meta["run_id"], "--folder", runs)
    assert "\nsystem measured: function team_rag:search\n" in shown.output, shown.output
    text = run("report", "--retriever", f"{tmp_path / 'team_rag.py'}:search", "--golden", golden, "--by", "page", "-k", 5)
    assert "searched with function team_rag:search" in text.output.splitlines()[0], text.output


def test_a_module_in_the_current_directory_taking_the_query_alone(uber, dense, tmp_path, monkeypatch):
    db, golden, _ = uber
    rag_module(tmp_path, "cwd_rag", db.folder.parent, body='''

        def ask(query):
            return search(query, 40)
        ''')
    monkeypatch.chdir(tmp_path)
    done = run("report", "--retriever", "cwd_rag:ask", "--golden", golden, "--by", "page", "--json")
    assert done.exit_code == 0, done.output
    assert figures_of(done.stdout) == as_json(dense)
    evaluated = run("evaluate", "--retriever", "cwd_rag:ask", "--golden", golden, "--by", "page", "-k", 5,
                    "--fail-under", "ndcg@5=0.99")  # one setup, the way it searches; the gate judges it
    assert evaluated.exit_code == 1, evaluated.output
    assert "1 search setups" in evaluated.output and "\nfunction  -" in evaluated.output
    assert f"fail: ndcg@5 = {dense['ndcg'][5]:.4f} is under 0.99" in evaluated.output


@pytest.mark.parametrize(("spec", "status", "said"), [
    ("team_rag", 2, "--retriever takes module:function (a module importable from the current directory) or "
                    "path/to/file.py:function, not 'team_rag'"),
    ("no_such_rag:search", 3, "--retriever 'no_such_rag:search': no module 'no_such_rag' in the current directory"),
    ("nowhere/rag.py:search", 3, "--retriever 'nowhere/rag.py:search': no file 'nowhere/rag.py'"),
    ("broken_rag:search", 2, "--retriever 'broken_rag:search': importing 'broken_rag' failed: "
                             "ZeroDivisionError: division by zero"),
    ("needs_rag:search", 2, "importing 'needs_rag' failed: No module named 'not_installed_anywhere'"),
    ("bad_rag:serch", 2, "--retriever 'bad_rag:serch': module 'bad_rag' ("),
    ("bad_rag:TOP_K", 2, "--retriever 'bad_rag:TOP_K': 'TOP_K' is int 5, not a function (query) or (query, k) -> "
                         "results, nor a retriever an adapter can call"),
    ("bad_rag:Index", 2, "'Index' is the class Index (give a function, or an instance the adapters call)"),
])
def test_a_bad_module_function_is_one_line_naming_it_and_no_traceback(tmp_path, monkeypatch, spec, status, said):
    (tmp_path / "bad_rag.py").write_text("TOP_K = 5\n\n\nclass Index:\n    pass\n\n\ndef search(query):\n    return []\n")
    (tmp_path / "broken_rag.py").write_text("1 / 0\n")
    (tmp_path / "needs_rag.py").write_text("import not_installed_anywhere\n")
    save_questions(QS, str(tmp_path / "g.jsonl"))
    monkeypatch.chdir(tmp_path)
    for command in ("report", "evaluate"):
        done = run(command, "--retriever", spec, "--golden", "g.jsonl")
        assert isinstance(done.exception, SystemExit), done.exception  # handled: not an exception escaping
        assert done.exit_code == status and said in done.output and len(done.output.splitlines()) == 1, done.output
        assert done.output.startswith("error: ")
    if spec == "bad_rag:serch":
        assert done.output.rstrip().endswith("has no attribute 'serch'; its functions: search"), done.output


def test_the_installed_command_names_a_missing_function_without_a_traceback(tmp_path):
    (tmp_path / "rag.py").write_text("def search(query):\n    return []\n")
    save_questions(QS, str(tmp_path / "g.jsonl"))
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "vectrixdb"), "report", "--retriever", "rag:find",
                           "--golden", "g.jsonl"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().startswith("error: --retriever 'rag:find': module 'rag' (") and \
        done.stderr.strip().endswith("has no attribute 'find'; its functions: search"), done.stderr


@pytest.fixture(scope="module")
def chroma_folder(uber, tmp_path_factory):
    """The chunks in a Chroma PersistentClient's folder, as a team's own Chroma would hold them."""
    import chromadb

    folder = tmp_path_factory.mktemp("chroma")
    chroma_collection(uber[2], "uber_chunks", client=chromadb.PersistentClient(path=str(folder)))
    return folder


@pytest.fixture(scope="module")
def chroma_run(uber, chroma_folder, tmp_path_factory):
    """`vectrixdb report --store chroma` saved under a folder: (folder, run id, the command's output)."""
    from vectrixdb.evaluation import list_runs

    _, golden, _ = uber
    runs = tmp_path_factory.mktemp("runs")
    done = run("report", "--store", "chroma", "--store-path", chroma_folder, "--collection", "uber_chunks",
               "--model", MODEL, "--golden", golden, "--by", "page", "--json", "--save-to", runs,
               "--name", "our chroma")
    assert done.exit_code == 0, done.output
    return runs, list_runs(str(runs)).loc[0, "run_id"], done.stdout


def test_a_chroma_folder_is_measured_in_place_and_records_what_it_searched(uber, dense, chroma_run):
    from vectrixdb.evaluation import load_run

    folder, run_id, output = chroma_run
    assert figures_of(output) == as_json(dense)  # the collection's vectors, the same model for the queries
    saved = load_run(str(folder), run_id)
    assert saved.meta["name"] == "our chroma"
    assert saved.meta["system"] == {"adapter": "chroma", "store": "chroma", "collection": "uber_chunks",
                                    "embedding_model": NAMED}


def test_the_run_page_and_the_certificate_name_the_system(chroma_run, tmp_path):
    from fastapi.testclient import TestClient

    from vectrixdb.evaluation import load_run
    from vectrixdb.present.certificate import certificate
    from vectrixdb.server import create_app
    from vectrixdb.present.views import manifest

    folder, run_id, _ = chroma_run
    said = f"chroma: collection uber_chunks, embedding model {NAMED}"
    page = TestClient(create_app(str(folder)), base_url="http://127.0.0.1").get(f"/runs/{run_id}")
    assert page.status_code == 200, page.text
    assert f'<p class="system" id="system">Measured: {said}</p>' in page.text
    report = load_run(str(folder), run_id)
    assert dict(manifest(report))["system measured"] == said
    assert certificate(report, figures=[])["subtitle"].startswith(f"our chroma · measured {said} · run {run_id} · ")


def test_a_run_that_recorded_no_system_says_so(chroma_run):
    """A run saved before runs recorded their system: the manifest says it was not recorded, the page
    shows no line for it, and the certificate's subtitle is as it was."""
    from vectrixdb.evaluation import load_run
    from vectrixdb.present.certificate import certificate
    from vectrixdb.present.views import manifest

    report = load_run(str(chroma_run[0]), chroma_run[1])
    del report.meta["system"]
    assert dict(manifest(report))["system measured"] == "not recorded by this run"
    assert certificate(report, figures=[])["subtitle"].startswith(f"our chroma · run {chroma_run[1]} · ")


@pytest.mark.filterwarnings("ignore:Local mode performs exact")
def test_a_qdrant_local_folder_through_report_and_evaluate(uber, dense, tmp_path):
    from qdrant_client import QdrantClient

    from vectrixdb.evaluation import list_runs, load_run

    _, golden, records = uber
    client = qdrant_collection(QdrantClient(path=str(tmp_path / "qdrant")), records)
    client.close()  # local mode: one client per folder at a time, and the command opens its own
    where = ["--store", "qdrant", "--store-path", tmp_path / "qdrant", "--collection", "chunks",
             "--store-option", "chunk_field=chunk_id"]
    done = run("report", *where, "--golden", golden, "--by", "page", "--json")  # no --model: the default, ours
    assert done.exit_code == 0, done.output
    assert figures_of(done.stdout) == as_json(dense)
    runs = tmp_path / "runs"
    evaluated = run("evaluate", *where, "--golden", golden, "--by", "page", "-k", 10, "--json", "--save-to", runs,
                    "--name", "qdrant, one setup")
    assert evaluated.exit_code == 0, evaluated.output
    table = load_run(str(runs), list_runs(str(runs)).loc[0, "run_id"])
    assert table.kind == "evaluate" and table.meta["name"] == "qdrant, one setup"
    assert table["best"]["mode"] == "qdrant" and table["best"]["ndcg@10"] == pytest.approx(dense["ndcg"][10])
    assert table.meta["system"] == {"adapter": "qdrant", "store": "qdrant", "collection": "chunks",
                                    "embedding_model": NAMED}


def test_a_lancedb_folder_and_a_postgresql_table_from_the_terminal(uber, dense, request, tmp_path):
    """LanceDB by its folder (the default model for the queries, the collection's); PostgreSQL by its
    connection string, searching its full text without --model and dense with it."""
    server, table = request.getfixturevalue("postgres"), request.getfixturevalue("chunks_table")
    import lancedb
    import numpy as np

    from vectrixdb.evaluation import list_runs, load_run, retrieval_report
    from vectrixdb.evaluation.retrieval.stores import PostgresRetriever

    _, golden, records = uber
    lancedb.connect(str(tmp_path / "lance")).create_table(
        "chunks", [{**r, "vector": np.asarray(r["vector"], np.float32).tolist(), "page": r["pages"]} for r in records])
    runs = tmp_path / "runs"
    done = run("report", "--store", "lancedb", "--store-path", tmp_path / "lance", "--collection", "chunks",
               "--golden", golden, "--by", "page", "--json", "--save-to", runs, "--name", "lance")
    assert done.exit_code == 0, done.output
    assert figures_of(done.stdout) == as_json(dense)
    assert load_run(str(runs), list_runs(str(runs)).loc[0, "run_id"]).meta["system"] == {
        "adapter": "lancedb", "store": "lancedb", "table": "chunks", "embedding_model": NAMED}
    dsn = server.info.dsn  # host=<its socket folder> port=... user=... dbname=...
    text = run("report", "--store", "postgres", "--store-url", dsn, "--collection", table, "--golden", golden,
               "--by", "page", "--json")
    assert text.exit_code == 0, text.output
    assert figures_of(text.stdout) == as_json(retrieval_report(PostgresRetriever(server, table), golden, by="page"))
    assert json.loads(text.stdout)["system"]["embedding_model"] == "none: full-text search (english)"
    dense_pg = run("report", "--store", "postgres", "--store-url", dsn, "--collection", table, "--model", MODEL,
                   "--golden", golden, "--by", "page", "--json")
    assert dense_pg.exit_code == 0, dense_pg.output
    assert figures_of(dense_pg.stdout) == as_json(dense)
    assert json.loads(dense_pg.stdout)["system"] == {"adapter": "postgres", "store": "postgres", "table": "chunks",
                                                     "embedding_model": NAMED}


@pytest.mark.parametrize(("args", "status", "said"), [
    (["--store", "chroma", "--collection", "none_such"], 3, "no collection 'none_such'; it holds ['uber_chunks']"),
    (["--store", "chroma", "--collection", "uber_chunks", "--store-option", "doc_feld=source"], 2,
     "--store-option doc_feld: not an option of the chroma adapter; it takes doc_field, page_field, page_base, "
     "chunk_field, where"),
    (["--store", "pinecone", "--collection", "x"], 2, "--store 'pinecone': one of chroma, lancedb, qdrant, postgres"),
    (["--store", "chroma"], 2, "--store chroma needs --collection"),
    (["--collection", "uber_chunks"], 2, "--collection, --store-path: for --store"),
    (["--store", "chroma", "--collection", "uber_chunks", "--retriever", "x:y"], 2,
     "--retriever and --store each name the retriever to measure: give one"),
    (["--store", "chroma", "--collection", "uber_chunks", "--mode", "dense"], 2,
     "--mode chooses how a vectrixdb collection is searched"),
    (["uber12", "--store", "chroma", "--collection", "uber_chunks"], 2, "NAME: for a vectrixdb collection"),
    ([], 2, "give the collection NAME to measure, or an outside retriever with --retriever module:function or --store"),
])
def test_store_options_are_checked_naming_what_was_given(uber, chroma_folder, args, status, said):
    _, golden, _ = uber
    where = [] if "--store" not in args and "--collection" not in args else ["--store-path", chroma_folder]
    done = run("report", *args, *where, "--golden", golden)
    assert done.exit_code == status and said in done.output, done.output
    assert isinstance(done.exception, SystemExit)


def test_name_works_for_any_retriever_and_the_system_is_recorded(policies, tmp_path):
    """name= on retrieval_report and evaluate, whatever the target: a function, a LangChain retriever,
    a Vectrix collection (whose name used to be set only by the command's --name, after the fact)."""
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from vectrixdb.evaluation import evaluate, load_run, retrieval_report

    def by_doc(query):
        return [h.doc_id for h in policies.search(query, 3)]

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(d["doc_id"], metadata={"doc_id": d["doc_id"]}) for d in policies.documents()])
    lang = store.as_retriever(search_kwargs={"k": 3})
    named = {
        "a function": (by_doc, {"adapter": "function", "function": f"{__name__}:test_name_works_for_any_retriever_and_"
                                                                   "the_system_is_recorded.<locals>.by_doc"}),
        "a langchain retriever": (lang, {"adapter": "langchain",
                                         "retriever": "langchain_core.vectorstores.base:VectorStoreRetriever",
                                         "store": "langchain_core.vectorstores.in_memory:InMemoryVectorStore",
                                         "embedding_model": "langchain_core.embeddings.fake:DeterministicFakeEmbedding"}),
        "the collection": (policies, {"adapter": "vectrixdb", "collection": "test"}),
    }
    for name, (target, system) in named.items():
        report = retrieval_report(target, QS, name=name, save_to=str(tmp_path))
        again = load_run(str(tmp_path), report["run_id"])
        assert (again.meta["name"], again.meta["system"]) == (name, system), name
    table = evaluate(policies, QS, k=3, name="every setup", progress=False)
    assert table.meta["name"] == "every setup" and table.meta["system"] == named["the collection"][1]
    with pytest.raises(Exception, match="name= names the run: a non-empty string, not ''"):
        retrieval_report(by_doc, QS, name="")
    with pytest.raises(Exception, match="vectors= and rerank= choose among a Vectrix's setups"):
        evaluate(by_doc, QS, vectors=["default"], progress=False)


def test_the_help_lists_the_outside_retriever_options():
    done = run("report", "--help")
    assert done.exit_code == 0
    for option in ("--retriever", "--store", "--collection", "--store-path", "--store-url", "--model", "--store-option"):
        assert option in done.output, option
