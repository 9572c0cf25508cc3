# The two commands of README.md: `make run` and `make test`.
VENV ?= .venv
SYSTEM ?= local
# More ReFrame options for `make run`, e.g. RFM_ARGS='-S hpl_mem_fraction=0.2'
RFM_ARGS ?=

BIN := $(VENV)/bin

.PHONY: setup run test lint format check-c clean

setup:
	@scripts/setup.sh

run: setup
	$(BIN)/clusterbench run --system $(SYSTEM) $(if $(strip $(RFM_ARGS)),-- $(RFM_ARGS))

test: setup lint
	$(BIN)/pytest -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf .pytest_cache .ruff_cache
