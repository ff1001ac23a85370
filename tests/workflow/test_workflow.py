"""Real Snakemake runs of a tiny config, as a user would start them."""

import json
import re

import pandas as pd
import pytest
import yaml
from helpers import open_page, snakemake, tiny_config


def test_tiny_run_isolates_a_failing_generator(tiny_run):
    tmp_path, config, env = tiny_run
    out = tmp_path / "results/synthetic/adult"
    status = {g: json.loads((out / g / "seed0.json").read_text()) for g in ("cart", "independent", "broken")}
    assert status["cart"]["status"] == "ok" and status["independent"]["status"] == "ok"
    assert status["broken"]["status"] == "failed" and "NoSuchSynthesizer" in status["broken"]["error"]
    assert (tmp_path / "results/logs/generate/adult/cart/seed0.log").exists()
    # one measure job per synthetic run; each measure logs to its own file, RAPID's units to one
    logs = tmp_path / "results/logs"
    job = (logs / "measures/adult/cart/seed0.log").read_text()
    assert "rapid logit-income: ok" in job and "mia: ok" in job and "utility: ok" in job, job
    assert (logs / "rapid/adult/cart/seed0.log").read_text().count("RAPID = ") == 1  # logit -> income
    assert "failed: generator broken failed" in (logs / "mia/adult/broken/seed0.log").read_text()

    rapid = pd.read_csv(tmp_path / "results/tables/rapid.csv")
    assert set(rapid["generator"]) == {"cart", "independent", "broken"}
    assert rapid.set_index("generator").loc["broken", "status"] == "failed 1/1"
    assert rapid.set_index("generator").loc["cart", "status"] == "ok"
    mia = pd.read_csv(tmp_path / "results/tables/mia.csv")
    assert set(mia["generator"]) == {"cart", "independent", "broken"}
    assert (mia.loc[mia["generator"] == "broken", "status"] == "failed 1/1").all()
    # synthpop's measures: their tables (one row per generator x attack), the failed generator kept
    for name, headline in (("repu", "repU"), ("disco", "DiSCO")):
        table = pd.read_csv(tmp_path / f"results/tables/{name}.csv")
        assert set(table["generator"]) == {"cart", "independent", "broken"}, name
        ok = table[table["status"] == "ok"]
        assert set(ok["generator"]) == {"cart", "independent"}, name
        assert ok[[f"{headline}_mean", "member_excess_mean"]].notna().all().all(), name
    dp_coverage = pd.read_csv(tmp_path / "results/tables/dp_coverage.csv")
    assert set(dp_coverage["family"]) == {"gaussian", "logistic"}
    assert set(dp_coverage["interval"]) == {"nonprivate", "plugin_wald", "noise_aware_wald", "bootstrap", "naive"}
    for figure in ("rapid_max_adult", "rapid_curves_adult", "mia_roc_adult", "mia_f1_adult", "risk_utility_adult",
                   "dp_variance", "dp_coverage", "dp_clipping", "dp_scaling", "dp_census"):
        assert (tmp_path / f"results/figures/{figure}.png").stat().st_size > 1000


def test_summary_puts_risk_next_to_utility(tiny_run):
    tmp_path, _, _ = tiny_run
    summary = pd.read_csv(tmp_path / "results/tables/summary.csv").set_index("generator")
    assert sorted(summary.index) == ["broken", "cart", "independent"]  # the failed one included
    assert summary.loc["broken", "status"].startswith("failed 1/1: ConfigError")
    assert summary.loc[["cart", "independent"], "status"].eq("ok").all()
    assert summary.loc["broken", ["rapid_max", "mia_auc", "quality"]].isna().all()
    ok = summary.loc[["cart", "independent"]]
    for column in ("rapid_excess", "rapid_verdict", "mia_auc", "mia_tpr_low_fpr", "quality", "efficacy_ratio",
                   "fit_seconds", "repU", "repu_member_excess", "DiSCO", "disco_member_excess"):
        assert ok[column].notna().all(), column
    # cart keeps the relations between columns that independent sampling destroys: both its risk
    # and its utility must be higher, measured as RAPID's excess over its chance floor.
    # (Independent data carry no information; on one seed of 300 records its single attacker still
    # beats chance at the 5 % level now and then: here p = 0.04, excess 0.02. The unit tests of
    # tests/unit/test_rapid.py check the verdict "no attacker beats chance" on shuffled Adult.)
    assert summary.loc["cart", "rapid_max"] > summary.loc["cart", "rapid_chance_floor"]
    assert summary.loc["cart", "rapid_excess"] > 0.1 > 0.05 > summary.loc["independent", "rapid_excess"]
    assert summary.loc["cart", "rapid_verdict"] == "income: beats chance"
    assert summary.loc["cart", "efficacy_ratio"] > summary.loc["independent", "efficacy_ratio"]
    assert summary.loc["cart", "quality"] > summary.loc["independent", "quality"]
    for suffix in ("csv", "md", "tex"):
        assert (tmp_path / f"results/tables/summary.{suffix}").stat().st_size > 200
    assert "\\toprule" in (tmp_path / "results/tables/summary.tex").read_text()


