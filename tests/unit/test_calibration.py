"""The membership verdict checked the way it is used (issue #26): a small version of
benchmarks/verdict_calibration.py. Releases that never saw the members are rarely called a
membership risk; releases holding member copies are."""

import pytest

from synthrisk.calibration import rates, study


@pytest.mark.slow
def test_membership_verdict_keeps_its_level_on_nulls_and_finds_member_copies():
    runs = study("adult", 1000, 100, ["holdout", "population", "copies_0.1", "leaky"], seed=7,
                 measures=("mia", "dcr"))
    table = rates(runs)
    verdict = table[(table["attack"] == "(risk verdict)") & (table["risk"] == "membership")].set_index("release")
    for null in ("holdout", "population"):
        # nominal 5%: at most 10 of 100 (P(> 10 | 5%) < 0.012)
        assert verdict.loc[null, "rate"] <= 0.10, (null, verdict.loc[null].to_dict())
    for positive in ("copies_0.1", "leaky"):
        assert verdict.loc[positive, "rate"] >= 0.9, (positive, verdict.loc[positive].to_dict())
