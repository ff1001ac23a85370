"""The positive and negative controls: every membership measure flags a generator that leaks
members verbatim, more strongly the more it leaks, and none flags `independent` (leak 0)."""

import numpy as np
import pandas as pd
import pytest

from synthrisk.generators import make_generator
from synthrisk.measures import MeasureInput, measure

FRACTIONS = (0.0, 0.01, 0.1, 0.5)


def _membership_figures(data: MeasureInput) -> dict[str, tuple[float, bool]]:
    """(value, beats its reference) of each built-in membership measure on one synthetic dataset."""
    out = {}
    mia = measure("mia").run(data, measure("mia").settings({"member_share": 0.5}), None).summary
    from synthrisk.mia.metrics import auc_against_chance

    for name, metrics in (("kde_true", mia), ("distance", mia["baseline"])):
        test = auc_against_chance(metrics["auc"], mia["n_members"], mia["n_non_members"])
        out[name] = (metrics["auc"], test["p_value"] < 0.05)
    dcr = measure("dcr").run(data, measure("dcr").settings({}), None).summary
    out["dcr"] = (dcr["share_closer_to_member"], dcr["p_value_one_sided"] < 0.05)
    domias = measure("domias").run(data, measure("domias").settings({"member_share": 0.5}), None).summary
    out["domias"] = (domias["auc"], domias["auc_test"]["p_value"] < 0.05)
    return out


@pytest.fixture(scope="module")
def by_fraction(adult, adult_schema):
    real = adult_schema.conform(adult).sample(4000, random_state=7).reset_index(drop=True)
    real.insert(0, "row_id", np.arange(len(real)))
    members, non_members, aux = real.iloc[:1000], real.iloc[1000:2000], real.iloc[2000:3000]
    figures = {}
    for fraction in FRACTIONS:
        generator = make_generator({"backend": "leaky", "params": {"fraction": fraction}}, seed=0)
        synthetic = generator.fit(members.drop(columns="row_id"), adult_schema).sample(4000, seed=1)
        data = MeasureInput(members, non_members, aux, synthetic, adult_schema, population_size=len(real), seed=0)
        figures[fraction] = _membership_figures(data)
    return pd.DataFrame({f: {k: v[0] for k, v in row.items()} for f, row in figures.items()}), \
        pd.DataFrame({f: {k: v[1] for k, v in row.items()} for f, row in figures.items()})


def test_every_membership_measure_flags_the_leaky_control_and_not_independent(by_fraction):
    values, flagged = by_fraction
    print(values.round(4).to_string())
    assert not flagged[0.0].any(), flagged[0.0]           # leak 0 is `independent`
    assert flagged[0.1].all() and flagged[0.5].all(), flagged


def test_membership_risk_rises_with_the_leak(by_fraction):
    values, _ = by_fraction
    for name, row in values.iterrows():
        v = row[list(FRACTIONS)].to_numpy(float)
        # monotone up to sampling noise between 0 and 0.01 (40 copies among 4,000 records), strictly
        # from there on
        assert v[1] >= v[0] - 0.02 and v[0] < v[2] < v[3], (name, v)
