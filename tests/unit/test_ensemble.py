"""The ensemble membership attack (synthrisk.mia.ensemble, the `ensemble` measure): its signals by
hand, its two ways of training (refits of the generator in hand; a half of the records), its level
under the null simulated as it is used, and copies found."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import small_records, small_schema

import synthrisk
from synthrisk.errors import ConfigError
from synthrisk.mia.ensemble import SIGNALS, signals
from synthrisk.mia.gower import GowerSpace


@pytest.fixture(scope="module")
def schema():
    return small_schema()




def test_signals_by_hand(schema):
    real = schema.conform(pd.DataFrame({"x": [0.0, 5.0, 10.0], "k": [0, 2, 4], "c": ["a", "b", "c"]}))
    release = schema.conform(pd.DataFrame({"x": [0.0, 1.0], "k": [0, 0], "c": ["a", "a"]}))
    space = GowerSpace.fit(real, schema)
    got = signals(real.iloc[[0]], release, real, space)
    assert list(got.columns) == SIGNALS
    row = got.iloc[0]
    # the first record is copied (DCR 0); the next synthetic record differs in x by 1 of 10: 0.1 / 3
    assert row["dcr"] == 0 and row["nndr"] == 0
    assert row["synthetic_within_0"] == 1 and row["synthetic_within_0.05"] == 2
    # its nearest other real record differs in every column: x 0.5, k 0.5, c 1 -> 2 / 3
    assert row["nearest_real"] == pytest.approx(2 / 3)


def test_copies_are_found_in_both_modes(schema):
    members, holdout = small_records(schema, 300, 1), small_records(schema, 300, 2, 1000)
    shadow = synthrisk.measure("ensemble", members, members, holdout, schema=schema, generator="identity",
                               refits=4, per_refit=100)
    split = synthrisk.measure("ensemble", members, members, holdout, schema=schema, mode="split")
    assert shadow.value > 0.95 and shadow.p_value < 1e-6 and shadow.details["n_identified"] > 100
    assert shadow.details["mode"] == "shadow" and shadow.details["trained_on"] == 4 * 200
    assert split.value > 0.95 and split.details["n_members"] + split.details["n_calibration"] == 300


@pytest.mark.slow  # a null study of refitting releases: `make test-all` and CI run it
def test_releases_that_never_saw_the_members_hold_the_level(schema):
    """20 releases of other records, read in both modes: each test at 0.05 fires in a share its level
    allows (binomial 99.9 % bound: 5 of 20); anyone named at most as often."""
    fired = {"shadow": 0, "split": 0}
    named = 0
    for replicate in range(20):
        members, holdout = small_records(schema, 150, 100 + replicate), small_records(schema, 150, 200 + replicate, 1000)
        unseen = small_records(schema, 150, 300 + replicate, 5000).drop(columns="row_id")
        for mode, extra in (("shadow", {"generator": "identity", "refits": 3, "per_refit": 100}), ("split", {})):
            found = synthrisk.measure("ensemble", members, unseen, holdout, schema=schema, mode=mode, seed=replicate,
                                      **extra)
            fired[mode] += found.p_value <= 0.05
            named += found.details["n_identified"] > 0
    assert max(fired.values()) <= 5 and named <= 5, (fired, named)


def test_the_shadow_mode_needs_the_generator(schema):
    members, holdout = small_records(schema, 50, 1), small_records(schema, 50, 2, 1000)
    with pytest.raises(ConfigError, match="needs the generator in hand"):
        synthrisk.measure("ensemble", members, members, holdout, schema=schema)
    with pytest.raises(ConfigError, match="ensemble.mode: .both. is not one of"):
        synthrisk.measure("ensemble", members, members, holdout, schema=schema, mode="both")
