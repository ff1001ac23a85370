"""`make lint` stays clean: ruff over the repository (its configuration is in pyproject.toml) and
Snakemake's own linter over the workflow."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    done = subprocess.run([str(Path(sys.executable).parent / "ruff"), "check", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_snakemake_lint_is_clean():
    done = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and "in a good condition" in done.stdout + done.stderr, \
        done.stdout[-3000:] + done.stderr[-3000:]
