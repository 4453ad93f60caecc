# `make demo` and `make test` set up .venv on first use (CPU torch first, so pip never pulls a CUDA
# build), then run. Everything they need comes from pyproject.toml and package registries.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
AZURITE := .cache/azurite/node_modules/.bin/azurite

.PHONY: demo test test-fast install notebooks bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

$(AZURITE):
	mkdir -p .cache/azurite
	npm install --silent --no-audit --no-fund --prefix .cache/azurite azurite@3.35.0

demo: $(STAMP)
	$(PY) scripts/demo.py

test: $(STAMP) $(AZURITE)
	PATH="$(CURDIR)/.cache/azurite/node_modules/.bin:$$PATH" $(PY) -m pytest -q

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) .demo .cache
