#!/usr/bin/env bash
# CI: synthrisk as a user installs it (issues #29, #43). A wheel built from a copy of the tracked
# files, installed into a fresh virtualenv with `pip install -c envs/requirements.txt` (pyproject's
# dependencies at the versions pinned there; nothing of the development .venv), then `synthrisk
# generate` and `synthrisk audit` on a small simulated table,
# run outside the repository so that the installed package is the one imported. Catches a
# dependency pyproject.toml does not declare, or a data file the wheel does not ship.
#
# torch: envs/requirements.txt pins 2.13.0, and the CPU build must be the one installed. It comes
# from wherever pip is configured to find it, as for `make setup` (pip's find-links, an extra
# index); where only PyPI is configured (whose Linux torch is the CUDA build, several GB more), set
# PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu. The check below refuses any other build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.venv-fresh
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d)
cleanup() { rm -rf "$VENV" "$WORK"; }
trap cleanup EXIT
start=$SECONDS

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check pip==26.3
# From a copy of the tracked files, as a clone has them: a build in the repository would reuse its
# build/ directory, where files of a module since renamed or removed stay and go into the wheel.
mkdir "$WORK/src"
git ls-files -z | while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done \
    | tar --null -T - -cf - | tar -xf - -C "$WORK/src"
"$VENV/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$WORK/dist" "$WORK/src"
"$VENV/bin/pip" install --quiet --disable-pip-version-check -c envs/requirements.txt "$WORK"/dist/synthrisk-*.whl
echo "fresh install: the wheel built and installed with pip install -c envs/requirements.txt in $((SECONDS - start)) s"

cd "$WORK"
"$VENV/bin/python" - "$VENV" <<'EOF'
import sys
from pathlib import Path

import synthrisk
import torch

venv = Path(sys.argv[1]).resolve()
if venv not in Path(synthrisk.__file__).resolve().parents:
    sys.exit(f"fresh install: synthrisk was imported from {synthrisk.__file__}, not from {venv}")
if torch.__version__.split("+")[0] != "2.13.0" or torch.version.cuda is not None:
    sys.exit(f"fresh install: torch {torch.__version__} (CUDA {torch.version.cuda}) was installed, not the pinned "
             "CPU build 2.13.0; point pip at it (PIP_FIND_LINKS, or "
             "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu)")
# The package reads nothing outside itself: the built-in datasets' schemas ship in the wheel.
from synthrisk.data.loaders import builtin_schema
from synthrisk.study.calibration import Population

assert builtin_schema("adult").name == "adult"
assert len(Population.of("simulation", 50, seed=0).take(50)) == 50
# Members and holdout: 300 records each of the simulated population (config/datasets/simulation.yaml).
from synthrisk.data.simulate import simulate

population = simulate(n=600, strength=0.8, seed=1)
population.iloc[:300].to_csv("train.csv", index=False)
population.iloc[300:].to_csv("holdout.csv", index=False)
EOF
SCHEMA=$ROOT/config/datasets/simulation.yaml
"$VENV/bin/synthrisk" generate --generator cart --train train.csv --schema "$SCHEMA" --n 300 --seed 0 \
    --out synthetic.csv >/dev/null
status=0
"$VENV/bin/synthrisk" audit --train train.csv --synthetic synthetic.csv --holdout holdout.csv --schema "$SCHEMA" \
    --out audit >audit.log 2>&1 || status=$?
if [ "$status" -ne 0 ] || [ ! -s audit/audit.json ] || [ ! -s audit/audit.html ]; then
    tail -n 40 audit.log >&2
    echo "fresh install: synthrisk audit exited $status; audit.json $( [ -s audit/audit.json ] && echo written || echo missing)" >&2
    exit 1
fi
# The package data ship in the wheel: the calibrated rates the audit quotes beside its answer.
"$VENV/bin/python" -c "import json, sys; assert json.load(open(sys.argv[1]))['release']['calibration'], \
    'no calibration quoted: synthrisk/reference/shipped_calibration.csv is not in the wheel'" audit/audit.json
echo "fresh install: synthrisk audit ok (audit.json, audit.html); $((SECONDS - start)) s in all"
