import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import ROOT

from synthrisk.data import load_dataset, load_schema, split_real
from synthrisk.data.schema import DatasetSchema
from synthrisk.data.simulate import simulate
from synthrisk.errors import ConfigError, SchemaError


def schema_dict(**overrides):
    base = {
        "name": "toy", "source": {"path": "toy.csv"},
        "columns": {"a": {"type": "integer"}, "b": {"type": "categorical"}, "y": {"type": "categorical"}},
        "quasi_identifiers": ["a", "b"], "sensitive": ["y"],
    }
    base.update(overrides)
    return base


def test_adult_matches_the_paper_setup(adult, adult_schema):
    # adult.data (the paper's 32,561 rows) followed by adult.test (16,281 rows)
    assert adult.shape == (48842, 13)
    assert "fnlwgt" not in adult and "education" not in adult
    assert (adult["workclass"].iloc[:32561] == "?").sum() == 1836  # "?" kept as a level, not missing
    assert adult.isna().sum().sum() == 0
    assert set(adult["income"]) == {"<=50K", ">50K"}
    assert str(adult["age"].dtype) == "Int64"
    assert len(adult_schema.quasi_identifiers) == 12


def test_adult_test_file_shares_levels():
    from synthrisk.data.adult import load_adult

    test = load_adult("test")
    assert len(test) == 16281
    assert set(test["income"]) == {"<=50K", ">50K"}
    assert len(load_adult("both")) == 32561 + 16281


def test_simulator_is_deterministic_and_controls_dependence():
    a, b = simulate(3000, 0.9, seed=3), simulate(3000, 0.9, seed=3)
    pd.testing.assert_frame_equal(a, b)
    strong = np.corrcoef(simulate(5000, 0.9, seed=1)[["x1", "y_cont"]].T.to_numpy())[0, 1]
    none = np.corrcoef(simulate(5000, 0.0, seed=1)[["x1", "y_cont"]].T.to_numpy())[0, 1]
    assert strong > 0.4 and abs(none) < 0.05
    assert set(a["y_cat"]) == {"low", "mid", "high"}


def test_user_csv_with_schema_keeps_missing(tmp_path):
    (tmp_path / "toy.csv").write_text("a,b,y\n1,x,p\n2,,q\n,z,p\n")
    raw = schema_dict(source={"path": str(tmp_path / "toy.csv")})
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump(raw))
    frame = load_dataset(load_schema(tmp_path / "toy.yaml"))
    assert len(frame) == 3
    assert frame["a"].isna().sum() == 1 and frame["b"].isna().sum() == 1


@pytest.mark.parametrize("overrides, message", [
    ({"colums": {}}, "colums"),
    ({"columns": {"a": {"type": "string"}, "b": {"type": "categorical"}, "y": {"type": "categorical"}}}, "columns/a/type"),
    ({"sensitive": ["a"]}, "both quasi-identifier and sensitive"),
    ({"sensitive": ["zzz"]}, "zzz"),
    ({"columns": {"a": {"type": "integer", "levels": [1, 2]}, "b": {"type": "categorical"},
                  "y": {"type": "categorical"}}}, "column 'a' is integer; 'levels' belong to categorical"),
    ({"columns": {"a": {"type": "integer"}, "b": {"type": "categorical", "bounds": [0, 1]},
                  "y": {"type": "categorical"}}}, "column 'b' is categorical; 'bounds' belong to numeric"),
    ({"columns": {"a": {"type": "integer", "bounds": [5, 1]}, "b": {"type": "categorical"},
                  "y": {"type": "categorical"}}}, "column 'a': 'bounds' must be finite with low < high"),
])
def test_bad_schema_is_named(overrides, message):
    with pytest.raises(SchemaError, match=message):
        DatasetSchema.from_dict(schema_dict(**overrides), origin="toy.yaml")


