"""The measure interface through Snakemake: one module plus one config entry is all a new measure
takes (the docs' example, run as written in the tiny run), its settings and the config's keys are
checked when the DAG is built, and a config runs exactly what it names."""

import json
import re
import subprocess

import pandas as pd
import yaml
from helpers import ROOT, SNAKEMAKE, local_env, snakemake, tiny_config


def test_a_measure_is_one_module_plus_one_config_entry(tiny_run):
    """The README's measure, run as written in the tiny run: its jobs, table, verdict rows and
    report section."""
    workdir, config, env = tiny_run
    run = json.loads((workdir / "results/exact_copies/adult/cart/seed0.json").read_text())
    assert run["status"] == "ok" and 0 <= run["non_member_copy_rate"] <= 1
    assert pd.read_parquet(workdir / "results/exact_copies/adult/cart/seed0.parquet").columns.tolist() == [
        "row_id", "member", "copied"]
    assert json.loads((workdir / "results/exact_copies/adult/broken/seed0.json").read_text())["status"] == "failed"
    table = pd.read_csv(workdir / "results/tables/exact_copies.csv").set_index("generator")
    assert table.loc["independent", "n_seeds_beating"] == 0
    risk = pd.read_csv(workdir / "results/tables/risk.csv")
    membership = risk[(risk["risk"] == "membership") & (risk["generator"] == "independent")]
    assert len(membership) == 1 and membership["n_attacks"].iloc[0] >= 4  # mia's three AUCs + exact copies
    page = (workdir / "results/report/index.html").read_text()
    assert "exact_copies" in page and 'id="verdicts"' in page
    # the run's policy (the tiny config has none: the default), stated once and in every cell
    from markupsafe import escape

    from synthrisk.measures.policy import Policy
    assert '<span id="policy">Policy of this run' in page and str(escape(Policy().statement())) in page
    assert page.count("threshold 0.09; Holm at 0.0125") == len(risk)
    # The calibration study read each risk at 0.05, the default policy reads it at 0.0125: not quoted.
    assert '<ul id="calibrated-power">' not in page
    rules = snakemake(workdir, config, "--list-rules", env=env).stdout.split()
    assert {"measures", "exact_copies_summary"} <= set(rules)


def test_the_report_states_the_configured_policy(tiny_run, tmp_path, monkeypatch):
    """The tiny run's report rendered again (`write_report`, as the report rule calls it) with a
    policy of its own: the page states that policy, not the default's, and quotes no calibrated
    power, which was measured at another family-wise level."""
    workdir, config, _ = tiny_run
    from synthrisk.report.html import write_report

    monkeypatch.syspath_prepend(str(workdir))  # the tiny run's own measure module

    raw = yaml.safe_load(config.read_text())
    raw["policy"] = {"alpha": 0.01, "power": 0.9, "thresholds": {"membership": 0.2}, "source": "our access committee"}
    tables = {path.stem: str(path) for path in (workdir / "results/tables").glob("*.csv")}
    page = write_report(tmp_path / "index.html", workdir / "results/tables/summary.csv", tables,
                        sorted(str(p) for p in (workdir / "results/figures").glob("*.png")), ROOT / "workflow/report",
                        raw, ROOT, workdir / "results/benchmarks", workdir / "results/provenance.json").read_text()
    stated = re.search(r'<span id="policy">(.*?)</span>', page, re.S).group(1)
    assert "family-wise level 0.01" in stated and "membership inference 0.2" in stated and "90% power" in stated
    assert "our access committee" in stated and "Policy 0070" not in stated
    assert 'id="calibrated-power"' not in page


def test_an_unknown_setting_of_a_measure_is_named(tiny_run):
    workdir, config, env = tiny_run
    raw = yaml.safe_load(config.read_text())
    raw["exact_copies"]["alpah"] = 0.1
    bad = workdir / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    done = snakemake(workdir, bad, "-n", check=False, env=env)
    assert done.returncode != 0 and "exact_copies: unknown key(s) ['alpah']" in done.stderr + done.stdout


def test_an_unknown_top_level_key_is_named(tmp_path):
    config = tiny_config(tmp_path, dcr_typo={"x": 1})
    done = snakemake(tmp_path, config, "-n", check=False)
    assert done.returncode != 0 and "unknown key 'dcr_typo'" in done.stderr + done.stdout


def test_a_user_config_runs_exactly_what_it_names(tmp_path):
    """One dataset, two generators, no measure block: the DAG holds those and utility (on by
    default), nothing of the default config (no simulation dataset, RAPID, MIA or DP). Run as the
    README says, `make run CONFIG=mine.yaml` from the repository root: the working directory holds
    the Snakefile's own config/config.yaml, which the user's config must replace, not extend."""
    (tmp_path / "config").symlink_to(ROOT / "config", target_is_directory=True)
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump({
        "seeds": [0], "datasets": {"adult": {"schema": str(ROOT / "config/datasets/adult.yaml"),
                                             "n_train": 300, "n_holdout": 200}},
        "generators": {"cart": {"backend": "cart"}, "independent": {"backend": "independent"}}}))
    dry = snakemake(tmp_path, config, "-n", "--quiet", "rules").stdout
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", dry, re.M))
    assert counts == {"load_dataset": "1", "split": "1", "generate": "2", "measures": "2", "utility_summary": "1",
                      "summary": "1", "provenance": "1", "report": "1", "findings": "1", "all": "1",
                      "total": "12"}, dry
    # The same directory with no --configfile runs the default config (the simulator among it).
    default = subprocess.run(SNAKEMAKE + ["--cores", "2", "--directory", str(tmp_path), "-n", "--quiet", "rules"],
                             capture_output=True, text=True, cwd=ROOT, env=local_env())
    assert default.returncode == 0 and re.search(r"^rapid_simulation\s+1$", default.stdout, re.M), \
        default.stdout[-3000:] + default.stderr[-3000:]
