"""synthcity generators in their isolated environment, through the workflow."""

import importlib.util
import json
import re

import pandas as pd
import pytest
import yaml
from helpers import ROOT, snakemake, tiny_config

SYNTHCITY = {"bn": {"backend": "synthcity", "plugin": "bayesian_network"},
             "adsgan": {"backend": "synthcity", "plugin": "adsgan", "params": {"n_iter": 20}},
             "nope": {"backend": "synthcity", "plugin": "no_such_plugin"}}


def test_main_environment_never_imports_synthcity():
    assert importlib.util.find_spec("synthcity") is None


def _planned_rules(done) -> dict[str, int]:
    """Rule -> job count from the job-stats table of a dry run."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", done.stdout, re.M)}


def test_synthcity_environment_is_built_only_when_a_generator_needs_it(tmp_path):
    without = _planned_rules(snakemake(tmp_path, tiny_config(tmp_path), "-n", "--quiet", "rules"))
    assert without["generate"] == 3 and "generator_env" not in without and "generate_isolated" not in without
    config = tiny_config(tmp_path, {"cart": {"backend": "cart"}, **SYNTHCITY})
    planned = _planned_rules(snakemake(tmp_path, config, "-n", "--quiet", "rules"))
    assert planned["generate"] == 1 and planned["generate_isolated"] == 3
    if not (ROOT / ".venv-synthcity/.installed").exists():
        assert planned["generator_env"] == 1


PRIVBAYES = {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 10.0, "noise_seed": 3}}


@pytest.mark.slow
def test_synthcity_generators_run_end_to_end(tmp_path):
    """Builds .venv-synthcity from envs/synthcity.txt (if absent) and runs real plugins on Adult; the
    measure job runs MAMA-MIA's PrivBayes network searches in that environment."""
    config = tiny_config(tmp_path, {"cart": {"backend": "cart"}, **SYNTHCITY, "privbayes": PRIVBAYES},
                         mama_mia={"privbayes_runs": 2})
    snakemake(tmp_path, config, "--keep-going")
    attack = json.loads((tmp_path / "results/mama_mia/adult/privbayes/seed0.json").read_text())
    assert attack["status"] == "ok", attack.get("error")
    assert attack["knows"] == "PrivBayes" and attack["runs"] == 2 and 0 <= attack["auc"] <= 1
    # each round's network covers every column once: its child-and-parents sets hold 13 children in all
    assert sum(f["weight"] for f in attack["focal_points"]) == 2 * 13
    assert any(f["kept"] for f in attack["focal_points"])
    # with a noise seed the release repeats, network search included (the job's hash seed is fixed)
    release = tmp_path / "results/synthetic/adult/privbayes/seed0.parquet"
    first = pd.read_parquet(release)
    release.unlink()
    release.with_suffix(".json").unlink()
    snakemake(tmp_path, config, str(release.relative_to(tmp_path)))
    pd.testing.assert_frame_equal(pd.read_parquet(release), first)
    skipped = json.loads((tmp_path / "results/mama_mia/adult/bn/seed0.json").read_text())
    assert skipped["status"] == "skipped" and "MST or synthcity's PrivBayes" in skipped["error"]
    schema = yaml.safe_load((ROOT / "config/datasets/adult.yaml").read_text())
    train = pd.read_parquet(tmp_path / "results/data/adult/seed0/train.parquet")
    for name in ("bn", "adsgan"):
        status = json.loads((tmp_path / f"results/synthetic/adult/{name}/seed0.json").read_text())
        assert status["status"] == "ok", status.get("traceback")
        assert status["versions"]["synthcity"] == "0.2.12" and status["versions"]["torch"].startswith("2.2")
        assert status["fit_seconds"] > 0
        synthetic = pd.read_parquet(tmp_path / f"results/synthetic/adult/{name}/seed0.parquet")
        assert list(synthetic.columns) == list(schema["columns"]) and len(synthetic) == 300
        for column, spec in schema["columns"].items():
            if spec["type"] == "categorical":
                assert set(synthetic[column].dropna()) <= set(train[column].dropna()), (name, column)
            else:
                assert str(synthetic[column].dtype) == "Int64", (name, column)
                assert synthetic[column].between(train[column].min(), train[column].max()).all(), (name, column)
    failed = json.loads((tmp_path / "results/synthetic/adult/nope/seed0.json").read_text())
    assert failed["status"] == "failed" and "no_such_plugin" in failed["error"]
    summary = pd.read_csv(tmp_path / "results/tables/summary.csv").set_index("generator")
    assert summary.loc[["bn", "adsgan"], "status"].eq("ok").all()
    # RAPID_max is empty when no attacker beats chance (so says rapid_verdict); the excess is always set.
    assert summary.loc[["bn", "adsgan"], ["rapid_excess", "rapid_verdict", "mia_auc", "quality"]].notna().all().all()
    assert summary.loc["nope", "status"].startswith("failed")
    log = (tmp_path / "results/logs/generate/adult/adsgan/seed0.stream.log")
    assert log.exists()
