"""The tooling a contributor runs: `make lint` stays clean (ruff, configured in pyproject.toml, and
Snakemake's own linter), and `make test` runs where it cannot install a browser."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    done = subprocess.run([str(Path(sys.executable).parent / "ruff"), "check", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_snakemake_lint_is_clean():
    done = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--software-deployment-method", "conda"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and "in a good condition" in done.stdout + done.stderr, \
        done.stdout[-3000:] + done.stderr[-3000:]


def test_make_browser_goes_on_without_a_browser_and_without_apt(tmp_path):
    """On a machine with no Chromium and no apt-get (or no root), `make test`'s browser step says so
    and does not stop the tests."""
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").symlink_to(shutil.which("id"))  # the only command the step needs besides the shell
    done = subprocess.run([shutil.which("make"), "--no-print-directory", "browser"], cwd=ROOT,
                          env={"PATH": str(bin_dir)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "no Chromium/Chrome with chromedriver found" in done.stderr and "will be skipped" in done.stderr
