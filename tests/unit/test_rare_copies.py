"""The count test of copied rare records (synthrisk.mia.rare_copies), checked as it would be used:
its null simulated (releases that never saw the members, and one that copies the holdout's rare
records), and copies of the rarest members found and listed."""

import numpy as np
import pytest

from synthrisk.errors import DataError
from synthrisk.mia.rare_copies import rare_copies
from synthrisk.study.calibration import Population, rarest


def _split(seed: int, n: int = 300):
    """Schema, members and holdout (with row ids), and two draws of other records."""
    population = Population.of("simulation", 4 * n, seed=seed)
    members = population.take(n).assign(row_id=np.arange(n))
    holdout = population.take(n).assign(row_id=np.arange(n) + 10_000)
    return population.schema, members, holdout, population.take(n), population.take(n)


def test_releases_that_never_saw_the_members_hold_the_level():
    """30 releases of other records and 30 that copy the holdout's rarest 3 %: the test at 0.05
    fires in a share its level allows (99.9 % binomial bound: 6 of 30), the second never (it is
    one-sided: the holdout's copies count against the members)."""
    fired_other, fired_holdout = 0, 0
    for seed in range(30):
        schema, members, holdout, other, _ = _split(seed)
        fired_other += rare_copies(members, other, holdout, schema=schema, seed=seed).p_value <= 0.05
        copied = other.copy()
        rare_holdout = rarest(holdout, members, schema, 0.03)
        copied.iloc[: len(rare_holdout)] = holdout.iloc[rare_holdout][copied.columns].to_numpy()
        result = rare_copies(members, copied, holdout, schema=schema, seed=seed)
        fired_holdout += result.p_value <= 0.05
        assert result.holdout_matches > 0 and result.member_matches == 0
    assert fired_other <= 6 and fired_holdout == 0, (fired_other, fired_holdout)


def test_copies_of_the_rarest_members_are_found_and_listed():
    schema, members, holdout, other, _ = _split(7)
    chosen = rarest(members, holdout, schema, 0.02)  # 6 of 300 members
    release = other.copy()
    release.iloc[: len(chosen)] = members.iloc[chosen][release.columns].to_numpy()
    result = rare_copies(members, release, holdout, schema=schema)
    assert result.p_value < 0.005 and result.member_matches == len(chosen) and result.holdout_matches == 0
    assert sorted(result.matched_members()["row_id"]) == sorted(members["row_id"].iloc[chosen])
    assert result.n_rare == 30 and set(result.to_json()) >= {"p_value", "member_matches", "test"}


def test_the_rare_records_are_chosen_blind_to_who_is_a_member():
    """Swapping the two files leaves the rare set the same records (only their labels change)."""
    schema, members, holdout, other, _ = _split(3)
    one = rare_copies(members, other, holdout, schema=schema).records
    two = rare_copies(holdout, other, members, schema=schema).records
    assert sorted(one["row_id"]) == sorted(two["row_id"])
    assert np.array_equal(np.sort(one["isolation"]), np.sort(two["isolation"]))


def test_bad_input_is_refused():
    schema, members, holdout, other, _ = _split(1, n=50)
    with pytest.raises(DataError, match="share must be in"):
        rare_copies(members, other, holdout, schema=schema, share=0)
    with pytest.raises(DataError, match="needs members and holdout"):
        rare_copies(members, other, holdout.iloc[:0], schema=schema)
