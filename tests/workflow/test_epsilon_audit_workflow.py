"""The empirical epsilon audit through Snakemake: an isolated generator's fit blocks are planned in
its environment, and (slow) the stage writes its table and figure, reruns only what a change needs,
and flags synthcity's PrivBayes (the audit itself: tests/unit/test_epsilon_audit.py)."""

import re

import pandas as pd
import pytest
import yaml
from helpers import ROOT, snakemake

from synthrisk.epsilon_audit import REPLACE_ONE
from synthrisk.generators.mst import NOT_DP_NOISE


def test_workflow_fits_an_isolated_generators_blocks_in_its_environment(tmp_path):
    config = {"seeds": [0],
              "datasets": {"simulation": {"schema": str(ROOT / "config/datasets/simulation.yaml"),
                                          "n_train": 300, "n_holdout": 200}},
              "generators": {"mst_eps1": {"backend": "mst", "params": {"epsilon": 1.0}}},
              "epsilon_audit": {"generators": ["mst_eps1", "privbayes"], "epsilons": [1.0], "runs": 4, "block": 2,
                                "controls": {"privbayes": {"backend": "synthcity", "plugin": "privbayes"}}}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    done = snakemake(tmp_path, path, "results/tables/epsilon_audit.csv", "-n", "--quiet", "rules")
    planned = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", done.stdout, re.M)}
    assert planned["epsilon_audit_fits"] == 4 and planned["epsilon_audit_fits_isolated"] == 4
    if not (ROOT / ".venv-synthcity/.installed").exists():
        assert planned["generator_env"] == 1


@pytest.mark.slow
def test_audit_flags_synthcity_privbayes_whose_domain_comes_from_the_data(tmp_path):
    """Builds .venv-synthcity (if absent) and audits synthcity's PrivBayes at epsilon 1 with 40 fits per
    world: the canary's extreme values widen the range its synthetic values are drawn in, and that
    shows in every fit with the canary (measured: 100 of 100 with a count > 0, 0 of 100 without)."""
    config = {"seeds": [0],
              "datasets": {"simulation": {"schema": str(ROOT / "config/datasets/simulation.yaml"),
                                          "n_train": 300, "n_holdout": 200}},
              "generators": {"independent": {"backend": "independent"}},
              "epsilon_audit": {"generators": ["privbayes"], "epsilons": [1.0], "runs": 40, "block": 20,
                                "controls": {"privbayes": {"backend": "synthcity", "plugin": "privbayes"}}}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(tmp_path, path, "results/tables/epsilon_audit.csv")
    row = pd.read_csv(tmp_path / "results/tables/epsilon_audit.csv").set_index("generator").loc["privbayes"]
    assert row["guarantee"].startswith("not DP: domain read from the data")
    # 20 evaluation runs per world without an error bound epsilon below by log(0.832 / 0.168) = 1.6
    assert row["flagged"] and row["epsilon_lower"] > 1.0, row.to_dict()
    assert row["mean_without"] == 0 < row["mean_with"]


@pytest.mark.slow
def test_workflow_audit_stage_writes_the_table_and_figure(tmp_path):
    config = {
        "seeds": [0],
        "datasets": {"simulation": {"schema": str(ROOT / "config/datasets/simulation.yaml"),
                                    "n_train": 300, "n_holdout": 200}},
        "generators": {"mst_eps1": {"backend": "mst", "params": {"epsilon": 1.0}}},
        # every job pays ~12 s of Python, JAX and compilation: 4 jobs of 2 fits keep this test near a minute
        "epsilon_audit": {"generators": ["control"], "epsilons": [1.0], "runs": 4, "block": 2,
                          "controls": {"control": {"backend": "mst",
                                                   "params": {"epsilon": 1.0, "noise_multiplier_scale": 0.05}}}},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake(tmp_path, path, "results/tables/epsilon_audit.csv")
    table = pd.read_csv(tmp_path / "results/tables/epsilon_audit.csv")
    # MST is audited by the canary's cells and by MAMA-MIA's statistic, read from the same fits
    assert list(table["generator"]) == ["control", "control"]
    assert list(table["statistic"]) == ["canary cells", "after MAMA-MIA"]
    assert (table["n_runs"] == 4).all() and (table["n_evaluation"] == 2).all()
    assert table["guarantee"].str.startswith(NOT_DP_NOISE).all()
    assert set(table.columns) >= {"nominal_epsilon", "delta", "threshold", "fpr_upper", "fnr_upper", "confidence",
                                  "epsilon_lower", "flagged", "neighbours", "bounds", "family_confidence"}
    assert (table["neighbours"] == REPLACE_ONE).all() and (table["bounds"] == 2).all()
    assert (tmp_path / "results/figures/epsilon_audit.png").stat().st_size > 0
    blocks = sorted((tmp_path / "results/epsilon_audit").rglob("block*.csv"))
    assert len(blocks) == 2 * 2  # worlds x blocks, gathered into one row per statistic
    # each block keeps the canary's count in every marginal: 3 columns, 3 pairs
    assert list(pd.read_csv(blocks[0]).columns) == ["run", "x1", "x2", "x3", "x1&x2", "x1&x3", "x2&x3"]
    # another generator listed and another confidence: only its blocks and the table are planned
    config["epsilon_audit"].update(generators=["control", "mst_eps1"], confidence=0.9)
    path.write_text(yaml.safe_dump(config))
    planned = snakemake(tmp_path, path, "results/tables/epsilon_audit.csv", "-n", "--quiet", "rules").stdout
    assert re.search(r"^epsilon_audit_fits\s+4$", planned, re.M) and "total 5" in " ".join(planned.split()), planned
