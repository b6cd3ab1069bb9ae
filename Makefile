# srt developer tasks. `make help` lists them.
UV ?= uv
PYTEST_ARGS ?=
# Parallel tests: as root with iproute2 each pytest-xdist worker gets a private network namespace
# (conftest.py), so local jobs that bind the same ports run side by side; otherwise serially.
# `make test XDIST=` runs serially anywhere; `XDIST='-n 4'` changes the worker count.
XDIST ?= $(shell [ "$$(id -u)" = 0 ] && command -v ip >/dev/null && echo "-n 2 --dist worksteal")
# Tests run with the bytecode cache allowed (some sandboxes set PYTHONDONTWRITEBYTECODE): each of
# the thousands of Python processes the tests start would otherwise compile every module it imports.
TEST_ENV = env -u PYTHONDONTWRITEBYTECODE

.PHONY: help sync quickstart system lint typecheck test test-fast test-e2e test-under-load golden generate check-generated alone ci

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

sync: ## install uv if missing, then the workspace and dev tools into .venv, compiled to bytecode
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet uv
	$(UV) sync --all-packages --frozen --compile-bytecode
	@# the workspace packages are editable installs: their bytecode lives beside the sources
	$(UV) run --frozen python -m compileall -q $(wildcard packages/*/src)

quickstart: sync ## a real benchmark on this machine: Dynamo frontend + 2 mocker workers + sa-bench
	$(UV) run --frozen srtctl apply --local -f examples/quickstart.yaml

lint: ## ruff check + format check
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .

typecheck: ## mypy --strict over every package
	$(UV) run --frozen mypy packages/*/src

test: sync system ## every test tier this machine can run (the README's test command), in parallel as root
	$(TEST_ENV) $(UV) run --frozen pytest $(XDIST) $(PYTEST_ARGS)

system: ## as root: install the e2e tier's Debian packages if missing (else say the tier is skipped)
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then bash .ci/install-system.sh; \
	else echo "not root or no apt: the e2e tier (tests/e2e) will be skipped; see tools/slurm-lab/README.md"; fi

test-fast: ## unit, golden and property tests only (seconds)
	$(TEST_ENV) $(UV) run --frozen pytest -m "not slow and not e2e" $(PYTEST_ARGS)

test-e2e: ## the end-to-end tier only
	$(TEST_ENV) $(UV) run --frozen pytest -m e2e $(PYTEST_ARGS)

test-under-load: sync ## unit, integration and corpus tiers beside 2 CPU hogs (stress-ng; docs/testing.md)
	$(TEST_ENV) bash .ci/test-under-load.sh $(XDIST) $(PYTEST_ARGS)

golden: ## refresh golden files (review the diff before committing)
	$(UV) run --frozen pytest --update-golden $(PYTEST_ARGS)

generate: ## regenerate the msgspec structs from the JSON Schemas
	$(UV) run --frozen python packages/srt-schema/scripts/generate_structs.py

check-generated: ## fail if the committed structs differ from the schema
	$(UV) run --frozen python packages/srt-schema/scripts/generate_structs.py --check

alone: ## install srt-schema and srt-telemetry alone in fresh venvs and run their tests
	bash .ci/test-alone.sh

ci: ## what CI runs
	bash .ci/run
