"""Utility scores: efficacy against the real-data model, SDMetrics fidelity, the summary's FPR choice."""

import numpy as np
import pandas as pd
import pytest

from synthrisk.errors import SchemaError
from synthrisk.mia.summary import low_fpr_column
from synthrisk.report.summary import dp_epsilon, dp_family
from synthrisk.utility import efficacy, fidelity, utility


@pytest.fixture(scope="module")
def adult_parts(adult):
    rows = adult.sample(4000, random_state=1)
    return rows.iloc[:1500], rows.iloc[1500:3000], rows.iloc[3000:]


def test_real_data_as_synthetic_scores_like_real(adult_parts, adult_schema):
    train, other_real, holdout = adult_parts
    result = utility(train, other_real, holdout, schema=adult_schema)
    auc = result.efficacy.set_index("metric").loc["auc"]
    assert 0.85 < auc["real"] < 0.95  # income from the other Adult columns
    assert abs(auc["ratio"] - 1) < 0.03
    assert result.fidelity["quality"] > 0.9


def test_files_above_the_cap_are_read_through_a_seeded_sample_and_the_result_says_so(adult_parts, adult_schema):
    from synthrisk.errors import DataError

    train, other_real, holdout = adult_parts
    whole = utility(train, other_real, holdout, schema=adult_schema, max_records=None)
    assert whole.subsample_note is None and not whole.to_json()["capped"]
    # at or under the cap nothing changes
    same = utility(train, other_real, holdout, schema=adult_schema, max_records=1500)
    assert same.fidelity == whole.fidelity and same.subsample_note is None
    capped = utility(train, other_real, holdout, schema=adult_schema, max_records=600)
    again = utility(train, other_real, holdout, schema=adult_schema, max_records=600)
    assert capped.fidelity == again.fidelity and capped.fidelity != whole.fidelity
    assert "600 of the 1,500 training records" in capped.subsample_note
    assert "600 of the 1,000 holdout records" in capped.subsample_note and capped.to_json()["capped"]
    # a sample of real records still reads as real: the scores stay near the whole files'
    assert abs(capped.fidelity["quality"] - whole.fidelity["quality"]) < 0.03
    with pytest.raises(DataError, match="max_records must be"):
        utility(train, other_real, holdout, schema=adult_schema, max_records=0)
    # each file's sample is its own: the release's never depends on whether the training file was cut
    from synthrisk.utility.core import _capped

    (_, one, _), _ = _capped((train, other_real, holdout), 600, 0)
    (_, two, _), _ = _capped((train.iloc[:500], other_real, holdout), 600, 0)
    pd.testing.assert_frame_equal(one, two)


def test_destroyed_relations_lose_efficacy_but_keep_column_shapes(adult_parts, adult_schema):
    train, other_real, holdout = adult_parts
    rng = np.random.default_rng(0)
    shuffled = other_real.apply(lambda c: c.sample(frac=1, random_state=rng.integers(1e9)).to_numpy())
    result = utility(train, shuffled, holdout, schema=adult_schema)
    assert result.efficacy_ratio < 0.7
    assert result.fidelity["column_shapes"] > 0.9
    assert result.fidelity["column_pair_trends"] < utility(train, other_real, holdout, schema=adult_schema).fidelity[
        "column_pair_trends"] - 0.05


def test_a_collapsed_target_gives_chance_auc(adult_parts, adult_schema):
    train, other_real, holdout = adult_parts
    collapsed = other_real.assign(income=other_real["income"].iloc[0])
    table = efficacy(train, collapsed, holdout, adult_schema).set_index("metric")
    assert table.loc["auc", "synthetic"] == pytest.approx(0.5)


def test_continuous_target_reports_r2(sim_schema):
    from synthrisk.data import load_dataset

    data = load_dataset(sim_schema).iloc[:1500]
    table = efficacy(data.iloc[:500], data.iloc[500:1000], data.iloc[1000:], sim_schema)
    r2 = table[(table["target"] == "y_cont") & (table["metric"] == "r2")]
    assert len(r2) == 1 and 0.2 < float(r2["real"].iloc[0]) <= 1


def test_missing_column_is_named(adult_parts, adult_schema):
    train, other_real, holdout = adult_parts
    with pytest.raises(SchemaError, match=r"synthetic data: column\(s\) \['age'\] .* missing"):
        utility(train, other_real.drop(columns="age"), holdout, schema=adult_schema)


def test_fidelity_scores_are_in_unit_interval(adult_parts, adult_schema):
    train, other_real, _ = adult_parts
    scores = fidelity(train, other_real, adult_schema)
    assert set(scores) == {"quality", "column_shapes", "column_pair_trends"}
    assert all(0 <= v <= 1 for v in scores.values())


def test_low_fpr_is_the_lowest_the_records_resolve():
    assert low_fpr_column(pd.DataFrame({"fpr_floor": [1 / 1000, 1 / 800]})) == "1e-02"
    assert low_fpr_column(pd.DataFrame({"fpr_floor": [1 / 8000]})) == "1e-03"
    assert low_fpr_column(pd.DataFrame({"fpr_floor": [1 / 50]})) == "1e-01"


def test_dp_generators_are_grouped_by_kind():
    spec = {"backend": "mst", "params": {"epsilon": 3}}
    assert dp_epsilon(spec) == 3.0 and dp_epsilon({"backend": "cart"}) is None
    assert dp_family(spec) == "mst"
    assert dp_family({"backend": "synthcity", "plugin": "dpgan"}) == "synthcity/dpgan"
