"""The chat model is checked before a long job reads anything (model_ready.check_answers), a
collection with nothing to draft from says why, and `vectrixdb compare-chunking` takes the writer,
headings and the model-backed builds' switches from the command line (issue 30 item 6).
Real HTTP servers on loopback: the Scripted one, and one that answers by the schema asked for."""
from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from tests.conftest import ROOT, StandInEmbedder
from tests.llama_server import Scripted, _Handler, _Loopback, completion
from vectrixdb import Vectrix
from vectrixdb.chat.writer import ChatWriter
from vectrixdb.errors import Refused
from vectrixdb.evaluation.generation.model_ready import PROBE, check_answers
from vectrixdb.evaluation.writing.write import write_golden
from vectrixdb.evaluation.writing.config import WritingConfig

SAMPLE = ROOT / "data" / "sample"


@pytest.fixture
def server():
    scripted = Scripted()
    yield scripted
    scripted.close()


@pytest.fixture
def scraps(tmp_path):
    db = Vectrix("scraps", path=tmp_path / "db", model=StandInEmbedder())
    db.add_documents([{"text": "Short.", "doc_id": "a"}, {"text": "A tiny note about nothing.", "doc_id": "b"}],
                     progress=False)
    return db


class Watched:
    """A collection that counts how often its chunks are read."""

    def __init__(self, db):
        self.db, self.reads = db, 0

    def chunks(self, *args, **kw):
        self.reads += 1
        return self.db.chunks(*args, **kw)

    def __getattr__(self, name):
        return getattr(self.db, name)


def test_a_collection_of_scraps_says_why_nothing_was_drafted_and_asks_the_model_nothing(scraps, server, tmp_path):
    written = write_golden(scraps, str(tmp_path / "d.jsonl"), n=3, writer=ChatWriter(server.url, model="m"))
    assert written.notes == ["all 2 chunks skipped as scrap: shorter than 80 characters, spaces not counted; "
                             "no file was written"]
    assert server.requests == [] and written.passages["skipped"] == {"scrap": 2} and not (tmp_path / "d.jsonl").exists()
    assert "note: all 2 chunks skipped as scrap" in written.summary()


def test_the_check_comes_before_a_single_passage_is_read(scraps, server, tmp_path):
    watched = Watched(scraps)
    server.fail(500, "the backend is down").fail(500, "the backend is down")
    with pytest.raises(Refused, match=r"'m' at .* did not answer a one-word check before a single passage was read: "):
        write_golden(watched, str(tmp_path / "d.jsonl"), writer=ChatWriter(server.url, model="m", max_retries=4),
                     config=WritingConfig(check_model=True))
    assert watched.reads == 0 and len(server.requests) == 2  # the check is tried again once, not max_retries times
    assert server.requests[0]["json"]["messages"] == PROBE and server.requests[0]["json"]["max_tokens"] == 8
    server.fail(401, "Incorrect API key provided")
    with pytest.raises(Refused, match="did not answer a one-word check .*Incorrect API key provided"):
        write_golden(watched, str(tmp_path / "d.jsonl"), writer=ChatWriter(server.url, model="m", max_retries=0),
                     config=WritingConfig(check_model=True))
    assert watched.reads == 0 and not (tmp_path / "d.jsonl").exists()


def test_a_writer_from_the_settings_is_checked_by_default_and_the_probe_is_counted(scraps, server, tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("VECTRIXDB_WRITER_URL", server.url)
    monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "m")
    server.answer("ready")
    written = write_golden(scraps, str(tmp_path / "d.jsonl"), cache=tmp_path / "answers.db")
    assert len(server.requests) == 1 and written.usage["requests"] == 1 and "scrap" in written.notes[0]
    server.answer("ready")  # never from the cache: a cached reply proves nothing
    write_golden(scraps, str(tmp_path / "e.jsonl"), cache=tmp_path / "answers.db")
    assert len(server.requests) == 2


