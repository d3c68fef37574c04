# utilityguard — every target creates .venv and installs what it needs first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install test lint bench perf e2e clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,bench,train]'
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

test: lint
	$(PY) -m pytest

bench: $(STAMP)
	$(VENV)/bin/utilityguard metric $$($(PY) -c "import benchmarks.examples as e; print(e.EXAMPLE_FILE)")

perf: $(STAMP)
	$(PY) -m benchmarks.perf

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
