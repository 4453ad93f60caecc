"""Every published figure re-runs: each scripts/*.py that writes a benchmarks/*.json runs in its
small mode, in a fresh process on a fresh VECTRIXDB_HOME (a folder that does not exist yet), and
writes its JSON to a temporary path, never over the committed benchmarks/. Each test checks what
the JSON says, not only that it was written. scale_bench.py starts a local Ray cluster of 2 workers.

Not here yet (model-bound or minutes long): bench_cli.py and bench_tenk.py (timings of the int8
export and a whole 10-K), local_models_bench.py (every local model), bench_quantized.py (its --small
mode exists, but it exports the int8 graph into a fresh home), model_chunking_bench.py and
write_golden_bench.py (each starts SmolLM2 through tests/llama_server.start_llama; their small runs
are to be added). judge_calibration.py re-runs with its model-free judge.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys

import pytest

from tests.conftest import PDFS, ROOT, SCIFACT, require

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def committed_figures_unchanged():
    """Every file in benchmarks/ is byte for byte the same after every script has run."""
    def digests():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((ROOT / "benchmarks").glob("*.json"))}

    before = digests()
    yield
    after = digests()
    assert {name: after.get(name) for name in before} == before


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A data folder like ../shared/data: scifact/ (the real one) and pdfs/ holding the first 12
    pages of uber_2021.pdf, where 4 of the 40 golden questions are answered."""
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path_factory.mktemp("data")
    (folder / "pdfs").mkdir()
    (folder / "scifact").symlink_to(require(SCIFACT))
    writer = PdfWriter()
    for page in PdfReader(str(require(PDFS / "uber_2021.pdf"))).pages[:12]:
        writer.add_page(page)
    with open(folder / "pdfs" / "uber_2021.pdf", "wb") as fh:
        writer.write(fh)
    return folder


def run_script(name: str, *args: str, tmp_path) -> dict:
    home, out = tmp_path / "fresh-home", tmp_path / "figures.json"
    assert not home.exists()
    tmp_path.mkdir(parents=True, exist_ok=True)  # a second run of a test gets a folder of its own
    env = {**os.environ, "VECTRIXDB_HOME": str(home), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args, "--out", str(out)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} failed:\n{done.stderr[-4000:]}"
    return json.loads(out.read_text())


def unit(x) -> bool:
    return isinstance(x, float) and not math.isnan(x) and 0.0 <= x <= 1.0


def test_answer_cutoff_bench(data, tmp_path):
    got = run_script("answer_cutoff_bench.py", str(data / "scifact"), "--small", tmp_path=tmp_path)
    assert got["small"] and got["queries"] == 10 and got["unanswerable"] == 30 and got["collection_was_cold"]
    assert all(unit(got["retrieval"][m]["ndcg@10"]) for m in ("dense", "keyword", "hybrid"))
    assert got["hybrid_pool"] == 300 and set(got["hybrid_pool_trials"]["ndcg@10 by pool depth"]) == {"30", "100", "300", "1000"}
    assert got["hybrid_pool_trials"]["ndcg@10 by pool depth"]["300"] == got["retrieval"]["hybrid"]["ndcg@10"]
    assert unit(got["separation"]) and len(got["separation_ci95"]) == 2
    assert got["runtime_s"]["total"] >= got["runtime_s"]["build"] > 0


def test_suggest_expected_bench(data, tmp_path):
    got = run_script("suggest_expected_bench.py", str(data), "--small", tmp_path=tmp_path)
    uber, sci = got["uber_2021"], got["scifact_train"]
    assert uber["rows"] == 4 and sci["rows"] == 10 and got["small"]
    assert set(uber["results"]) == {f"{s}/{m}" for s in ("question", "reference", "both", "joined")
                                    for m in ("dense", "hybrid")}
    assert all(0 <= r["found"] <= r["of"] and unit(r["precision"]) for r in [*uber["results"].values(),
                                                                             *sci["results"].values()])


def test_bench_metrics(tmp_path):
    got = run_script("bench_metrics.py", "--queries", "200", tmp_path=tmp_path)
    assert all(d < 1e-9 for d in got["max_abs_difference_from_vectrixdb"].values())  # the tools agree


def test_bench_reading(data, tmp_path):
    got = run_script("bench_reading.py", str(data / "pdfs"), "--small", tmp_path=tmp_path)
    assert got["reading"]["uber_2021.pdf"]["pages"] == 12
    assert set(got["chunking_uber_2021_at_1000"]) == {"structure", "parent_child", "recursive", "sentence", "fixed"}


def test_bench_hnsw(data, tmp_path):
    got = run_script("bench_hnsw.py", str(data / "scifact"), "--small", tmp_path=tmp_path)
    (one,) = got["results"]
    assert (one["vectors"], one["real_vectors"], one["queries"]) == (500, 50, 10) and got["small"]
    assert unit(one["hnsw"]["recall@10"]) and all(unit(r["recall@10"]) for r in one["expansion_search_sweep"].values())


def test_bench_keyword_after_add(data, tmp_path):
    got = run_script("bench_keyword_after_add.py", str(data / "scifact"), "--chunks", "300", "--trials", "3",
                     "--baseline", "", tmp_path=tmp_path)
    assert got["now"]["chunks"] == 300 and got["before"] is None
    assert got["now"]["keyword_search_right_after_add"]["other_reader_process"]["n"] == 3