def test_a_stand_in_writer_is_not_a_service_and_is_not_checked():
    class Stub:
        def ask(self, *a, **kw):
            raise AssertionError("not to be called")

    check_answers(Stub(), "before anything")


def test_golden_write_checks_the_model_then_says_why_nothing_was_drafted(scraps, server, tmp_path, monkeypatch):
    from vectrixdb.cli.write import register

    app, golden_app = typer.Typer(), typer.Typer()
    app.add_typer(golden_app, name="golden")
    register(golden_app, lambda name, path, as_: scraps)
    monkeypatch.setenv("VECTRIXDB_WRITER_URL", server.url)
    monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "m")
    server.answer("ready")
    result = CliRunner().invoke(app, ["golden", "write", "scraps", "--out", str(tmp_path / "d.jsonl")])
    assert result.exit_code == 0, result.output
    assert "note: all 2 chunks skipped as scrap: shorter than 80 characters" in result.output
    assert [r["json"]["messages"] for r in server.requests] == [PROBE]


class BySchema(_Loopback):
    """Answers by the JSON schema a request asks for: an answer, a verdict of 1, or (no schema) a word."""

    def __init__(self):
        self.requests: list[dict] = []
        server = self

        class Handler(_Handler):
            def do_POST(self) -> None:
                body = json.loads(self.body())
                server.requests.append(body)
                name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
                reply = {"answer": json.dumps({"answer": "From the context."}),
                         "verdict": json.dumps({"score": 1, "reason": "matches"})}.get(name, "ready")
                self.send(200, completion(reply))

        super().__init__(Handler)
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"


def test_compare_chunking_with_chat_from_the_settings_and_only_the_builds_asked_for(tmp_path, monkeypatch):
    from vectrixdb.cli import app

    model = BySchema()
    try:
        monkeypatch.setenv("VECTRIXDB_WRITER_URL", model.url)
        monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "m")
        files = [str(p) for p in sorted(SAMPLE.iterdir())]
        result = CliRunner().invoke(app, ["compare-chunking", *files, "--golden", str(ROOT / "data/golden/sample.jsonl"),
                                          "--technique", "recursive", "--size", "500", "--no-headings", "--chat",
                                          "--no-llm-cuts", "--no-notes", "--no-late", "--json"])
        assert result.exit_code == 0, result.output
    finally:
        model.close()
    report = json.loads(result.stdout)["values"]
    assert report["decided_by"] == "answered right" and [(t["name"], t["embed_heading"]) for t in report["techniques"]] == [
        ("recursive", False)]
    assert {s["name"]: s["why"] for s in report["skipped"]} == {
        "llm": "refused by the caller (False)", "contextual": "refused by the caller (False)",
        "late": "refused by the caller (late=False)"}
    assert model.requests[0]["messages"] == PROBE  # before any document was read
    questions = report["questions"]
    assert len(model.requests) == 1 + 2 * questions  # the check, then an answer and a verdict per question


def test_compare_chunking_refuses_at_once_when_the_model_does_not_answer(server, tmp_path, monkeypatch):
    from vectrixdb.cli import app

    monkeypatch.setenv("VECTRIXDB_WRITER_URL", server.url)
    monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "m")
    server.fail(404, "The model `m` does not exist")
    result = CliRunner().invoke(app, ["compare-chunking", str(tmp_path / "no-such-file.md"), "--golden",
                                      str(tmp_path / "no-such-golden.jsonl"), "--chat"])
    assert result.exit_code != 0 and "did not answer a one-word check before a single document was read" in \
        result.output and "does not exist" in result.output  # the model's error, not the missing files'
    result = CliRunner().invoke(app, ["compare-chunking", str(tmp_path / "x.md"), "--golden", "g.jsonl",
                                      "--cache", str(tmp_path / "c.db")])
    assert result.exit_code != 0 and "--cache keeps the chat model's answers" in result.output
