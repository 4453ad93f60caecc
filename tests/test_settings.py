"""Settings as values: ChatWriter, compare_chunking and write_golden keep ten keywords each, the rest
in frozen configs checked when made; a keyword that moved says where it went; the defaults are the
ones the long signatures had, so nothing a caller relied on changes (the same request, the same
cache key, the same plan)."""
from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re

import pytest

from tests.llama_server import Scripted
from vectrixdb.chat.writer import ChatWriter, LimitConfig, RequestConfig
from vectrixdb.chat.cache import cache_key
from vectrixdb.errors import BadInput, BadType, VectrixError
from vectrixdb.evaluation import (
    CheckConfig,
    CompareConfig,
    CriticConfig,
    EvolutionConfig,
    KindConfig,
    PassageConfig,
    WritingConfig,
    compare_chunking,
    write_golden,
)

ASK = [{"role": "user", "content": "Say ok."}]
CALLS = {"ChatWriter": ChatWriter, "ChatWriter.from_environment": ChatWriter.from_environment,
         "compare_chunking": compare_chunking, "write_golden": write_golden}
# The keywords the two spec documents' examples pass (measure-retrieval: "Writing questions with a
# model" and "Comparing chunking"); the README's and docs/'s are read from them below.
SPEC_KEYWORDS = {"ChatWriter": {"model"}, "ChatWriter.from_environment": set(),
                 "write_golden": {"n", "writer", "examples"}, "compare_chunking": {"chat", "save_to"}}


@pytest.fixture
def server():
    scripted = Scripted()
    yield scripted
    scripted.close()


def _direct(fn) -> set[str]:
    return {p.name for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD} - {"self"}


