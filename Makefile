# Set-up is part of every target: on a fresh clone `make run` and `make test` build .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONFIG ?= config/config.yaml
CORES ?= 2
# Working directory of a run: results/ and .snakemake/ go there (config/paper.yaml uses runs/paper).
WORKDIR ?= .

.PHONY: setup browser run test test-all lint clean-results

$(STAMP): envs/requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check pip==26.3
	$(BIN)/pip install --quiet --disable-pip-version-check -r envs/requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

setup: $(STAMP)

# The report test renders results/report/index.html in Debian's headless Chromium.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }

run: setup
	$(BIN)/snakemake $(TARGETS) --snakefile Snakefile --directory $(WORKDIR) --workflow-profile workflow/profiles/local \
		--cores $(CORES) --configfile $(CONFIG)

test: setup browser
	$(BIN)/python -m pytest -q

# Also the slow end-to-end tests (CI runs these when its budget allows).
test-all: setup browser
	$(BIN)/python -m pytest -q -m "slow or not slow"

lint: setup
	$(BIN)/snakemake --lint

clean-results:
	rm -rf results .snakemake
