"""scripts/bench_embedders.py re-runs in its small mode without all-mpnet-base-v2 (CI does not have the
438 MB model): the bundled model's float folder stands in as the second embedder, so the SciFact path
runs for real (one collection, the default space, add_vectors of a model folder into a second space,
retrieval_report(vectors=...) on each, the paired differences) on a fresh VECTRIXDB_HOME, writing its
JSON to a temporary path. The blanked-page copy of the 10-K keeps the original page numbers."""
from __future__ import annotations

import math

import pytest

from tests.conftest import PDFS, ROOT, SCIFACT, require
from tests.test_scripts import run_script

pytestmark = pytest.mark.slow


def test_bench_embedders_small_with_the_bundled_model_as_the_second_space(tmp_path):
    """The SciFact part only (30 abstracts): the 10-K part reads all 307 pages, minutes on a busy machine;
    its page rule is checked below without embedding. The suite pins the float default model, so no int8
    export is needed here."""
    from vectrixdb.embedding import BUNDLED_MODEL, bundled_model_path

    got = run_script("bench_embedders.py", "--small", "--parts", "scifact", "--mpnet", bundled_model_path(),
                     "--scifact", str(require(SCIFACT)), tmp_path=tmp_path, timeout=900)
    assert got["small"] is True and got["mpnet"]["zip_sha256"].startswith("eb8d12ee") and "tenk" not in got
    sci = got["scifact"]
    assert sci["by"] == "doc" and sci["k"] == [10, 100] and sci["abstracts"] == 30 and sci["questions"] == 2
    default, second = sci["embedders"]["default"], sci["embedders"]["mpnet"]
    assert default["model"].startswith(BUNDLED_MODEL) and second["model"] == bundled_model_path()
    assert default["chunks"] == second["chunks"] == second["embedded"] > 30 and second["dim"] == 384
    assert second["passages_per_s"] > 0 and sci["load_average_start"] and sci["wall_s"] > 0
    for name, diff in sci["difference_mpnet_minus_minilm"].items():
        a, b = sci["default"][name], sci["mpnet"][name]
        assert math.isclose(diff["mean"], b - a, abs_tol=2e-4), name  # the paired mean is the means' difference
        assert diff["mpnet_better"] + diff["minilm_better"] + diff["ties"] == sci["questions"]
    assert sci["default"]["ndcg@10"] > 0.5 and sci["mpnet"]["ndcg@10"] > 0.5  # both spaces filled, not swapped


def test_the_page_subset_keeps_the_labelled_pages_at_their_numbers(tmp_path):
    import sys

    from pypdf import PdfReader

    from vectrixdb.evaluation.golden.files import questions_of

    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_embedders

    pdf = require(PDFS / "uber_2021.pdf")
    questions = questions_of(str(ROOT / "data/golden/uber_2021.jsonl"))[:3]  # pages 7, 8, 10, 16, 51
    out, kept = bench_embedders.page_subset(pdf, questions, 9, 0, tmp_path)
    again = bench_embedders.page_subset(pdf, questions, 9, 0, tmp_path / "again")[1]
    assert out.name == pdf.name and len(kept) == 9 and kept == again and {7, 8, 10, 16, 51} <= set(kept)
    original, subset = PdfReader(pdf).pages, PdfReader(out).pages
    assert len(subset) == len(original)
    for n in (7, 51, *kept):
        assert subset[n - 1].extract_text() == original[n - 1].extract_text() != ""
    blank = [n for n in range(1, len(original) + 1) if n not in kept]
    assert all(subset[n - 1].extract_text() == "" for n in blank[:40])