def test_report_renders_in_headless_chromium(tiny_run):
    tmp_path, _, _ = tiny_run
    driver, images = open_page(tmp_path / "results/report/index.html")
    try:
        rows = driver.execute_script(
            "return Array.from(document.querySelectorAll('#summary tbody tr'))"
            ".map(r => [r.cells[0].innerText, r.cells[1].innerText]);")
        captions = driver.execute_script(
            "return Array.from(document.querySelectorAll('figure')).map(f => [f.id, f.querySelector('figcaption').innerText]);")
        failures = driver.find_element("id", "failures").find_element("xpath", "following-sibling::*[1]").text
        # The answer first: the verdict matrix starts on a laptop's first screen, and nothing on the
        # page is wider than the window (no table scrolls sideways).
        driver.set_window_size(1366, 768)
        matrix_top = driver.execute_script("return document.getElementById('verdicts').getBoundingClientRect().top;")
        matrix = driver.execute_script(
            "return Array.from(document.querySelectorAll('#verdicts tbody tr'))"
            ".map(r => [r.cells[0].innerText, r.cells[1].innerText, r.cells.length]);")
        widths = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth];")
        provenance = driver.execute_script("return document.body.innerText;")
    finally:
        driver.quit()
    expected_figures = {p.stem for p in (tmp_path / "results/figures").glob("*.png")}
    assert {alt for alt, _ in images} == expected_figures
    assert all(loaded for _, loaded in images), [alt for alt, loaded in images if not loaded]
    # Every figure says what it shows: its caption has more than the figure's name.
    assert all(len(text) > len(name) + 80 for name, text in captions), captions
    assert sorted(rows) == sorted(["adult", g] for g in ("cart", "independent", "broken"))
    assert matrix_top < 768 and widths[0] <= widths[1], (matrix_top, widths)
    assert {("adult", "cart"), ("adult", "independent")} <= {tuple(r[:2]) for r in matrix}
    assert {r[2] for r in matrix} == {6}  # dataset, generator, four risks
    assert "broken" in failures and "NoSuchSynthesizer" in failures
    for needle in ("Configuration as run", "scikit-learn", "Wall time per stage", "generate", "seeds [0]"):
        assert needle in provenance, needle


def test_snakemake_report_builds(tiny_run):
    tmp_path, config, env = tiny_run
    snakemake(tmp_path, config, "--report", str(tmp_path / "snakemake-report.zip"), env=env)
    assert (tmp_path / "snakemake-report.zip").stat().st_size > 10_000


@pytest.mark.slow  # a second Snakemake run: `make test-all` and CI run it
def test_rerun_after_adding_a_generator_touches_only_its_branch(tiny_run):
    tmp_path, config, env = tiny_run
    dry = snakemake(tmp_path, config, "-n", env=env)
    assert "Nothing to be done" in dry.stdout + dry.stderr

    extended = yaml.safe_load(config.read_text())
    extended["generators"]["independent_again"] = {"backend": "independent"}
    extended_path = tmp_path / "extended.yaml"
    extended_path.write_text(yaml.safe_dump(extended))
    dry = snakemake(tmp_path, extended_path, "-n", env=env)
    # Group jobs print their member jobs indented.
    blocks = re.split(r"^\s*(?:local)?rule (\w+):\n", dry.stdout, flags=re.M)[1:]
    jobs = [(rule, (re.findall(r"^\s+wildcards: (.*)$", body, re.M) or [""])[0])
            for rule, body in zip(blocks[::2], blocks[1::2])]
    per_run = {(rule, wildcards) for rule, wildcards in jobs if wildcards}
    aggregations = {rule for rule, wildcards in jobs if not wildcards}
    assert {rule for rule, _ in per_run} == {"generate", "measures"}
    assert all("generator=independent_again" in wildcards for _, wildcards in per_run), per_run
    assert aggregations == {"rapid_summary", "mia_summary", "dcr_summary", "exposure_summary", "domias_summary",
                            "repu_summary", "disco_summary", "utility_summary",
                            "exact_copies_summary", "summary", "provenance", "report", "findings", "all"}

    (tmp_path / "results/synthetic/adult/cart/seed0.parquet").unlink()
    dry = snakemake(tmp_path, config, "-n", "--quiet", "rules", env=env)
    text = dry.stdout + dry.stderr
    assert "generate" in text and "split" not in text and "load_dataset" not in text


def test_config_errors_name_the_key(tmp_path):
    """The workflow validates its config before planning (the other bad keys are checked in-process
    against the same schema: tests/unit/test_config_schema.py)."""
    config_path = tiny_config(tmp_path)
    config = yaml.safe_load(config_path.read_text())
    config["datasets"]["adult"]["n_trian"] = 5
    config_path.write_text(yaml.safe_dump(config))
    done = snakemake(tmp_path, config_path, "-n", check=False)
    assert done.returncode != 0
    assert "n_trian" in done.stdout + done.stderr