def _readme_calls() -> dict[str, set[str]]:
    """Every keyword the README's and the documentation pages' code (blocks and inline spans) passes to the three."""
    from tests.test_docs_site import pages

    text = "\n".join(page.read_text() for page in pages())
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # an inline span may wrap onto the next line
    snippets = blocks + [re.sub(r"\n\s*", " ", s) for s in re.findall(r"`([^`]{1,400}?\))`", prose)]
    found: dict[str, set[str]] = {name: set() for name in CALLS}
    for snippet in snippets:
        try:
            tree = ast.parse(snippet.replace("...", "None"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name in found:
                    found[name] |= {k.arg for k in node.keywords if k.arg}
    return found


# -- signatures --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ChatWriter", "compare_chunking", "write_golden"])
def test_each_takes_at_most_ten_parameters(name):
    assert len(_direct(CALLS[name])) <= 10, inspect.signature(CALLS[name])


def test_every_keyword_the_readme_and_the_spec_pass_is_a_direct_parameter():
    readme = _readme_calls()
    assert readme["ChatWriter"] >= {"model", "key"} and readme["write_golden"] >= {"n", "writer", "examples"}
    options = _direct(ChatWriter)  # from_environment takes ChatWriter's keyword options
    for name, passed in readme.items():
        wanted = passed | SPEC_KEYWORDS[name]
        direct = options if name == "ChatWriter.from_environment" else _direct(CALLS[name])
        assert wanted <= direct, f"{name}: {sorted(wanted - direct)} are not direct parameters"


@pytest.mark.parametrize("call, old, went", [
    (lambda **kw: ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m", **kw), "temperature",
     "request=RequestConfig(temperature=...)"),
    (lambda **kw: ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m", **kw), "timeout",
     "limits=LimitConfig(timeout=...)"),
    (lambda **kw: ChatWriter.from_environment(**kw), "response_format", "request=RequestConfig(response_format=...)"),
    (lambda **kw: ChatWriter.azure_openai("https://r.openai.azure.com", "d", key="k", **kw), "stop_after",
     "limits=LimitConfig(stop_after=...)"),
    (lambda **kw: compare_chunking([], [], **kw), "late", "config=CompareConfig(late=...)"),
    (lambda **kw: compare_chunking([], [], **kw), "judge", "config=CompareConfig(judge=...)"),
    (lambda **kw: write_golden(None, "never.jsonl", **kw), "passages", "config=WritingConfig(passages=...)"),
    (lambda **kw: write_golden(None, "never.jsonl", **kw), "critic_config", "config=WritingConfig(critic_config=...)"),
])
def test_a_moved_keyword_says_where_it_went(call, old, went):
    with pytest.raises(BadType) as caught:
        call(**{old: 1})
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, VectrixError)
    assert f"({old}=) moved: pass {went}" in str(caught.value)


def test_an_unknown_keyword_is_still_pythons_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'temprature'"):
        ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m", temprature=0.2)


def test_a_config_in_the_wrong_place_is_refused_by_name(server):
    with pytest.raises(BadType, match="request is a RequestConfig"):
        ChatWriter(server.url, model="m", request={"temperature": 0.2})
    with pytest.raises(BadType, match="config is a CompareConfig"):
        compare_chunking([], [], config=WritingConfig())
    with pytest.raises(BadType, match="config is a WritingConfig"):
        write_golden(None, "never.jsonl", writer=ChatWriter(server.url, model="m"), config=PassageConfig())
    with pytest.raises(BadType, match="WritingConfig.passages is a PassageConfig"):
        WritingConfig(passages={"tries": 2})


# -- the configs -------------------------------------------------------------------------------

@pytest.mark.parametrize("config", [RequestConfig(), LimitConfig(), CompareConfig(), WritingConfig(), PassageConfig(),
                                    KindConfig(), CheckConfig(), CriticConfig(), EvolutionConfig()],
                         ids=lambda c: type(c).__name__)
def test_configs_are_frozen_and_documented_field_by_field(config):
    field = dataclasses.fields(config)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(config, field, None)
    doc = inspect.getdoc(type(config))
    for f in dataclasses.fields(config):  # one line per field, saying what it does
        assert re.search(rf"^{f.name}: \S", doc, re.MULTILINE), f"{type(config).__name__}.{f.name} is not documented"
    assert dataclasses.replace(config) == config


def test_extra_body_is_a_read_only_copy():
    body = {"repeat_penalty": 1.3}
    config = RequestConfig(extra_body=body)
    body["repeat_penalty"] = 9.0
    assert config.extra_body["repeat_penalty"] == 1.3
    with pytest.raises(TypeError):
        config.extra_body["top_k"] = 5  # type: ignore[index]


@pytest.mark.parametrize("make, field", [
    (lambda: RequestConfig(temperature=-0.1), "RequestConfig.temperature"),
    (lambda: RequestConfig(temperature=float("nan")), "RequestConfig.temperature"),
    (lambda: RequestConfig(max_tokens=0), "RequestConfig.max_tokens"),
    (lambda: RequestConfig(max_tokens=True), "RequestConfig.max_tokens"),
    (lambda: RequestConfig(seed=1.5), "RequestConfig.seed"),
    (lambda: RequestConfig(extra_body=[("a", 1)]), "RequestConfig.extra_body"),
    (lambda: RequestConfig(response_format="xml"), "RequestConfig.response_format"),
    (lambda: RequestConfig(strict="yes"), "RequestConfig.strict"),
    (lambda: LimitConfig(rpm=0), "LimitConfig.rpm"),
    (lambda: LimitConfig(tpm=2.5), "LimitConfig.tpm"),
    (lambda: LimitConfig(timeout=0), "LimitConfig.timeout"),
    (lambda: LimitConfig(patience=-1), "LimitConfig.patience"),
    (lambda: LimitConfig(stop_after=0), "LimitConfig.stop_after"),
    (lambda: CompareConfig(alpha=0), "CompareConfig.alpha"),
    (lambda: CompareConfig(alpha=1.0), "CompareConfig.alpha"),
    (lambda: CompareConfig(threshold=1.5), "CompareConfig.threshold"),
    (lambda: CompareConfig(answer="gpt"), "CompareConfig.answer"),
    (lambda: CompareConfig(judge=3), "CompareConfig.judge"),
    (lambda: CompareConfig(late="yes"), "CompareConfig.late"),
    (lambda: CompareConfig(executor=2), "CompareConfig.executor"),
    (lambda: CompareConfig(name=7), "CompareConfig.name"),
    (lambda: WritingConfig(scenario=3), "WritingConfig.scenario"),
    (lambda: WritingConfig(check_model="no"), "WritingConfig.check_model"),
    (lambda: PassageConfig(critic_threshold=1.2), "PassageConfig.critic_threshold"),
    (lambda: PassageConfig(max_chars=10), "PassageConfig.max_chars"),
    (lambda: PassageConfig(boilerplate="/s/"), "PassageConfig.boilerplate"),
    (lambda: PassageConfig(boilerplate=("(unclosed",)), "PassageConfig.boilerplate"),
    (lambda: PassageConfig(boilerplate_share=1.5), "PassageConfig.boilerplate_share"),
    (lambda: PassageConfig(boilerplate_share=0), "PassageConfig.boilerplate_share"),
    (lambda: KindConfig(long_words=(30, 20)), "KindConfig.long_words"),
    (lambda: KindConfig(long_words=5), "KindConfig.long_words"),
    (lambda: CheckConfig(copy_run=1), "CheckConfig.copy_run"),
    (lambda: CriticConfig(tries=0), "CriticConfig.tries"),
    (lambda: EvolutionConfig(ways=("sideways",)), "EvolutionConfig.ways"),
])
def test_a_bad_value_fails_when_the_config_is_made_naming_its_field(make, field):
    with pytest.raises(BadInput) as caught:
        make()
    assert str(caught.value).startswith(field + " ")


def test_the_edges_that_are_allowed():
    assert RequestConfig(temperature=None, max_tokens=None).sampling() == {}
    assert RequestConfig(temperature=2, seed=-1).sampling() == {"temperature": 2, "max_tokens": 1024, "seed": -1}
    assert LimitConfig(patience=0, stop_after=1, timeout=0.5).timeout == 0.5
    assert CompareConfig(alpha=0.999, threshold=0, cut_with=False, context_with=False).threshold == 0
    assert KindConfig(long_words=(1, 1)).long_words == (1, 1)


# -- defaults are the old behaviour --------------------------------------------------------------

def test_a_writer_without_configs_asks_what_it_asked_before(server):
    server.answer("ok")
    w = ChatWriter(server.url, model="m", cache=None)
    assert w.ask(ASK).ok
    body = server.requests[-1]["json"]
    assert (body["temperature"], body["max_tokens"]) == (0.0, 1024) and "seed" not in body
    assert w.sampling == {"temperature": 0.0, "max_tokens": 1024}  # so answers cached before still hit
    assert cache_key(route=w.route.name, model="m", messages=ASK, schema=None, sampling=w.sampling) == \
        cache_key(route=w.route.name, model="m", messages=ASK, schema=None,
                  sampling={"temperature": 0.0, "max_tokens": 1024})
    assert (w.max_retries, w.patience, w.stop_after, w.response_format, w.strict) == (4, 6, 5, "auto", False)
    assert (w.limiter.max_concurrency, w.limiter.rpm, w.limiter.tpm) == (4, None, None)
    assert w.route.client.timeout == 120.0


def test_the_configs_reach_the_request_and_the_limiter(server):
    server.answer(json.dumps({"n": 1}))
    w = ChatWriter(server.url, model="m", max_concurrency=2, max_retries=0,
                   request=RequestConfig(temperature=0.3, max_tokens=50, seed=7, extra_body={"top_k": 5},
                                         response_format="json_object"),
                   limits=LimitConfig(rpm=600, tpm=100000, timeout=30, patience=1, stop_after=2))
    assert w.ask(ASK, {"type": "object", "properties": {"n": {"type": "integer"}}}).value == {"n": 1}
    body = server.requests[-1]["json"]
    assert (body["temperature"], body["max_tokens"], body["seed"], body["top_k"]) == (0.3, 50, 7, 5)
    assert body["response_format"]["type"] == "json_object"
    assert (w.limiter.rpm, w.limiter.tpm, w.patience, w.stop_after, w.route.client.timeout) == (600, 100000, 1, 2, 30)


def test_azure_and_the_settings_take_the_same_options(monkeypatch):
    w = ChatWriter.azure_openai("https://r.openai.azure.com", "d", key="k", max_concurrency=3,
                                request=RequestConfig(seed=1), limits=LimitConfig(timeout=9))
    assert (w.limiter.max_concurrency, w.sampling["seed"], w.route.client.timeout) == (3, 1, 9)
    with pytest.raises(BadType, match="unknown option"):
        ChatWriter.azure_openai("https://r.openai.azure.com", "d", key="k", sampling={})
    monkeypatch.setenv("VECTRIXDB_WRITER_URL", "http://127.0.0.1:9/v1/chat/completions")
    monkeypatch.setenv("VECTRIXDB_WRITER_MODEL", "m")
    assert ChatWriter.from_environment(limits=LimitConfig(stop_after=9)).stop_after == 9


def test_compare_and_writing_defaults_are_the_old_keywords_defaults():
    assert dataclasses.asdict(CompareConfig()) == {
        "model": None, "alpha": 0.05, "answer": None, "judge": None, "threshold": 0.5, "cut_with": None,
        "context_with": None, "late": None, "executor": "local", "name": None}
    w = WritingConfig()
    assert (w.scenario, w.task, w.executor, w.check_model) == (None, None, "local", None)
    assert (w.passages, w.kinds, w.checks, w.critic_config, w.evolution) == \
        (PassageConfig(), KindConfig(), CheckConfig(), CriticConfig(), EvolutionConfig())
    params = inspect.signature(write_golden).parameters
    assert (params["n"].default, params["evolve"].default, dict(params["mix"].default)) == \
        (50, 1, {"search": 0.2, "fact": 0.3, "how_why": 0.2, "two_place": 0.15, "long": 0.15})
    assert inspect.signature(compare_chunking).parameters["budget"].default == 6000
