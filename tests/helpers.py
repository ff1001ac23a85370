"""A tiny workflow config, a Snakemake runner, a headless browser and a small table shared by the tests."""

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile")]


def tiny_config(tmp_path, generators=None, **extra):
    config = {
        "seeds": [0],
        "datasets": {"adult": {"schema": str(ROOT / "config/datasets/adult.yaml"),
                               "n_train": 300, "n_holdout": 200, "n_aux": 200}},
        "generators": generators or {
            "cart": {"backend": "cart"},
            "independent": {"backend": "independent"},
            "broken": {"backend": "sdv", "model": "NoSuchSynthesizer"},
        },
    }
    config["rapid"] = {"attackers": ["logit", "linear"], "n_trees": 10, "permutations": 99}
    config["mia"] = {"thresholds": [0.01, 0.05, 0.1]}
    config["dcr"] = {}
    config["exposure"] = {}
    config["domias"] = {}
    config["repu"] = {}
    config["disco"] = {}
    config["dp"] = {"families": ["gaussian", "logistic"], "epsilons": [0.5, 2.0], "reps": 20, "n": 500,
                    "n_grid": [500, 2000], "clip_multipliers": [0.5, 1.0], "noise_aware_reps": 5,
                    "bootstrap_reps": 3, "bootstrap_draws": 20, "census": {"n": 500, "reps": 20},
                    "noise_seed": 1}  # reproducible DP noise: a rerun gives the same tables
    config.update(extra)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def synthetic_from(parts: dict, schema, backend: str, n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """`n` records of the built-in `backend` fitted on the members of a `split_real` split."""
    from synthrisk.generators import make_generator

    train = parts["train"].drop(columns="row_id")
    return make_generator({"backend": backend}, seed=seed).fit(train, schema).sample(n, seed)


@functools.cache
def _without_scontrol() -> str:
    """A folder whose `scontrol` fails at once (a link to `false`), for the front of PATH."""
    folder = Path(tempfile.mkdtemp(prefix="synthrisk-local-"))
    (folder / "scontrol").symlink_to(shutil.which("false"))
    return str(folder)


def local_env(env=None) -> dict:
    """The environment of a Snakemake run on the local cores. Snakemake loads every installed
    executor plugin when it starts, and the SLURM plugin (2.8.0) then asks `scontrol show config`
    for a default; where SLURM's client is installed but no controller runs (this machine, outside
    the SLURM test) that waits 9 s per invocation, most of a dry run. A local run does not use
    SLURM, so its `scontrol` fails at once; the SLURM test runs with the real one."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = os.pathsep.join([_without_scontrol(), env.get("PATH", "")])
    return env


def snakemake(tmp_path, config, *args, check=True, env=None):
    """Snakemake in `tmp_path`; on both local cores unless the arguments name a profile."""
    local = "--profile" not in args
    # The arguments go before --configfile, which takes every word that follows it.
    done = subprocess.run(SNAKEMAKE + (["--cores", "2"] if local else [])
                          + ["--directory", str(tmp_path), *args, "--configfile", str(config)],
                          capture_output=True, text=True, cwd=ROOT, env=local_env(env) if local else env)
    if check and done.returncode != 0:
        raise AssertionError(done.stdout[-3000:] + done.stderr[-3000:])
    return done


# A table of hostile names and types (tests/unit/test_bad_input.py breaks it one way per case;
# tests/workflow/test_bad_input_workflow.py runs it through Snakemake).
HOSTILE_SCHEMA = {
    "name": "hostile", "source": {"path": "unused.csv"},
    "drop": ["note"],
    "columns": {"age": {"type": "integer"}, "income": {"type": "continuous"},
                "sex": {"type": "categorical"}, "region": {"type": "categorical"},
                "diag-code": {"type": "categorical"}, "score": {"type": "continuous"}},
    "quasi_identifiers": ["age", "income", "sex", "region"],
    "sensitive": ["diag-code", "score"],
}


def hostile_frame(n: int, seed: int) -> pd.DataFrame:
    """`n` records of HOSTILE_SCHEMA's columns (and no `note`, which it drops)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    sex = rng.choice(["female", "male"], n)
    return pd.DataFrame({
        "age": age, "income": np.round(rng.normal(3000, 800, n), 1), "sex": sex,
        "region": rng.choice(["north", "south", "east"], n),
        "diag-code": np.where(age > 50, "chronic", rng.choice(["acute", "none"], n)),
        "score": np.round(age / 10 + rng.normal(0, 1, n), 3),
    })


# A generator package from outside synthrisk (tests/unit/test_plugin_generator.py and
# tests/workflow/test_plugin_generator_workflow.py install it).
TINYGEN = '''
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


def tinygen_package(root: Path) -> Path:
    """A pip-installable package `tinygen` advertising backend `column_shuffle` by entry point."""
    (root / "tinygen").mkdir(parents=True)
    (root / "tinygen/__init__.py").write_text(TINYGEN)
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


# Any Chromium or Chrome will do, with its matching chromedriver: Debian's packages (what `make test`
# installs when it may), a distribution's chromium-browser, Google Chrome, or the paths given in
# CHROME_BIN / CHROMEDRIVER.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _find_browser() -> tuple[str | None, str | None]:
    browser = os.environ.get("CHROME_BIN") or next(filter(None, map(shutil.which, BROWSERS)), None)
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    return browser, driver


def chromium_driver():
    """A headless Chrome WebDriver; the test is skipped when no browser and driver are found, except
    in CI (CI set), where a report that nobody rendered must not pass."""
    browser, driver = _find_browser()
    if not (browser and driver):
        message = ("no Chromium/Chrome with chromedriver found (looked for "
                   f"{', '.join(BROWSERS)} and chromedriver on PATH, or CHROME_BIN and CHROMEDRIVER)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


def open_page(page: Path):
    """`page` opened in headless Chromium, after checking it is self-contained (no http(s) address
    but XML namespaces): the driver (to quit) and every image as [alt, loaded]."""
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text  # self-contained
    driver = chromium_driver()
    try:
        driver.get(page.as_uri())
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0]);")
    except BaseException:
        driver.quit()
        raise
    return driver, images


def small_schema():
    """A three-column table (continuous x, integer k, categorical c) for the attacks' unit tests."""
    from synthrisk.data.schema import DatasetSchema

    return DatasetSchema.from_dict({
        "name": "small", "source": {"path": "unused.csv"},
        "columns": {"x": {"type": "continuous", "bounds": [0, 10]}, "k": {"type": "integer", "bounds": [0, 4]},
                    "c": {"type": "categorical", "levels": ["a", "b", "c"]}},
        "quasi_identifiers": ["x", "k"], "sensitive": ["c"]})


def small_records(schema, n: int, seed: int, first_row_id: int = 0) -> pd.DataFrame:
    """`n` independent records of `small_schema`, typed, with row ids from `first_row_id`."""
    rng = np.random.default_rng(seed)
    frame = schema.conform(pd.DataFrame({"x": rng.uniform(0, 10, n), "k": rng.integers(0, 5, n),
                                         "c": rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])}))
    return frame.assign(row_id=np.arange(first_row_id, first_row_id + n))
