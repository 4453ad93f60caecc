"""compare_embedders on a real collection of the sample documents: the bundled MiniLM (fp32) against a
served route (a scripted loopback server counting exact tokens, priced), a useless embedder (random
vectors), a copy of itself (a tie), itself alone; the saved run, its page and the terminal command."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.llama_server import Scripted
from tests.route_scripts import base_of, embed_reply
from vectrixdb import Vectrix
from vectrixdb.errors import BadInput
from vectrixdb.evaluation import Question, compare_embedders, load_run
from vectrixdb.evaluation.retrieval.embedders_compare import ONE

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted(str(p) for p in (ROOT / "data" / "sample").glob("*"))
GOLDEN = str(ROOT / "data" / "golden" / "sample.jsonl")
MINILM = "all-MiniLM-L6-v2@fp32"


class Random:
    """A useless embedder: a random unit vector per call, whatever the text."""

    name = "tests/random-vectors"
    dim = 32

    def encode(self, texts, *, progress=False):
        rows = np.random.default_rng(len(texts) * 7919 + len("".join(texts))).standard_normal((len(texts), self.dim))
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


class Copy:
    """MiniLM under another name: the same vectors for every text, so a perfect tie with it."""

    name = "tests/minilm-copy"

    def __init__(self):
        from vectrixdb.embedding import get_embedder

        self.inner = get_embedder(MINILM)
        self.dim = self.inner.dim

    def encode(self, texts, *, progress=False):
        return self.inner.encode(texts)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample documents in a real collection embedded with MiniLM fp32 (its default space)."""
    db = Vectrix("sample", path=tmp_path_factory.mktemp("embedders"), model=MINILM)
    db.add_documents(SAMPLE, progress=False)
    return db


