"""A generator from outside the package through Snakemake (slow): tests/helpers.py's `tinygen`
installed as a user's site-packages and found by entry point or 'module:Class', or built into an
environment of its own by the workflow (lookup and errors: tests/unit/test_plugin_generator.py)."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT, snakemake, tinygen_package


def _config(tmp_path, generators):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "seeds": [0], "datasets": {"adult": {"schema": str(ROOT / "config/datasets/adult.yaml"),
                                             "n_train": 200, "n_holdout": 100}},
        "generators": generators}))
    return path


@pytest.mark.slow
def test_the_workflow_runs_a_generator_of_an_installed_package(tinygen_site, tmp_path):
    config = _config(tmp_path, {"by_entry_point": {"backend": "column_shuffle"},
                                "by_module": {"backend": "tinygen:ColumnShuffle"},
                                "missing": {"backend": "not_installed.module:Gen"}})
    targets = [f"results/synthetic/adult/{g}/seed0.json" for g in ("by_entry_point", "by_module", "missing")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tinygen_site), os.environ.get("PYTHONPATH", "")])}
    snakemake(tmp_path, config, *targets, env=env)
    status = {g: json.loads((tmp_path / t).read_text()) for g, t in zip(("by_entry_point", "by_module", "missing"),
                                                                        targets, strict=True)}
    assert status["by_entry_point"]["status"] == status["by_module"]["status"] == "ok"
    assert status["missing"]["status"] == "failed"
    assert "cannot import module 'not_installed.module'" in status["missing"]["error"]


@pytest.mark.slow
def test_a_generator_runs_in_an_environment_of_its_own(tmp_path):
    """The workflow builds .venv-tinygen-env from a requirements file naming the package by a path
    relative to the file, and runs the generator there: the main environment cannot import it."""
    tinygen_package(tmp_path / "tinygen")
    requirements = tmp_path / "tinygen-env.txt"
    requirements.write_text("./tinygen\n")
    config = _config(tmp_path, {"isolated": {"backend": "column_shuffle", "environment": str(requirements)}})
    target = "results/synthetic/adult/isolated/seed0.json"
    snakemake(tmp_path, config, target)
    status = json.loads((tmp_path / target).read_text())
    assert status["status"] == "ok", status
    assert (tmp_path / ".venv-tinygen-env/.installed").exists()
    # ... and only there: the main environment (a fresh interpreter, no PYTHONPATH) cannot import it.
    probe = subprocess.run([sys.executable, "-c", "from synthrisk.generators import make_generator; "
                            "make_generator({'backend': 'column_shuffle'})"],
                           capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert probe.returncode != 0 and "unknown generator backend 'column_shuffle'" in probe.stderr