def test_compare_chunking_bench(data, tmp_path):
    got = run_script("compare_chunking_bench.py", str(data / "pdfs"), "--small", tmp_path=tmp_path)
    assert got["small"] and got["ratio"] > 0 and len(got["builds"]) == 1
    (build,) = got["builds"]
    assert (build["technique"], build["chunk_size"], build["embed_heading"]) == ("recursive", 1000, False)
    assert got["questions"] == 1 and build["found"] in (0, 1) and build["chunks"] > 0 and got["distinct_texts"] > 0


def test_late_chunking_bench(data, tmp_path):
    got = run_script("late_chunking_bench.py", str(data / "scifact"), "--small", tmp_path=tmp_path)
    assert got["small"] and set(got["results"]) == {"no_chunking", "naive_chunks", "late_chunks"}
    assert all(unit(r["ndcg@10"]) and unit(r["recall@100"]) for r in got["results"].values())


def test_bench_ingest(data, tmp_path):
    got = run_script("bench_ingest.py", str(data / "scifact"), "--small", tmp_path=tmp_path)
    cold, warm = got["vectrixdb_cold_ingest"], got["vectrixdb_warm_reingest"]
    assert got["small"] and cold["chunks"] == warm["chunks"] == 100 and len(got["load_average_at_start"]) == 3
    assert (cold["embedded"], cold["reused_from_cache"]) == (100, 0)  # a cold cache embeds every abstract
    assert (warm["embedded"], warm["reused_from_cache"]) == (0, 100)  # the warm re-ingest embeds none
    assert {m: v["queries"] for m, v in got["search_latency_ms"].items()} == {
        "dense_query_embedded": 10, "dense": 10, "keyword": 10, "hybrid": 10}
    assert got["ingest_vs_plain_throughput"] > 0 and got["plain_sentence_transformers_encode"]["passages_per_s"] > 0


def test_scale_bench(data, tmp_path):
    got = run_script("scale_bench.py", str(data / "pdfs"), "--pages", "12", "--small", tmp_path=tmp_path)
    assert got["small"] and got["builds"] == 2 and len(got["rows"]) == 2
    assert got["identical_rows"]  # the Ray sweep gives the local sweep's rows
    assert {(r["chunk"], r["chunk_size"], r["embed_heading"]) for r in got["rows"]} == {
        ("recursive", 1000, False), ("recursive", 1000, True)}
    assert got["seconds"]["one_process"] > 0 and got["seconds"]["ray_2_workers"] > 0


def test_bench_dashboard(tmp_path):
    got = run_script("bench_dashboard.py", "--small", tmp_path=tmp_path)
    assert got["small"] and got["folder"]["runs"] == 10 and got["page_bytes"] > 0
    assert set(got["seconds"]) == {"list_runs", "server_listing_cold", "server_listing_warm", "page_first_request",
                                   "page_later_request"}
    large = run_script("bench_dashboard.py", "--large", "--small", tmp_path=tmp_path / "large")
    assert large["small"] and set(large["seconds"]) == {"run_50_unsaved", "run_50_saved", "run_100_unsaved",
                                                        "run_100_saved"}
    assert large["report_json_writes"] == {"50_questions": 3, "100_questions": 3}  # pending, running, the end
    assert {name: page["bytes"] > 0 for name, page in large["pages"].items()} == {
        "run_page": True, "question_page": True, "certificate_pdf": True, "offline_html": True, "experiments": True,
        "list": True}


def test_bench_parallel(data, tmp_path):
    got = run_script("bench_parallel.py", str(data / "pdfs"), "--small", tmp_path=tmp_path)
    for name in ("write_golden", "comparison"):
        run = got["remote_like"][name]
        assert all(run["identical"].values()), run["identical"]  # same requests, outputs, caches and totals
        assert run["serial"]["most_at_once"] == 1 and 1 <= run["4_at_once"]["most_at_once"] <= 4
        assert run["serial"]["sent"] == run["4_at_once"]["sent"] == run["serial"]["usage"]["requests"]
    assert got["remote_like"]["comparison"]["serial"]["sent"] > 0 and got["local_model_one_slot"]["same_texts"]
    assert [p["at_once"] for p in got["local_model_one_slot"]["passes"]] == [1, 4, 1]


def test_judge_calibration_lexical(tmp_path):
    """The model-free bar of benchmarks/judge_calibration_lexical.json re-runs: the hand verdicts of
    data/judge_set against the lexical judge, kappa with its bootstrap interval per metric."""
    got = run_script("judge_calibration.py", "--model", "lexical", "--limit", "12", "--metrics",
                     "correctness,faithfulness", "--cache", str(tmp_path / "cache"), tmp_path=tmp_path)
    assert got["model"] == "lexical" and got["cases_judged"] == 12
    for metric in ("correctness", "faithfulness"):
        row = got["per_metric"][metric]
        assert row["scored"] == 12 and row["outcomes"] == {"ok": 12}
        low, high = row["kappa_ci95"]
        assert -1.0 <= low <= row["kappa"] <= high <= 1.0
    assert got["calls"]["asked"] == 24
