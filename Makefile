# The two commands of README.md: `make run` and `make test`.
VENV ?= .venv
SYSTEM ?= local
# More ReFrame options for `make run`, e.g. RFM_ARGS='-S hpl_mem_fraction=0.2'
RFM_ARGS ?=

BIN := $(VENV)/bin

# Our C code is built out of tree, once per MPI flavour.
BUILD_DIR := $(CURDIR)/build

NODES ?= 2
# pytest-xdist workers of `make test` (docs/tests.md); 0: one process.
TEST_WORKERS ?= 3
ACCEPT ?= box:compute

.PHONY: setup setup-run run test lint format check-c clean box-up box-down acceptance dist

# `make run` installs only what the suite needs; everything else (the test
# cluster's daemons, a browser, valgrind) only for the tests.
setup-run:
	@scripts/setup.sh run

setup:
	@scripts/setup.sh test

run: setup-run
	$(BIN)/clusterbench run --system $(SYSTEM) $(if $(strip $(RFM_ARGS)),-- $(RFM_ARGS))

test: setup lint
	VENV=$(VENV) scripts/test.sh $(TEST_WORKERS)

# The C programs' own checks (tests/src/test_c_checks.py; `make test` runs them
# among its other tests).
check-c: setup
	$(BIN)/pytest -q tests/src/test_c_checks.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf .pytest_cache .ruff_cache $(BUILD_DIR) dist *.egg-info

# A wheel for a root-free install elsewhere (docs/adoption.md): no set-up
# profile (no apt-get), only a Python with pip and setuptools: the venv's if
# there is one.
PYTHON ?= $(if $(wildcard $(BIN)/python),$(BIN)/python,python3)
# setuptools builds in the checkout (build/lib, build/bdist.*, *.egg-info):
# removed before (a stale build/lib would be packaged) and after; our C
# builds in build/ are kept.
SETUPTOOLS_DEBRIS := build/lib build/bdist.* clusterbench.egg-info
dist:
	rm -rf $(SETUPTOOLS_DEBRIS)
	$(PYTHON) -m pip wheel --no-deps --no-build-isolation -w dist .
	rm -rf $(SETUPTOOLS_DEBRIS)
	@rmdir build 2>/dev/null || true

# The Slurm test cluster `box` (root; network namespaces) and acceptance on it.
box-up: setup
	$(BIN)/clusterbench testcluster up --nodes $(NODES)

box-down:
	$(BIN)/clusterbench testcluster down

acceptance: setup
	$(BIN)/clusterbench acceptance battery --system $(ACCEPT)
