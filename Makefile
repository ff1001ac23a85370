# Set-up is part of every target: on a fresh clone `make run` and `make test` build .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?= config/config.yaml
CORES ?= 2
# Working directory of a run: results/ and .snakemake/ go there (config/paper.yaml uses runs/paper).
WORKDIR ?= .

.PHONY: setup browser run run-locked reproduce bundle verify test test-all lint schema docs clean-results

$(STAMP): envs/requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check pip==26.3
	$(BIN)/pip install --quiet --disable-pip-version-check -r envs/requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

# The report test renders results/report/index.html in a headless Chromium. Any Chromium or Chrome
# with chromedriver on PATH will do (tests/helpers.py); when none is there, Debian's packages are
# installed if this is Debian and we are root. Otherwise the tests still run: the browser test is
# skipped with its reason (and fails under CI, where a report nobody rendered must not pass).
BROWSER_NAMES := chromium chromium-browser google-chrome google-chrome-stable chrome
browser:
	@if command -v chromedriver >/dev/null && for b in $(BROWSER_NAMES); do command -v $$b && break; done >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null \
			|| echo "make: could not install chromium; the browser test will be skipped" >&2; \
	else echo "make: no Chromium/Chrome with chromedriver found and cannot install one (needs root on Debian); the browser test will be skipped" >&2; fi

RUN_ARGS = --snakefile Snakefile --directory $(WORKDIR) --workflow-profile workflow/profiles/local \
	--cores $(CORES) --configfile $(CONFIG)
RUN_LOCK = $(WORKDIR)/.synthrisk-run.lock

# A run killed hard (SIGKILL, a closed laptop) leaves Snakemake's directory lock behind, and the next
# run would stop with "Directory cannot be locked". So `make run` holds an OS lock (flock) on
# $(RUN_LOCK) while it runs, which the kernel releases however the run ends: when no other
# `make run` holds it, a Snakemake lock left in $(WORKDIR)/.snakemake/locks is stale and is removed
# (snakemake --unlock) before the run. Outputs of jobs that were killed are redone
# (rerun-incomplete in workflow/profiles/local). The jobs inherit the OS lock, so a second `make run`
# in the same WORKDIR stops with a message while the first one or any of its jobs still runs.
# (A Snakemake started by hand in the same WORKDIR is not guarded by this.)
run: setup
	@mkdir -p $(WORKDIR)
	@flock --nonblock --conflict-exit-code 75 $(RUN_LOCK) $(MAKE) --no-print-directory run-locked; status=$$?; \
	if [ $$status -eq 75 ]; then echo "make run: WORKDIR=$(WORKDIR) is in use by another 'make run' (or by jobs of a stopped run that are still finishing); wait for them to end" >&2; fi; \
	exit $$status

# Called by `run` with the OS lock held; not meant to be called directly.
run-locked:
	@if [ -n "$$(ls -A $(WORKDIR)/.snakemake/locks 2>/dev/null)" ]; then \
		echo "make run: removing the lock left by an interrupted run in $(WORKDIR)"; \
		$(BIN)/snakemake $(RUN_ARGS) --unlock >/dev/null; \
	fi
	$(BIN)/snakemake $(TARGETS) $(RUN_ARGS)

# The laptop-sized paper run, then REPRODUCE.md rendered from it (synthrisk findings: each published
# finding of config/findings.yaml next to our number from this run; the same run renders to the
# same bytes). Its own working directory, so that no table of an older run at another commit is taken
# as up to date (Snakemake reruns a job when its rule changes, not when the synthrisk code it calls does).
REPRODUCE_CONFIG := config/paper.yaml config/paper_laptop.yaml
REPRODUCE_WORKDIR ?= runs/reproduce

reproduce: setup
	$(MAKE) --no-print-directory run CONFIG="$(REPRODUCE_CONFIG)" WORKDIR=$(REPRODUCE_WORKDIR)
	$(BIN)/python -m synthrisk.cli findings $(REPRODUCE_WORKDIR) > REPRODUCE.md.new && mv REPRODUCE.md.new REPRODUCE.md

# One archive of the finished run in WORKDIR (config as run, tables, figures, report, benchmark files,
# manifest with the sha256 of every file, package versions, commit); `make verify` checks another
# run's tables against it (timings excluded by name: synthrisk/study/bundle.py).
BUNDLE ?= $(WORKDIR)/results/synthrisk-bundle.tar.gz

bundle: setup
	$(BIN)/python -m synthrisk.cli bundle $(WORKDIR) --out $(BUNDLE)

verify: setup
	$(BIN)/python -m synthrisk.cli verify $(BUNDLE) $(WORKDIR)

# Lint first, as a step of its own (ruff and snakemake --lint are not tests), then tests/unit and
# tests/workflow on two pytest-xdist workers: the tests under tests/workflow share one worker and
# one tiny Snakemake run, the rest are spread over both (tests/conftest.py). On 2 cores this takes
# about 6.5 minutes, where one process took 12.8.
test: setup browser lint
	$(BIN)/python -m pytest -q -n 2

# Also the slow end-to-end tests (CI runs these when its budget allows).
test-all: setup browser lint
	$(BIN)/python -m pytest -q -m "slow or not slow"

# The docs site (mkdocs.yml, docs/) into site/; strict: a broken link or reference fails the build.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The measures' blocks of the workflow's config schema, generated from their settings (synthrisk.settings).
schema: setup
	$(BIN)/python -m synthrisk.study.config_schema workflow/schemas/config.schema.yaml

lint: setup
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint --software-deployment-method conda

clean-results:
	rm -rf results .snakemake
