"""Per-person membership evidence (issue #42, `synthrisk.mia.exposure`): conformal p-values of a
label-free exposure score, Benjamini-Hochberg naming members. Checked the way it is used: on
releases that never saw the members it names nobody at about the stated rate; on releases with
member copies it names them, with the false-discovery proportion within the stated rate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.mia.exposure import conformal_p_values, exposure, exposure_scores


def test_conformal_p_values_count_the_calibration_scores_at_least_as_high():
    calibration = np.array([0.1, 0.5, 0.5, 0.9])
    p = conformal_p_values(np.array([1.0, 0.5, 0.0]), calibration)
    np.testing.assert_allclose(p, [1 / 5, 4 / 5, 5 / 5])


def test_a_copied_rare_record_scores_above_a_common_one_with_a_twin(adult, adult_schema):
    """A bare distance of 0 ties every record that has a twin in the release; the exposure score
    tells a copied rare record (nobody else near it) from a common one (a twin among the real records)."""
    sample = adult.sample(400, random_state=1).reset_index(drop=True)
    real = pd.concat([sample, sample.iloc[[0]]], ignore_index=True)  # record 0 has a twin; record 1 not
    release = pd.concat([sample.iloc[[0, 1]], adult.sample(200, random_state=2)], ignore_index=True)
    scores = exposure_scores(real, release, adult_schema)
    assert scores[1] > scores[0] + 3 and scores[0] == pytest.approx(0.0, abs=1e-9)


def _splits(adult, n, reps, seed):
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        index = rng.permutation(len(adult))[:3 * n]
        yield (adult.iloc[index[i * n:(i + 1) * n]].reset_index(drop=True) for i in range(3))


def test_nobody_is_named_in_releases_that_never_saw_the_members(adult, adult_schema):
    named = [exposure(members, source, holdout, schema=adult_schema).n_identified
             for members, holdout, source in _splits(adult, 500, 60, seed=7)]
    # BH (4.5 %) and the rare-copies test (0.25 %) name anyone in at most 4.75 % of null releases: 3 sd
    # above it on 60 replications
    assert np.mean(np.array(named) > 0) <= 0.0475 + 3 * np.sqrt(0.0475 * 0.9525 / 60)


def test_member_copies_are_named_with_the_false_discovery_rate_held(adult, adult_schema):
    fdp, found = [], []
    for members, holdout, source in _splits(adult, 1000, 30, seed=8):
        release = source.copy()
        release.iloc[:100] = members.iloc[:100].to_numpy()  # 10 % member copies
        result = exposure(members, release, holdout, schema=adult_schema)
        named = result.records.index[(result.records["member"] == 1) & result.records["identified"]]
        found.append(len(named) > 0)
        fdp.append(float(np.mean(named >= 100)) if len(named) else 0.0)
    assert np.mean(found) >= 0.9
    assert np.mean(fdp) <= 0.045 + 3 * np.std(fdp) / np.sqrt(len(fdp))
    assert result.min_named == int(np.ceil(1000 / (0.045 * 1001)))


def test_an_identity_release_names_every_member_with_a_score_above_the_holdout(adult, adult_schema):
    members, holdout, _ = next(_splits(adult, 300, 1, seed=9))
    result = exposure(members, members, holdout, schema=adult_schema)
    assert result.auc > 0.95 and result.n_identified > 250
    assert result.records.loc[result.records["member"] == 0, "identified"].sum() == 0


def test_a_handful_of_copied_rare_members_is_named_by_the_count_test(adult, adult_schema):
    """Ten copies of the rarest 1 % of 1,000 members: too few for the conformal p-values (BH names
    nobody below 23), named by the rare-copies test, listed under it with its p-value, and the
    membership verdict is *at risk*."""
    import synthrisk
    from synthrisk.measures.exposure import ATTACK, RARE_ATTACK, Exposure, named_outcomes
    from synthrisk.study.calibration import rarest

    members, holdout, source = next(_splits(adult, 1000, 1, seed=10))
    chosen = rarest(members, holdout, adult_schema, 0.01)
    release = source.copy()
    release.iloc[: len(chosen)] = members.iloc[chosen][release.columns].to_numpy()
    result = exposure(members, release, holdout, schema=adult_schema)
    assert result.n_named_conformal == 0 and result.rare.p_value <= 0.0025
    assert sorted(result.records.index[result.records["rare_named"]]) == sorted(chosen)
    assert result.n_identified == len(chosen) == 10
    without = exposure(members, release, holdout, schema=adult_schema, rare_level=None)
    assert without.n_identified == 0 and "rare_named" not in without.records

    measured = synthrisk.measure("exposure", members, release, holdout, schema=adult_schema)
    assert measured.level == "at risk"
    listed = named_outcomes(measured.records, ATTACK)
    listed = listed[listed["named"]]
    assert set(listed["named_by"]) == {RARE_ATTACK} and listed["hit"].all()
    assert listed["p_value"].tolist() == pytest.approx([result.rare.p_value] * 10)
    # the measurement carries the same outcomes: the ten named members, with the test that named them
    assert sorted(measured.outcomes.loc[measured.outcomes["named"], "row_id"]) == sorted(listed["row_id"])
    # the page's table of the two tests, each beside its reference
    bh, count = Exposure().reported([{**measured.details, "status": "ok", "seed": 0}])["rows"]
    assert bh["members named"] == 0 and bh["reference"] == "names nobody or at least 23"
    assert count["members named"] == 10 and count["level"] == 0.0025 and count["reference"].startswith("0 holdout")
    # a policy's level reaches the test: at alpha 0.001 its level is 5e-5, above this p-value or not
    strict = synthrisk.measure("exposure", members, release, holdout, schema=adult_schema, policy={"alpha": 0.001})
    assert strict.details["rare_level"] == pytest.approx(0.001 * 0.05)


def test_a_holdout_record_copied_never_names_the_member_with_its_row_number(adult, adult_schema):
    """Frames without row ids number members and holdout records from 0 each: the rare copies are
    marked by position, so copied rare holdout records never name the members of the same number."""
    from synthrisk.study.calibration import rarest

    members, holdout, source = next(_splits(adult, 1000, 1, seed=10))
    copied_members = rarest(members, holdout, adult_schema, 0.02)
    copied_holdout = rarest(holdout, members, adult_schema, 0.003)
    release = source.copy()
    release.iloc[: len(copied_members)] = members.iloc[copied_members][release.columns].to_numpy()
    at = slice(len(copied_members), len(copied_members) + len(copied_holdout))
    release.iloc[at] = holdout.iloc[copied_holdout][release.columns].to_numpy()
    result = exposure(members, release, holdout, schema=adult_schema)
    assert result.rare.p_value <= 0.0025 and result.rare.holdout_matches >= 1
    named = result.records.index[result.records["rare_named"]]
    assert set(named) <= set(copied_members) and len(named) >= len(copied_members) - result.n_named_conformal
