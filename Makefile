# Pinot capacity-planning workbench. `make` lists the targets.
# Only Python 3.11+ and Java 17+ are needed on PATH; everything else is installed into .venv.

.DEFAULT_GOAL := help
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SCENARIO ?= scenarios/default.yaml
NAME ?= $(basename $(notdir $(SCENARIO)))
SWEEP ?= sweeps/servers.yaml
SWEEPS_DIR := data/processed/sweeps
# the sweep `make report` reports: REPORT_SWEEP=DIR, else the one `make sweep` or `make demo` ran last
REPORT_SWEEP ?=
PYTEST_ARGS ?=

export PYTHONDONTWRITEBYTECODE := 1
export SPARK_LOCAL_IP := 127.0.0.1

## help: list the targets (this text)
.PHONY: help
help:
	@echo "Pinot capacity-planning workbench"
	@echo
	@awk '/^## / { sub(/^## /, ""); i = index($$0, ": "); printf "  make %-20s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

## create_environment: create .venv (conda users: conda env create -f environment.yml)
.PHONY: create_environment
create_environment: $(BIN)/python

## requirements: install the workbench and its development tools into .venv
.PHONY: requirements
requirements: $(VENV)/.installed-dev

## check-java: check that Java 17+ is on PATH (Spark needs it)
.PHONY: check-java
check-java:
	@$(PYTHON) scripts/check_java.py

## demo: the default scenario end to end: Spark workload -> sizing sweep of the model -> reports/default.pdf
.PHONY: demo
demo: $(VENV)/.installed check-java
	$(BIN)/workbench validate $(SCENARIO)
	$(BIN)/workbench generate $(SCENARIO) --out data/raw/$(NAME) --overwrite
	rm -rf $(SWEEPS_DIR)/$(NAME)
	$(BIN)/workbench sweep sweeps/$(NAME).yaml --out $(SWEEPS_DIR)/$(NAME)
	@echo $(SWEEPS_DIR)/$(NAME) > $(SWEEPS_DIR)/.last
	$(BIN)/workbench report $(SWEEPS_DIR)/$(NAME) --out reports/$(NAME).pdf

PINOT_PROBE := probes/pinot
PINOT_BUILT := $(PINOT_PROBE)/target/.built

$(PINOT_BUILT): $(PINOT_PROBE)/pom.xml $(shell find $(PINOT_PROBE)/src -name '*.java')
	@command -v mvn >/dev/null || { echo "error: mvn not found: fetching Apache Pinot's jars needs Maven 3.8+ (Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)"; exit 2; }
	mvn -q -B -f $(PINOT_PROBE)/pom.xml package
	@touch $@

KAFKA_PROBE := probes/kafka
KAFKA_BUILT := $(KAFKA_PROBE)/target/.built

$(KAFKA_BUILT): $(KAFKA_PROBE)/pom.xml $(shell find $(KAFKA_PROBE)/src -type f)
	@command -v mvn >/dev/null || { echo "error: mvn not found: fetching Apache Kafka's jars needs Maven 3.8+ (Debian/Ubuntu: apt-get install -y maven; macOS: brew install maven)"; exit 2; }
	mvn -q -B -f $(KAFKA_PROBE)/pom.xml package
	@touch $@

## pinot: fetch the pinned Apache Pinot release and the Kafka broker REALTIME tests stream through; build their drivers
.PHONY: pinot
pinot: check-java $(PINOT_BUILT) $(KAFKA_BUILT)

## test: run the whole test suite (unit, Pinot vectors, real Pinot, validation, Spark, end to end) plus lint
.PHONY: test
test: $(VENV)/.installed-dev check-java pinot lint
	$(BIN)/pytest -q $(PYTEST_ARGS)

## test-fast: tests that need neither Spark, Pinot nor long runs (no `slow`, `spark` or `pinot` marker)
.PHONY: test-fast
test-fast: $(VENV)/.installed-dev
	$(BIN)/pytest -q -m "not spark and not slow and not pinot" $(PYTEST_ARGS)

## lint: ruff and mypy on the library
.PHONY: lint
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check workbench tests benchmarks
	$(BIN)/mypy workbench

## gc-probe: run the JVM heap probe (javac/java 17 on PATH) over keys x heaps; GC logs in data/interim/gc-probe
.PHONY: gc-probe
gc-probe:
	OUT=data/interim/gc-probe bash probes/gc/run.sh

## bench: run the benchmarks (printed ratios against in-process baselines)
.PHONY: bench
bench: $(VENV)/.installed-dev
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

## sweep: run the sweep in SWEEP (default sweeps/servers.yaml) into data/processed/sweeps/ (make report reports it)
.PHONY: sweep
sweep: $(VENV)/.installed
	$(BIN)/workbench sweep $(SWEEP) --out $(SWEEPS_DIR)/$(basename $(notdir $(SWEEP)))
	@echo $(SWEEPS_DIR)/$(basename $(notdir $(SWEEP))) > $(SWEEPS_DIR)/.last

## report: write reports/NAME.pdf from the sweep make sweep or make demo ran last (or REPORT_SWEEP=DIR)
.PHONY: report
report: $(VENV)/.installed
	@dir="$(REPORT_SWEEP)"; [ -n "$$dir" ] || dir=$$(cat $(SWEEPS_DIR)/.last 2>/dev/null); \
	test -d "$$dir" || { echo "no sweep to report: run make sweep (or make demo) first"; exit 2; }; \
	echo "$(BIN)/workbench report $$dir --out reports/$$(basename $$dir).pdf"; \
	$(BIN)/workbench report "$$dir" --out "reports/$$(basename $$dir).pdf"

## clean: remove generated data, reports and caches (keeps .venv)
.PHONY: clean
clean:
	rm -rf data/raw/* data/processed/* reports/*.pdf reports/figures .pytest_cache .mypy_cache .ruff_cache spark-warehouse \
		$(PINOT_PROBE)/target
	find . -name __pycache__ -prune -exec rm -rf {} +
