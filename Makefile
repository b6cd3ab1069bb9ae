# srt developer tasks. `make help` lists them.
UV ?= uv
PYTEST_ARGS ?=

.PHONY: help sync quickstart system lint typecheck test test-fast test-e2e test-under-load golden generate check-generated alone ci

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

sync: ## install uv if missing, then the workspace and dev tools into .venv
	@command -v $(UV) >/dev/null || python3 -m pip install --quiet uv
	$(UV) sync --all-packages --frozen

quickstart: sync ## a real benchmark on this machine: Dynamo frontend + 2 mocker workers + sa-bench
	$(UV) run --frozen srtctl apply --local -f examples/quickstart.yaml

lint: ## ruff check + format check
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .

typecheck: ## mypy --strict over every package
	$(UV) run --frozen mypy packages/*/src

test: sync system ## every test tier this machine can run (the README's test command)
	$(UV) run --frozen pytest $(PYTEST_ARGS)

system: ## as root: install the e2e tier's Debian packages if missing (else say the tier is skipped)
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then bash .ci/install-system.sh; \
	else echo "not root or no apt: the e2e tier (tests/e2e) will be skipped; see tools/slurm-lab/README.md"; fi

test-fast: ## unit, golden and property tests only (seconds)
	$(UV) run --frozen pytest -m "not slow and not e2e" $(PYTEST_ARGS)

test-e2e: ## the end-to-end tier only
	$(UV) run --frozen pytest -m e2e $(PYTEST_ARGS)

test-under-load: sync ## unit, integration and corpus tiers beside 2 CPU hogs (stress-ng; docs/testing.md)
	bash .ci/test-under-load.sh $(PYTEST_ARGS)

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
