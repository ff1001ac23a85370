"""The default quick configuration, end to end, with the sanity checks the issues ask for."""

import shutil
import subprocess
import sys

import pandas as pd
import pytest
from helpers import ROOT


@pytest.mark.slow
def test_default_config_brackets_the_risk(tmp_path):
    shutil.copytree(ROOT / "config", tmp_path / "config")
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
         "--workflow-profile", str(ROOT / "workflow/profiles/local"), "--cores", "2"],
        capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    check_default_run(tmp_path)


def check_default_run(tmp_path):
    """The checks on a finished run of config/config.yaml in `tmp_path` (also usable on a run kept
    elsewhere: check_default_run(Path("runs/quick")))."""
    rapid_max = pd.read_csv(tmp_path / "results/tables/rapid_max.csv")
    for (dataset, sensitive), rows in rapid_max.groupby(["dataset", "sensitive"]):
        by = rows.set_index("generator")
        assert by["excess_mean"].idxmax() == "identity", (dataset, sensitive)
        assert by.loc["identity", "verdict"] == "beats chance", (dataset, sensitive)
        # The independent baseline carries no information: no excess over chance worth the name
        # (Holm over 7 attackers still leaves a 5 % chance per seed of a false "beats chance").
        assert by.loc["independent", "excess_mean"] < 0.03, (dataset, sensitive)
    mia = pd.read_csv(tmp_path / "results/tables/mia.csv")
    true = mia[mia["attack"] == "kde_true"].set_index(["dataset", "generator"])["auc_mean"]
    for dataset in ("adult", "simulation"):
        assert true[(dataset, "identity")] > 0.97  # Adult has duplicate records, hence not exactly 1
        assert abs(true[(dataset, "independent")] - 0.5) < 0.04
    assert (tmp_path / "results/tables/rapid_simulation.csv").exists()
    # DP synthetic data: attribute inference stays below releasing the members (RAPID also counts
    # the population-level inference that the two-way marginals carry at any epsilon, so it need
    # not fall with epsilon); no membership signal.
    for (dataset, sensitive), rows in rapid_max.groupby(["dataset", "sensitive"]):
        by = rows.set_index("generator")["excess_mean"]
        assert max(by["mst_eps1"], by["mst_eps10"]) < by["identity"], (dataset, sensitive)
    for dataset in ("adult", "simulation"):
        for generator in ("mst_eps1", "mst_eps10"):
            assert abs(true[(dataset, generator)] - 0.5) < 0.04, (dataset, generator)
    coverage = pd.read_csv(tmp_path / "results/tables/dp_coverage.csv")
    calibrated = coverage[(coverage["interval"] == "plugin_wald") & (coverage["epsilon"] >= 0.5)]
    assert calibrated["coverage"].between(0.9, 1.0).all()
    naive = coverage[(coverage["interval"] == "naive") & (coverage["epsilon"] <= 0.5)]
    assert (naive["coverage"] < 0.5).all()
    # The report: one summary row per dataset x generator, utility ordered as the generators' design says.
    summary = pd.read_csv(tmp_path / "results/tables/summary.csv")
    assert len(summary) == 2 * 9 and summary["status"].eq("ok").all()
    private = summary[summary["generator"].str.startswith("mst")]
    # config/config.yaml sets MST's noise seeds (reproducible tables), so its releases say they are not private
    assert private["dp_guarantee"].eq("not private: noise seed is known").all()
    assert summary["dp_guarantee"].notna().sum() == 4
    for dataset, rows in summary.groupby("dataset"):
        by = rows.set_index("generator")
        assert by["quality"].idxmax() == "identity", dataset
        assert by.loc["independent", "efficacy_ratio"] < by.loc["cart", "efficacy_ratio"], dataset
        assert by.loc["independent", "quality"] < by.loc["cart", "quality"], dataset
    # One verdict per risk: identity is at risk of membership; leaky's 10% member copies are named
    # (per-person evidence, in every seed), so it is at risk too; independent is not at risk.
    risk = pd.read_csv(tmp_path / "results/tables/risk.csv").set_index(["dataset", "generator", "risk"])["verdict"]
    for dataset in ("adult", "simulation"):
        assert risk[(dataset, "identity", "membership")].startswith("at risk"), dataset
        assert risk[(dataset, "leaky", "membership")].startswith("at risk"), dataset
        assert not risk[(dataset, "independent", "membership")].startswith("at risk"), dataset
        assert risk[(dataset, "identity", "linkability")].startswith("at risk"), dataset
    evidence = pd.read_csv(tmp_path / "results/tables/dcr.csv").set_index(["dataset", "generator"])
    assert (evidence.xs("identity", level="generator")["share_mean"] > 0.95).all()
    assert (tmp_path / "results/report/index.html").stat().st_size > 100_000
