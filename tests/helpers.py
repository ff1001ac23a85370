"""A tiny workflow config, a Snakemake runner and a headless browser shared by the tests."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
    config["domias"] = {}
    config["dp"] = {"families": ["gaussian", "logistic"], "epsilons": [0.5, 2.0], "reps": 20, "n": 500,
                    "n_grid": [500, 2000], "clip_multipliers": [0.5, 1.0], "noise_aware_reps": 5,
                    "bootstrap_reps": 3, "bootstrap_draws": 20, "census": {"n": 500, "reps": 20},
                    "noise_seed": 1}  # reproducible DP noise: a rerun gives the same tables
    config.update(extra)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake(tmp_path, config, *args, check=True, env=None):
    """Snakemake in `tmp_path`; on both local cores unless the arguments name a profile."""
    local = [] if "--profile" in args else ["--cores", "2"]
    # The arguments go before --configfile, which takes every word that follows it.
    done = subprocess.run(SNAKEMAKE + local + ["--directory", str(tmp_path), *args, "--configfile", str(config)],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    if check and done.returncode != 0:
        raise AssertionError(done.stdout[-3000:] + done.stderr[-3000:])
    return done


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
