"""synthcity generators in their isolated environment, through the workflow."""

import importlib.util
import json
import re

import numpy as np
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


@pytest.fixture(scope="module")
def synthcity_python(tmp_path_factory):
    """The interpreter of .venv-synthcity, built by the workflow's own rule when it is not."""
    stamp = ROOT / ".venv-synthcity/.installed"
    if not stamp.exists():
        folder = tmp_path_factory.mktemp("environment")
        snakemake(folder, tiny_config(folder, SYNTHCITY), str(stamp))
    return ROOT / ".venv-synthcity/bin/python"


@pytest.mark.slow
def test_mama_mia_finds_the_members_of_a_privbayes_release_and_not_of_a_null(synthcity_python):
    """MAMA-MIA on PrivBayes, positive control and null: synthcity's PrivBayes at ε = 1,000 on a table
    of four columns (960 cells), fitted on 300 members, or on 300 other records; read against 300
    holdout records with 5 network searches."""
    import synthrisk
    from synthrisk.data.schema import DatasetSchema
    from synthrisk.generators.run import fit_in_environment

    schema = DatasetSchema.from_dict({
        "name": "small", "source": {"path": "unused.csv"},
        "columns": {"x": {"type": "integer", "bounds": [0, 15]}, "k": {"type": "integer", "bounds": [0, 4]},
                    "c": {"type": "categorical", "levels": ["a", "b", "c", "d"]},
                    "d": {"type": "categorical", "levels": ["p", "q", "r"]}},
        "quasi_identifiers": ["x", "k"], "sensitive": ["c"]})
    rng = np.random.default_rng(1)
    k = rng.integers(0, 5, 900)
    frame = schema.conform(pd.DataFrame({"x": np.clip(3 * k + rng.integers(0, 4, 900), 0, 15), "k": k,
                                         "c": rng.choice(list("abcd"), 900, p=[0.5, 0.3, 0.15, 0.05]),
                                         "d": rng.choice(list("pqr"), 900)}))
    members, holdout, other = (frame.iloc[i:i + 300].reset_index(drop=True) for i in (0, 300, 600))
    entry = {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 1000.0}}
    read = {}
    for kind, source in (("members", members), ("other", other)):
        release, status = fit_in_environment(synthcity_python, "privbayes",
                                             {**entry, "params": {"epsilon": 1000.0, "noise_seed": 1}}, source,
                                             schema, 300, seed=1, hash_seed=1)
        assert status["status"] == "ok", status.get("error")
        read[kind] = synthrisk.measure("mama_mia", members, release, holdout, schema=schema, generator=entry,
                                       privbayes_runs=5)
    assert read["members"].value > 0.55 and read["members"].p_value < 0.01, read["members"].verdict
    assert read["other"].p_value > 0.01, read["other"].verdict
    assert read["members"].details["knows"] == "PrivBayes"
    # the steward hands over the generator: the shadow models refit it in its environment, every fit served
    # by one process there (synthcity's imports once), and the same refits on a rerun
    shadow = [synthrisk.measure("shadow_models", members, release, holdout, schema=schema, generator=entry,
                                n_outliers=4, n_random=4, shadow_datasets=6, eval_datasets=6, n_trees=20)
              for _ in range(2)]
    assert shadow[0].details["fits"] == 12 and shadow[0].details["fits_failed"] == 0, shadow[0].verdict
    assert shadow[0].value == shadow[1].value and shadow[0].p_value == shadow[1].p_value
