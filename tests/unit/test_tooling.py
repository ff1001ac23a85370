"""The tooling a contributor runs: `make test` runs where it cannot install a browser. (`make lint`,
ruff and Snakemake's own linter, is a step of `make test` of its own, not a test.)"""

import subprocess

from helpers import ROOT


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