def sentences() -> list[Question]:
    """One question per sentence of each sample document (its words as they stand), labelled with it:
    enough questions for a paired test to tell a real model from random vectors."""
    out = []
    for path in SAMPLE:
        text = Path(path).read_text(encoding="utf-8")
        for n, s in enumerate(x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", text)):
            if len(s.split()) >= 5 and not s.startswith("#"):
                out.append(Question(s, None, (Path(path).name,), f"{Path(path).stem}-{n}"))
    return out


def test_minilm_against_a_priced_route_saved_shown_and_reused(sample, tmp_path):
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from vectrixdb.cli.commands import app
    from vectrixdb.server import create_app

    server = Scripted(respond=embed_reply)
    try:
        route = f"{base_of(server)}#embed-1"  # each text costs exactly 3 tokens (route_scripts.embeddings)
        folder = str(tmp_path / "runs")
        report = compare_embedders(sample, GOLDEN, [MINILM, route], k=(1, 3), prices={route: {"per_million_tokens": 2.0}},
                                   save_to=folder, name="minilm or the route")
        rows = {r["name"]: r for r in report["candidates"]}
        chunks = len(sample.chunks())
        assert rows[route]["chunks_embedded"] == chunks and rows[route]["dim"] == 8
        # 3 tokens a text, $2 a million: $0.006 per 1,000 chunks and per 1,000 queries, from the token record
        assert rows[route]["cost_per_1k_chunks"] == pytest.approx(0.006)
        assert rows[route]["cost_per_1k_queries"] == pytest.approx(0.006)
        assert rows[MINILM]["cost"] == "local" and rows[MINILM]["cost_per_1k_chunks"] is None
        assert rows[MINILM]["space"] == "default" and any("reused" in n for n in report["notes"])
        for r in rows.values():
            assert r["query_p95_ms"] >= r["query_p50_ms"] > 0 and r["index_bytes"] > 0
            assert r["ndcg low"] <= r["ndcg"] <= r["ndcg high"]
        assert rows[route]["embed_s_per_1k_chunks"] > 0
        assert report["by"] == "doc" and report["by_from"].startswith("labels")  # the labels' grain, as retrieval_report's
        assert report["questions"] == 6
        assert "Holm-adjusted paired p >= 0.05" in report["rule"]

        back = load_run(folder, report["run_id"])  # the saved run loaded back
        assert back.kind == "embedders" and back["candidates"] == report["candidates"]
        assert list(back.tables["outcomes"].columns) == [MINILM, route]
        page = TestClient(create_app(folder), base_url="http://127.0.0.1").get(f"/runs/{report['run_id']}")
        assert page.status_code == 200 and "Cost beside the quality" in page.text and "$0.006" in page.text
        assert "cannot be told apart" in page.text or "best" in page.text
        listed = CliRunner().invoke(app, ["runs", "list", folder]).output
        assert "best" in listed and report["run_id"] in listed

        sent = len(server.requests)  # again, unpriced: both spaces are reused, no chunk is embedded again
        again = compare_embedders(sample, GOLDEN, [MINILM, route], k=(1, 3))
        assert len(server.requests) == sent
        assert {r["name"]: r["chunks_embedded"] for r in again["candidates"]} == {MINILM: 0, route: 0}
        unpriced = {r["name"]: r["cost"] for r in again["candidates"]}[route]
        assert "not measured" in unpriced and "$" not in unpriced  # the space came built: never a made-up 0

        fresh = compare_embedders(sample, GOLDEN, [f"{base_of(server)}#embed-2"], k=(1, 3))  # a new route, no price
        assert fresh["candidates"][0]["cost"] == ("chunks: not priced (3,000 tokens per 1,000 chunks); "
                                                  "queries: not priced (3,000 tokens per 1,000 queries)")
        assert fresh["candidates"][0]["cost_per_1k_chunks"] is None
    finally:
        server.close()


def test_random_vectors_are_told_apart_from_minilm(sample):
    questions = sentences()
    assert len(questions) >= 10
    report = compare_embedders(sample, questions, [Random(), MINILM], k=1)
    lead, other = report["candidates"]
    assert lead["name"] == MINILM and other["name"] == Random.name
    assert other["p_holm"] < 0.05 and other["verdict"] == "behind the leader"
    assert report["best"] == {"name": MINILM, "ndcg@1": lead["ndcg"], "space": "default"}
    assert report["verdict"].startswith(f"best: {MINILM}")
    from vectrixdb.evaluation.runs.kinds import kind_of  # what `runs list` and the run page head with

    assert kind_of("embedders").headline_of(dict(report))["best"] == f"{MINILM} (ndcg@1 {lead['ndcg']:.3f})"


def test_two_identical_candidates_are_a_tie_and_no_best_is_claimed(sample):
    report = compare_embedders(sample, GOLDEN, [MINILM, Copy()], k=(1, 3))
    a, b = report["candidates"]
    assert a["ndcg"] == b["ndcg"] and a["name"] == MINILM  # equal means: the first given leads
    assert b["p_holm"] == 1.0 and b["verdict"] == "cannot be told apart from the leader"
    assert b["questions_needed"] is None and b["questions_needed_why"].startswith("no gap")
    assert report["best"] is None and report["tied"] == [Copy.name]
    assert report["verdict"].startswith("no best")


def test_one_candidate_runs_no_test_and_says_so(sample):
    report = compare_embedders(sample, GOLDEN, [MINILM], k=3)
    (only,) = report["candidates"]
    assert report["best"] is None and report["verdict"] == ONE and report["rule"] == ONE
    assert only["p_holm"] is None and only["verdict"] == "the only candidate"


def test_empty_golden_is_an_error_never_a_perfect_score(sample, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(BadInput):
        compare_embedders(sample, str(empty), [MINILM])
    with pytest.raises(BadInput, match="never reported as a perfect one"):
        compare_embedders(sample, [], [MINILM])
    with pytest.raises(BadInput, match="no labelled question"):
        compare_embedders(sample, [Question("unlabelled?")], [MINILM])
    with pytest.raises(BadInput, match="at least one"):
        compare_embedders(sample, GOLDEN, [])
    with pytest.raises(BadInput, match="per_million_tokens"):
        compare_embedders(sample, GOLDEN, [MINILM], prices={MINILM: {"per_million_tokens": -1}})


def test_compare_embedders_from_a_terminal(sample, tmp_path):
    from typer.testing import CliRunner

    from vectrixdb.cli.commands import app

    server = Scripted(respond=embed_reply)
    try:
        route = f"{base_of(server)}#embed-cli"
        got = CliRunner().invoke(app, ["compare-embedders", "sample", "--path", str(sample.root), "--golden", GOLDEN,
                                       "--model", MINILM, "--model", route, "--price", f"{route}=2", "--k", "3"])
        assert got.exit_code == 0, got.output
        assert "verdict:" in got.output and "Holm-adjusted paired p >= 0.05" in got.output
        assert "$0.006" in got.output and "local" in got.output
        bad = CliRunner().invoke(app, ["compare-embedders", "sample", "--path", str(sample.root), "--golden", GOLDEN,
                                       "--model", MINILM, "--price", "nonsense"])
        assert bad.exit_code == 2 and "MODEL=USD" in bad.output
    finally:
        server.close()


def test_rerankers_over_the_leaders_space_with_their_cost(sample):
    from tests.route_scripts import rank_reply

    server = Scripted(respond=rank_reply)  # 5 tokens a request: one request per question here (5 chunks)
    try:
        route = f"{base_of(server)}#rerank-1"
        words = lambda query, texts: [float(len(set(query.split()) & set(t.split()))) for t in texts]  # noqa: E731
        report = compare_embedders(sample, GOLDEN, [MINILM], k=3, rerankers=[route, words],
                                   prices={route: {"per_million_tokens": 2.0}})
        rows = {r["name"]: r for r in report["candidates"]}
        served, local = rows[f"default + rerank {route}"], rows["default + rerank <lambda>"]
        assert served["kind"] == local["kind"] == "reranker" and served["space"] == "default"
        assert served["cost_per_1k_queries"] == pytest.approx(0.01) and served["cost_per_1k_chunks"] is None
        assert local["cost"] == "chunks: none (a reranker embeds no chunk); queries: local"
        assert len(report["candidates"]) == 3 and all(r["p_holm"] is not None for r in report["candidates"][1:])
    finally:
        server.close()
