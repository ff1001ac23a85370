import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthrisk.data import load_dataset
from synthrisk.data.schema import DatasetSchema
from synthrisk.data.simulate import simulate
from synthrisk.errors import ConfigError, DataError
from synthrisk.generators import make_generator
from synthrisk.rapid import rapid
from synthrisk.rapid.scores import at_risk, categorical_scores, class_shares, continuous_errors


def test_marginal_gain_by_hand_with_strict_threshold():
    g = np.array([0.9, 0.58, 0.5, 0.2])
    b = np.array([0.4, 0.4, 0.5, 0.2])
    r = categorical_scores(g, b, "rcs_marginal")
    np.testing.assert_allclose(r, [(0.9 - 0.4) / 0.6, 0.3, 0.0, 0.0])
    assert at_risk(r, 0.3, True).tolist() == [True, False, False, False]  # r == tau is not at risk


def test_gain_near_b_equal_one_and_single_class_guard():
    r = categorical_scores(np.array([0.9995, 0.99]), np.array([0.999, 0.999]))
    np.testing.assert_allclose(r, [0.5, -9.0])
    with pytest.raises(DataError, match="'y' has a single level"):
        class_shares(np.array(["a", "a"]), "y")


def test_other_categorical_scores_by_hand():
    proba = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    true_index = np.array([0, 1])
    g = proba[[0, 1], true_index]
    b = np.array([0.5, 0.25])
    np.testing.assert_allclose(categorical_scores(g, b, "rcs_conditional", proba, true_index), [1.0, 0.2 / 0.6 - 1])
    np.testing.assert_allclose(categorical_scores(g, b, "nce"), [1 - np.log(0.6) / np.log(0.5), 1 - np.log(0.2) / np.log(0.25)])


def test_continuous_errors_by_hand():
    y, yhat = np.array([10.0, 0.0]), np.array([11.0, 0.5])
    np.testing.assert_allclose(continuous_errors(y, yhat, "relative", 0.01), [1 / 10.01, 0.5 / 0.01])
    np.testing.assert_allclose(continuous_errors(y, yhat, "symmetric", 0.01), [2 / 21.02, 1 / 0.52])
    np.testing.assert_allclose(continuous_errors(y, yhat, "absolute"), [1.0, 0.5])
    assert at_risk(np.array([0.1, 0.09]), 0.1, False).tolist() == [False, True]


@pytest.fixture(scope="module")
def strong(sim_schema):
    real = sim_schema.conform(simulate(1500, strength=0.9, seed=5))
    synthetic = {name: make_generator({"backend": name}, seed=1).fit(real, sim_schema).sample(1500, 1)
                 for name in ("identity", "cart", "independent")}
    return real, synthetic


def test_identity_above_cart_above_independent(strong, sim_schema):
    real, synthetic = strong
    for sensitive, attacker in (("y_cat", "rf"), ("y_cont", "rf"), ("y_cat", "logit")):
        risk = {name: rapid(real, syn, sim_schema, sensitive, attacker=attacker, n_trees=60,
                            n_permutations=19, attribution=False).rapid
                for name, syn in synthetic.items()}
        assert risk["identity"] >= risk["cart"] >= risk["independent"], (sensitive, attacker, risk)


def test_curves_are_monotone_and_results_deterministic(strong, sim_schema):
    real, synthetic = strong
    cat = rapid(real, synthetic["cart"], sim_schema, "y_cat", n_trees=40, n_permutations=19, seed=3)
    assert np.all(np.diff(cat.curve["rapid"]) <= 0)
    assert cat.curve.loc[cat.curve["threshold"] == 0.3, "rapid"].item() == cat.rapid
    cont = rapid(real, synthetic["cart"], sim_schema, "y_cont", n_trees=40, n_permutations=19, seed=3)
    assert np.all(np.diff(cont.curve["rapid"]) >= 0)  # a looser tolerance puts more records at risk
    again = rapid(real, synthetic["cart"], sim_schema, "y_cat", n_trees=40, n_permutations=19, seed=3)
    assert again.to_json() == cat.to_json()
    pd.testing.assert_frame_equal(again.records, cat.records)
    assert cat.ci_low < cat.rapid < cat.ci_high and 0 < cat.p_value <= 1
    assert set(cat.records.columns) == {"row_id", "score", "at_risk"}
    assert {"quasi_identifier", "group", "n", "n_at_risk", "rapid", "eta2"} <= set(cat.attribution.columns)


def test_unseen_categories_and_all_missing_quasi_identifiers(mixed, mixed_schema):
    synthetic = mixed[mixed["cat"] != "c"].reset_index(drop=True)  # level "c" never seen by the attacker
    real = mixed.copy()
    real.loc[0, ["num", "cnt", "cat"]] = [np.nan, pd.NA, None]
    for attacker in ("rf", "gbm", "logit", "cart"):
        result = rapid(real, synthetic, mixed_schema, "target", attacker=attacker, n_trees=20, n_permutations=0)
        assert 0 <= result.rapid <= 1 and len(result.records) == len(real)


def test_bad_inputs_are_named(mixed, mixed_schema):
    with pytest.raises(ConfigError, match="'num' is a quasi-identifier"):
        rapid(mixed, mixed, mixed_schema, "num")
    with pytest.raises(ConfigError, match="'nope' is not a column"):
        rapid(mixed, mixed, mixed_schema, "nope")
    with pytest.raises(ConfigError, match="attacker 'svm' does not exist"):
        rapid(mixed, mixed, mixed_schema, "target", attacker="svm")
    with pytest.raises(ConfigError, match="tau must be in"):
        rapid(mixed, mixed, mixed_schema, "target", tau=1.5)
    with pytest.raises(ConfigError, match="epsilon must be > 0"):
        rapid(mixed, mixed, mixed_schema, "target", epsilon=0)
    with pytest.raises(DataError, match=r"only in real \['cnt'\]"):
        rapid(mixed, mixed.drop(columns="cnt"), mixed_schema, "target")
    with pytest.raises(DataError, match="single level"):
        rapid(mixed.assign(target="yes"), mixed, mixed_schema, "target", attacker="logit")


def test_cli_prints_the_design_json(tmp_path, adult):
    real, synthetic = adult.iloc[:400], adult.iloc[400:800]
    real.to_parquet(tmp_path / "real.parquet")
    synthetic.to_csv(tmp_path / "syn.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "synthrisk.cli", "rapid", "--real", str(tmp_path / "real.parquet"),
                           "--synthetic", str(tmp_path / "syn.csv"), "--schema", "config/datasets/adult.yaml",
                           "--sensitive", "income", "--n-trees", "20", "--permutations", "9", "--json"],
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert {"rapid", "n_records", "n_at_risk", "tau", "attacker", "sensitive", "curve"} <= set(out)
    assert out["n_records"] == 400 and out["tau"] == 0.3 and len(out["curve"]) == 21
    assert set(out["curve"][0]) == {"tau", "rapid"}
