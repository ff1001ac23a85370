from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.data import load_dataset, load_schema
from synthrisk.data.schema import DatasetSchema

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def adult_schema():
    return load_schema(ROOT / "config/datasets/adult.yaml")


@pytest.fixture(scope="session")
def adult(adult_schema):
    return load_dataset(adult_schema)


@pytest.fixture(scope="session")
def sim_schema():
    return load_schema(ROOT / "config/datasets/simulation.yaml")


@pytest.fixture(scope="session")
def mixed_schema():
    """A small mixed table with missing values in every kind of column."""
    return DatasetSchema.from_dict({
        "name": "mixed", "source": {"path": "unused.csv"},
        "columns": {"num": {"type": "continuous", "bounds": [-4, 4]}, "cnt": {"type": "integer", "bounds": [0, 8]},
                    "cat": {"type": "categorical", "levels": ["a", "b", "c"]},
                    "target": {"type": "categorical", "levels": ["no", "yes"]}},
        "quasi_identifiers": ["num", "cnt", "cat"], "sensitive": ["target"],
    })


@pytest.fixture(scope="session")
def mixed(mixed_schema):
    rng = np.random.default_rng(7)
    n = 400
    num = rng.normal(size=n)
    frame = pd.DataFrame({
        "num": np.where(rng.random(n) < 0.1, np.nan, num),
        "cnt": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 9, n)), dtype="Int64"),
        "cat": np.where(rng.random(n) < 0.1, None, rng.choice(["a", "b", "c"], n)),
        "target": np.where(num > 0, "yes", "no"),
    })
    return mixed_schema.conform(frame)
