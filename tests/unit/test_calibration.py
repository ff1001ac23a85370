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


def test_a_refused_split_counts_neither_as_a_false_positive_nor_as_a_miss():
    """A split whose files the audit's record checks refuse has no verdict: `rates` leaves it out
    (and `study` keeps it as one row saying why)."""
    import pandas as pd

    from synthrisk.calibration import REFUSED

    row = {"dataset": "adult", "n": 1000, "risk": "membership", "attack": "(risk verdict)", "material": 0}
    runs = pd.DataFrame([{**row, "split": 0, "release": "population", "verdict": 1},
                         {**row, "split": 1, "release": "population", "verdict": 0},
                         {**row, "split": 2, "release": REFUSED, "risk": "", "attack": "holdout.parquet: 26 of 1000 "
                          "holdout records are copies", "verdict": float("nan"), "material": float("nan")}])
    table = rates(runs)
    assert list(table["release"]) == ["population"]
    assert table.iloc[0][["splits", "rate"]].tolist() == [2, 0.5]