def test_declared_levels_are_public_domain_and_enforced_where_data_enter():
    raw = schema_dict(columns={"a": {"type": "integer", "bounds": [0, 10]},
                               "b": {"type": "categorical", "levels": ["x", "z"]}, "y": {"type": "categorical"}})
    schema = DatasetSchema.from_dict(raw, origin="toy.yaml")
    assert schema.public_levels("b") == ["x", "z"] and schema.public_bounds("a") == (0.0, 10.0)
    assert DatasetSchema.from_dict(schema.to_dict()).levels == schema.levels  # round trip
    schema.conform(pd.DataFrame({"a": [1, 99], "b": ["x", None], "y": ["p", "q"]}))  # bounds clip in DP code
    with pytest.raises(SchemaError, match=r"column 'b' holds 1 value\(s\) outside its declared levels.*'w'"):
        schema.conform(pd.DataFrame({"a": [1, 2], "b": ["x", "w"], "y": ["p", "q"]}))
    with pytest.raises(SchemaError, match="column 'y' has no public 'levels'"):
        schema.public_levels("y")


def test_schema_and_data_columns_must_agree():
    schema = DatasetSchema.from_dict(schema_dict(), origin="toy.yaml")
    with pytest.raises(SchemaError, match=r"\['y'\].*missing from the data"):
        schema.conform(pd.DataFrame({"a": [1], "b": ["x"]}))
    with pytest.raises(SchemaError, match=r"\['extra'\] are not in schema toy.yaml"):
        schema.conform(pd.DataFrame({"a": [1], "b": ["x"], "y": ["p"], "extra": [0]}))
    with pytest.raises(SchemaError, match="column 'a' is declared integer but holds non-numeric"):
        schema.conform(pd.DataFrame({"a": ["one"], "b": ["x"], "y": ["p"]}))


def test_single_level_categorical_is_rejected():
    schema = DatasetSchema.from_dict(schema_dict(), origin="toy.yaml")
    frame = schema.conform(pd.DataFrame({"a": [1, 2], "b": ["x", "x"], "y": ["p", "q"]}))
    with pytest.raises(SchemaError, match="categorical column 'b' has a single level"):
        schema.check_levels(frame)


def test_split_sizes_disjoint_and_deterministic(adult):
    parts = split_real(adult, 1000, 500, 300, seed=4)
    assert [len(parts[k]) for k in ("train", "holdout", "aux")] == [1000, 500, 300]
    ids = [set(parts[k]["row_id"]) for k in ("train", "holdout", "aux")]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    again = split_real(adult, 1000, 500, 300, seed=4)
    pd.testing.assert_frame_equal(parts["train"], again["train"])
    row = parts["train"].iloc[0]
    assert adult.iloc[row["row_id"]]["age"] == row["age"]


def test_stratified_split_keeps_shares(adult):
    parts = split_real(adult, 2000, 1000, 0, seed=0, stratify="income")
    share = (adult["income"] == ">50K").mean()
    assert abs((parts["train"]["income"] == ">50K").mean() - share) < 0.002


def test_split_larger_than_data_names_the_dataset(adult):
    with pytest.raises(ConfigError, match="datasets.adult: n_train \\+ n_holdout \\+ n_aux = 50000 exceeds"):
        split_real(adult, 40000, 5000, 5000, seed=0, dataset="adult")


def test_leading_members_are_the_first_rows_in_every_seed(adult):
    first = split_real(adult, 1000, 200, 100, seed=0, members="leading")
    second = split_real(adult, 1000, 200, 100, seed=1, members="leading")
    assert list(first["train"]["row_id"]) == list(range(1000))
    assert first["train"].equals(second["train"])
    assert first["holdout"]["row_id"].min() >= 1000
    assert set(first["holdout"]["row_id"]) != set(second["holdout"]["row_id"])
    with pytest.raises(ConfigError, match="datasets.adult.members"):
        split_real(adult, 10, 10, 0, seed=0, members="first", dataset="adult")


def test_the_builtin_schemas_ship_with_the_package_and_are_the_workflows():
    """config/datasets/{adult,simulation}.yaml are links to the package's files: one statement each."""
    from synthrisk.data import load_schema
    from synthrisk.data.loaders import builtin_schema
    from synthrisk.errors import SchemaError

    for name in ("adult", "simulation"):
        assert builtin_schema(name).to_dict() == load_schema(ROOT / "config" / "datasets" / f"{name}.yaml").to_dict()
        assert (ROOT / "config" / "datasets" / f"{name}.yaml").resolve() == \
            (ROOT / "synthrisk" / "data" / "builtin" / f"{name}.yaml").resolve()
    with pytest.raises(SchemaError, match="no built-in dataset 'census'"):
        builtin_schema("census")
