"""Real Snakemake runs of a tiny config, as a user would start them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--cores", "2"]


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
    config["rapid"] = {"attackers": ["logit", "linear"], "n_trees": 10, "permutations": 9}
    config["mia"] = {"thresholds": [0.01, 0.05, 0.1]}
    config["dp"] = {"families": ["gaussian", "logistic"], "epsilons": [0.5, 2.0], "reps": 20, "n": 500,
                    "n_grid": [500, 2000], "clip_multipliers": [0.5, 1.0], "noise_aware_reps": 5,
                    "bootstrap_reps": 3, "bootstrap_draws": 20, "census": {"n": 500, "reps": 20}}
    config.update(extra)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake(tmp_path, config, *args, check=True):
    done = subprocess.run(SNAKEMAKE + ["--directory", str(tmp_path), "--configfile", str(config), *args],
                          capture_output=True, text=True, cwd=ROOT)
    if check and done.returncode != 0:
        raise AssertionError(done.stdout[-3000:] + done.stderr[-3000:])
    return done


def test_tiny_run_isolates_a_failing_generator_and_is_incremental(tmp_path):
    config = tiny_config(tmp_path)
    snakemake(tmp_path, config, "--keep-going")
    out = tmp_path / "results/synthetic/adult"
    status = {g: json.loads((out / g / "seed0.json").read_text()) for g in ("cart", "independent", "broken")}
    assert status["cart"]["status"] == "ok" and status["independent"]["status"] == "ok"
    assert status["broken"]["status"] == "failed" and "NoSuchSynthesizer" in status["broken"]["error"]
    assert (tmp_path / "results/logs/generate/adult/cart/seed0.log").exists()

    import pandas as pd

    rapid = pd.read_csv(tmp_path / "results/tables/rapid.csv")
    assert set(rapid["generator"]) == {"cart", "independent", "broken"}
    assert rapid.set_index("generator").loc["broken", "status"] == "failed 1/1"
    assert rapid.set_index("generator").loc["cart", "status"] == "ok"
    mia = pd.read_csv(tmp_path / "results/tables/mia.csv")
    assert set(mia["generator"]) == {"cart", "independent", "broken"}
    assert (mia.loc[mia["generator"] == "broken", "status"] == "failed 1/1").all()
    dp_coverage = pd.read_csv(tmp_path / "results/tables/dp_coverage.csv")
    assert set(dp_coverage["family"]) == {"gaussian", "logistic"}
    assert set(dp_coverage["interval"]) == {"nonprivate", "plugin_wald", "noise_aware_wald", "bootstrap", "naive"}
    for figure in ("rapid_max_adult", "rapid_curves_adult", "mia_roc_adult", "mia_f1_adult",
                   "dp_variance", "dp_coverage", "dp_clipping", "dp_scaling", "dp_census"):
        assert (tmp_path / f"results/figures/{figure}.png").stat().st_size > 1000

    dry = snakemake(tmp_path, config, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr

    (out / "cart/seed0.parquet").unlink()
    dry = snakemake(tmp_path, config, "-n", "--quiet", "rules")
    text = dry.stdout + dry.stderr
    assert "generate" in text and "split" not in text and "load_dataset" not in text


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["datasets"]["adult"].update(n_trian=5), "n_trian"),
    (lambda c: c.update(seed=[1]), "seed"),
    (lambda c: c["generators"].update(x={"model": "y"}), "backend"),
    (lambda c: c["dp"].update(families=["gamma"]), "gamma"),
    (lambda c: c["dp"].update(delta=1.5), "delta"),
])
def test_config_errors_name_the_key(tmp_path, mutate, message):
    config_path = tiny_config(tmp_path)
    config = yaml.safe_load(config_path.read_text())
    mutate(config)
    config_path.write_text(yaml.safe_dump(config))
    done = snakemake(tmp_path, config_path, "-n", check=False)
    assert done.returncode != 0
    assert message in done.stdout + done.stderr
