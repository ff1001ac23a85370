"""Per-target shadow-model membership inference through Snakemake (slow): the stage writes its
tables and figures, counts failed fits, and reruns only what a change needs (the attack itself:
tests/unit/test_shadow_mia.py)."""

import re

import pandas as pd
import pytest
import yaml
from helpers import snakemake, tiny_config

from synthrisk.shadow_mia.targets import OUTLIER, RANDOM


@pytest.mark.slow
def test_workflow_shadow_stage_writes_the_tables_and_figures(tmp_path):
    generators = {"identity": {"backend": "identity"}, "broken": {"backend": "sdv", "model": "NoSuchSynthesizer"}}
    config = tiny_config(tmp_path, generators=generators, shadow_mia={
        "dataset": "adult", "generators": ["identity", "broken"], "columns": ["age", "workclass", "race"],
        "n_outliers": 2, "n_random": 2, "n_shadow_records": 60, "shadow_datasets": 8, "eval_datasets": 6,
        "block": 4, "n_trees": 20})
    snakemake(tmp_path, config, "results/tables/shadow_mia.csv")
    per_target = pd.read_csv(tmp_path / "results/tables/shadow_mia_targets.csv")
    generators_table = pd.read_csv(tmp_path / "results/tables/shadow_mia.csv").set_index("generator")
    assert len(per_target) == 2 * 4 and set(per_target["kind"]) == {OUTLIER, RANDOM}
    assert generators_table.loc["broken", "fits_failed"] == 14 and generators_table.loc["identity", "fits_ok"] == 14
    assert per_target[per_target["generator"] == "identity"]["auc"].notna().all()
    # ids, never values: no column of the dataset reaches the tables
    assert not {"age", "workclass", "race"} & set(per_target.columns)
    for figure in ("shadow_mia_auc", "shadow_mia_vulnerable"):
        assert (tmp_path / f"results/figures/{figure}.png").stat().st_size > 0
    blocks = sorted((tmp_path / "results/shadow_mia").rglob("block*.parquet"))
    assert len(blocks) == 2 * (2 + 2)  # generators x (train blocks + eval blocks)
    # another generator listed and other attack settings: only its blocks and the tables are planned
    again = tiny_config(tmp_path, generators={**generators, "independent": {"backend": "independent"}}, shadow_mia={
        **yaml.safe_load(config.read_text())["shadow_mia"], "generators": ["identity", "broken", "independent"],
        "n_trees": 30, "confidence": 0.9})
    planned = snakemake(tmp_path, again, "results/tables/shadow_mia.csv", "-n", "--quiet", "rules").stdout
    assert re.search(r"^shadow_mia_block\s+4$", planned, re.M) and "total 5" in " ".join(planned.split()), planned


@pytest.mark.slow
def test_the_workflow_refits_each_generator_for_the_measures_that_need_it(tmp_path):
    """A config naming the refitting measures: each measure job is handed the generator that made its
    synthetic data; MAMA-MIA runs on the MST release and is skipped, with the reason, for cart."""
    generators = {"cart": {"backend": "cart"},
                  "mst_eps10": {"backend": "mst", "params": {"epsilon": 10.0, "noise_seed": 3}}}
    config = tiny_config(tmp_path, generators=generators, mama_mia={}, ensemble={"refits": 3, "per_refit": 100},
                         shadow_models={"shadow_datasets": 8, "eval_datasets": 8, "n_outliers": 10, "n_random": 10})
    snakemake(tmp_path, config, "results/tables/mama_mia.csv", "results/tables/ensemble.csv",
              "results/tables/shadow_models.csv")
    tables = {name: pd.read_csv(tmp_path / f"results/tables/{name}.csv").set_index("generator")
              for name in ("mama_mia", "ensemble", "shadow_models")}
    assert tables["mama_mia"].loc["mst_eps10", "status"] == "ok"
    assert tables["mama_mia"].loc["cart", "status"].startswith("skipped: needs the generator in hand, and that "
                                                               "generator MST")
    for name in ("ensemble", "shadow_models"):
        assert (tables[name]["status"] == "ok").all(), tables[name]["status"]
        assert tables[name]["auc_mean"].between(0, 1).all()
