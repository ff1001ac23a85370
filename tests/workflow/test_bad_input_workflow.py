"""Hostile inputs through Snakemake: a schema typo is named when the DAG is built, and (slow) a
sensitive column whose name holds a '-' runs through split, generate and RAPID (the cases without
Snakemake: tests/unit/test_bad_input.py)."""

import json

import pandas as pd
import pytest
import yaml
from helpers import HOSTILE_SCHEMA, ROOT, hostile_frame, snakemake, tiny_config


def test_workflow_names_the_schema_typo(tmp_path):
    """A schema whose `sensitive` names a column missing from `columns` used to stop the workflow
    with KeyError 'incom' from common.smk."""
    raw = yaml.safe_load((ROOT / "config/datasets/adult.yaml").read_text())
    raw["sensitive"] = ["incom"]
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump(raw))
    config = tiny_config(tmp_path)
    data = yaml.safe_load(config.read_text())
    data["datasets"]["adult"]["schema"] = str(tmp_path / "typo.yaml")
    config.write_text(yaml.safe_dump(data))
    done = snakemake(tmp_path, config, "-n", check=False)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "sensitive lists ['incom'] which are not in 'columns'" in output, output[-3000:]
    assert "KeyError" not in output


# 7. a sensitive column named with a '-' works end to end in a real Snakemake run (slow: a whole
# split-generate-measure chain; the fast suite's tiny run covers the rules, this the file names)
@pytest.mark.slow
def test_workflow_keeps_a_sensitive_name_with_a_dash(tmp_path):
    hostile_frame(300, 0).to_csv(tmp_path / "hostile.csv", index=False)
    (tmp_path / "hostile.yaml").write_text(yaml.safe_dump({**HOSTILE_SCHEMA, "source": {"path": str(tmp_path / "hostile.csv")}}))
    config = tiny_config(tmp_path, generators={"identity": {"backend": "identity"}},
                         datasets={"hostile": {"schema": str(tmp_path / "hostile.yaml"), "n_train": 150,
                                               "n_holdout": 100, "n_aux": 50}})
    run = tmp_path / "results/rapid/hostile/identity/seed0"
    # The run's measure job writes every RAPID unit into this directory (a flag first: --configfile
    # takes every word after it).
    snakemake(tmp_path, config, "--keep-going", str(run.relative_to(tmp_path)))
    categorical = json.loads((run / "logit-diag-code.json").read_text())
    assert (categorical["status"], categorical["attacker"], categorical["sensitive"]) == ("ok", "logit", "diag-code")
    assert categorical["rapid"] > 0.5  # identity releases the members: the dependence on age is found
    assert json.loads((run / "linear-score.json").read_text())["sensitive"] == "score"
    assert pd.read_parquet(run / "logit-diag-code.parquet").shape[0] == 150
