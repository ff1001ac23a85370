"""Fixtures and markers for both folders: tests/unit (no Snakemake) and tests/workflow (real
Snakemake runs, SLURM, the whole workflow; marked `workflow`). `helpers` (tests/helpers.py) is
importable from every test (pythonpath in pyproject.toml)."""

import os
import subprocess
import sys
from pathlib import Path

from synthrisk.study.workflow import THREAD_VARIABLES

# One thread per OpenMP/BLAS pool unless the caller says otherwise, set before numpy and
# scikit-learn load them: the tests fit small models, where a second thread costs more than it
# gives, and OpenMP threads spin when the cores are shared (a RAPID gbm fit on 2,000 records took
# 0.6 s with one thread, 1.7-6 s with two, beside another job). Workflow jobs set their own.
for _variable in THREAD_VARIABLES:
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from helpers import ROOT, snakemake, tiny_config, tinygen_package  # noqa: E402

from synthrisk.data import load_dataset, load_schema  # noqa: E402
from synthrisk.data.schema import DatasetSchema  # noqa: E402

WORKFLOW_TESTS = Path(__file__).resolve().parent / "workflow"


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items):
    """Every test under tests/workflow is marked `workflow` (-m workflow, -m 'not workflow'). Under
    pytest-xdist they come first: they are the longest stretch one worker runs (below)."""
    for item in items:
        if WORKFLOW_TESTS in item.path.parents:
            item.add_marker(pytest.mark.workflow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: WORKFLOW_TESTS not in item.path.parents)


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (`make test` runs two workers), the tests under tests/workflow go to one
    worker, in order: they share one tiny Snakemake run (the session fixture `tiny_run`), which
    each worker would otherwise make again, and some rerun it in place. Every other test file goes
    to one worker whole, so that its module fixtures (an audit, a release) and the generators'
    compiled programs (MST's JAX functions) are made once, not once per worker. (xdist's own
    `xdist_group` mark does not group under pytest 9, whose node ids xdist can no longer suffix.)"""
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerPerFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "tests/workflow" if nodeid.startswith("tests/workflow/") else nodeid.split("::", 1)[0]

    return OneWorkerPerFile(config, log)


@pytest.fixture(autouse=True)
def measures_registered_by_a_test_are_removed_after_it():
    """A test that registers a plug-in measure (a docs example, a hook test) leaves the registry as
    it found it: the audit runs every registered measure, so a leftover one would change the
    verdicts of whichever test runs next in the process."""
    from synthrisk.measures import registry

    registry.builtin_measures()  # the built-in ones are imported once, before the snapshot
    before = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(before)


@pytest.fixture(scope="session")
def adult_schema():
    return load_schema(ROOT / "config/datasets/adult.yaml")


@pytest.fixture(scope="session")
def adult(adult_schema):
    return load_dataset(adult_schema)


@pytest.fixture(scope="session")
def sim_schema():
    return load_schema(ROOT / "config/datasets/simulation.yaml")


@pytest.fixture(scope="session")
def mixed_schema():
    """A small mixed table with missing values in every kind of column."""
    return DatasetSchema.from_dict({
        "name": "mixed", "source": {"path": "unused.csv"},
        "columns": {"num": {"type": "continuous", "bounds": [-4, 4]}, "cnt": {"type": "integer", "bounds": [0, 8]},
                    "cat": {"type": "categorical", "levels": ["a", "b", "c"]},
                    "target": {"type": "categorical", "levels": ["no", "yes"]}},
        "quasi_identifiers": ["num", "cnt", "cat"], "sensitive": ["target"],
    })


@pytest.fixture(scope="session")
def mixed(mixed_schema):
    rng = np.random.default_rng(7)
    n = 400
    num = rng.normal(size=n)
    frame = pd.DataFrame({
        "num": np.where(rng.random(n) < 0.1, np.nan, num),
        "cnt": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 9, n)), dtype="Int64"),
        "cat": np.where(rng.random(n) < 0.1, None, rng.choice(["a", "b", "c"], n)),
        "target": np.where(num > 0, "yes", "no"),
    })
    return mixed_schema.conform(frame)


def readme_measure() -> str:
    """The measure of the docs' "Adding a measure" section (docs/extending.md), as written there."""
    import re

    text = (ROOT / "docs" / "extending.md").read_text()
    block = text.split("<!-- add-a-measure:", 1)[1]
    return re.search(r"```python\n(.*?)```", block, re.S).group(1)


def run_tiny(workdir: Path):
    """A real run of the tiny config in `workdir`: a generator that fails, and the README's plug-in
    measure (one module on PYTHONPATH plus one config entry). Returns (workdir, config path,
    environment of the run)."""
    import os

    import yaml

    package = workdir / "my_measures"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "exact_copies.py").write_text(readme_measure())
    config = tiny_config(workdir)
    raw = yaml.safe_load(config.read_text())
    raw["exact_copies"] = {"module": "my_measures.exact_copies", "alpha": 0.05}
    config.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")]))}
    snakemake(workdir, config, "--keep-going", env=env)
    return workdir, config, env


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """One real run of the tiny config (`run_tiny`), shared by the workflow tests.
    Returns (workdir, config path, environment of the run)."""
    return run_tiny(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def cheap_audit():
    """The audit (and the measure functions) with the calibration study's cheaper settings, the same
    verdict logic: two RAPID attackers, fewer permutations, refits and attacks, for this module."""
    from synthrisk.release_audit import run as audit_run
    from synthrisk.study.calibration import CHEAP_SETTINGS

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(audit_run, "AUDIT_SETTINGS", CHEAP_SETTINGS)
        yield


@pytest.fixture(scope="module")
def tinygen_site(tmp_path_factory):
    """tests/helpers.py's tinygen package installed into a folder of its own (as a user's
    site-packages), not into .venv, and on sys.path while the module's tests run."""
    base = tmp_path_factory.mktemp("plugin")
    site = base / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(site), str(tinygen_package(base / "tinygen"))],
                   check=True, capture_output=True)
    sys.path.insert(0, str(site))
    yield site
    sys.path.remove(str(site))
