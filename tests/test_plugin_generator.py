"""A generator from outside the package: a tiny installed package, found by entry point or by
'module:Class', run through the workflow; and (slow) the same package in an environment of its own."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml
from helpers import ROOT, snakemake

from synthrisk.errors import ConfigError
from synthrisk.generators import make_generator

GENERATOR = '''
import numpy as np
import pandas as pd

from synthrisk.generators import Generator


class ColumnShuffle(Generator):
    """Each column resampled on its own from the training records (an `independent` look-alike)."""

    def fit(self, train, schema):
        self.train = train.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame({c: self.train[c].to_numpy()[rng.integers(0, len(self.train), n)]
                             for c in self.train.columns})
'''


def _package(root):
    """A pip-installable package `tinygen` advertising backend `column_shuffle` by entry point."""
    (root / "tinygen").mkdir(parents=True)
    (root / "tinygen/__init__.py").write_text(GENERATOR)
    (root / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "tinygen"
        version = "0.1"
        [project.entry-points."synthrisk.generators"]
        column_shuffle = "tinygen:ColumnShuffle"
        [tool.setuptools]
        packages = ["tinygen"]
    '''))
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """tinygen installed into a folder of its own (as a user's site-packages), not into .venv."""
    base = tmp_path_factory.mktemp("plugin")
    site = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(site), str(_package(base / "tinygen"))],
                   check=True, capture_output=True)
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))


def test_a_backend_is_found_by_entry_point_and_by_module_path(installed, mixed_schema, mixed):
    for backend in ("column_shuffle", "tinygen:ColumnShuffle"):
        generator = make_generator({"backend": backend}, seed=0).fit(mixed, mixed_schema)
        synthetic = generator.sample(50, seed=1)
        assert list(synthetic.columns) == list(mixed.columns) and len(synthetic) == 50


@pytest.mark.parametrize("backend, message", [
    ("no_such_backend", "unknown generator backend 'no_such_backend'"),
    ("no_such_module:Gen", "cannot import module 'no_such_module'"),
    ("json:dumps", "'json:dumps' is not a generator class"),
])
def test_a_bad_backend_is_named(backend, message):
    with pytest.raises(ConfigError, match="generators.mine.backend") as error:
        make_generator({"backend": backend}, name="mine")
    assert message in str(error.value)


def _config(tmp_path, generators):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "seeds": [0], "datasets": {"adult": {"schema": str(ROOT / "config/datasets/adult.yaml"),
                                             "n_train": 200, "n_holdout": 100}},
        "generators": generators}))
    return path


@pytest.mark.slow
def test_the_workflow_runs_a_generator_of_an_installed_package(installed, tmp_path):
    config = _config(tmp_path, {"by_entry_point": {"backend": "column_shuffle"},
                                "by_module": {"backend": "tinygen:ColumnShuffle"},
                                "missing": {"backend": "not_installed.module:Gen"}})
    targets = [f"results/synthetic/adult/{g}/seed0.json" for g in ("by_entry_point", "by_module", "missing")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")])}
    snakemake(tmp_path, config, *targets, env=env)
    status = {g: json.loads((tmp_path / t).read_text()) for g, t in zip(("by_entry_point", "by_module", "missing"),
                                                                        targets, strict=True)}
    assert status["by_entry_point"]["status"] == status["by_module"]["status"] == "ok"
    assert status["missing"]["status"] == "failed"
    assert "cannot import module 'not_installed.module'" in status["missing"]["error"]


def test_generator_environments_are_checked_when_the_dag_is_built(tmp_path):
    from synthrisk.generators.environments import environment_dir, generator_environments

    specs = {"sc": {"backend": "synthcity"}, "plain": {"backend": "cart"}}
    assert generator_environments(specs, ROOT) == {"synthcity": ROOT / "envs/synthcity.txt"}
    assert environment_dir(ROOT / "envs/synthcity.txt", ROOT) == ROOT / ".venv-synthcity"
    mine = tmp_path / "mine.txt"
    mine.write_text("./pkg\n")
    assert environment_dir(mine, ROOT) == tmp_path / ".venv-mine"
    with pytest.raises(ConfigError, match=r"generators\.x\.environment: .*none\.txt.* does not exist"):
        generator_environments({"x": {"backend": "cart", "environment": str(tmp_path / "none.txt")}}, ROOT)
    (tmp_path / "other").mkdir()
    (tmp_path / "other/mine.txt").write_text("")
    with pytest.raises(ConfigError, match="both be built as .venv-mine"):
        generator_environments({"a": {"backend": "cart", "environment": str(mine)},
                                "b": {"backend": "cart", "environment": str(tmp_path / "other/mine.txt")}}, ROOT)


@pytest.mark.slow
def test_a_generator_runs_in_an_environment_of_its_own(tmp_path):
    """The workflow builds .venv-tinygen-env from a requirements file naming the package by a path
    relative to the file, and runs the generator there: the main environment cannot import it."""
    _package(tmp_path / "tinygen")
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
