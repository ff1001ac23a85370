import json

import numpy as np
import pandas as pd
import pytest

from synthrisk.data import split_real
from synthrisk.dcr import dcr, two_nearest
from synthrisk.errors import DataError, SchemaError
from synthrisk.generators import make_generator
from synthrisk.mia import GowerSpace, gower_matrix, nearest_synthetic


def brute_two_nearest(query, reference, space):
    """Every pair's Gower sum in the kernel's order of additions (categorical mismatches, then the
    numeric terms column by column), then the first two of a stable sort: ties by lowest index."""
    q_num, q_cat = space.encode(query)
    r_num, r_cat = space.encode(reference)
    total = (q_cat[:, None, :] != r_cat[None, :, :]).sum(axis=2).astype(float)
    for k in range(q_num.shape[1]):
        a, b = q_num[:, k][:, None], r_num[:, k][None, :]
        one = np.isnan(a) ^ np.isnan(b)
        both = np.isnan(a) & np.isnan(b)
        total = total + np.where(both, 0.0, np.where(one, 1.0, np.minimum(np.abs(a - b), 1.0)))
    order = np.array([np.lexsort((np.arange(len(row)), row))[:2] for row in total])
    rows = np.arange(len(total))[:, None]
    return total[rows, order] / space.n_columns, order


@pytest.fixture(scope="module")
def adult_parts(adult):
    return split_real(adult, 2000, 2000, 0, seed=3)


def synthetic(parts, schema, backend, n=2000, seed=0):
    train = parts["train"].drop(columns="row_id")
    return make_generator({"backend": backend}, seed=seed).fit(train, schema).sample(n, seed)


@pytest.mark.parametrize("data", ["adult", "mixed"])
def test_two_nearest_is_exact_with_ties(data, adult, adult_schema, mixed, mixed_schema):
    frame, schema = (adult.iloc[:900], adult_schema) if data == "adult" else (mixed, mixed_schema)
    query, reference = frame.iloc[:300].reset_index(drop=True), frame.iloc[300:].reset_index(drop=True)
    space = GowerSpace.fit(frame, schema)
    d1, i1, d2, i2 = two_nearest(query, reference, space, block_size=37)
    distance, order = brute_two_nearest(query, reference, space)
    ties = np.sum(distance[:, 0] == distance[:, 1])
    assert ties >= 5, "the data must have tied neighbours for the tie rule to be tested"
    np.testing.assert_array_equal(i1, order[:, 0])
    np.testing.assert_array_equal(i2, order[:, 1])
    np.testing.assert_array_equal(d1, distance[:, 0])
    np.testing.assert_array_equal(d2, distance[:, 1])
    # and against the project's other engines: full matrix, 1-NN search
    matrix = gower_matrix(query, reference, space)
    np.testing.assert_allclose(d2, np.sort(matrix, axis=1)[:, 1], atol=1e-12)
    near_d, near_i = nearest_synthetic(query, reference, space)
    np.testing.assert_array_equal(near_i, i1)
    np.testing.assert_array_equal(near_d, d1)


def test_two_nearest_with_one_reference(mixed, mixed_schema):
    space = GowerSpace.fit(mixed, mixed_schema)
    _, i1, d2, i2 = two_nearest(mixed.iloc[:5], mixed.iloc[5:6], space)
    assert np.all(i1 == 0) and np.all(i2 == -1) and np.all(np.isinf(d2))


def test_identity_copies_are_closer_to_members(adult_parts, adult_schema):
    syn = synthetic(adult_parts, adult_schema, "identity")
    result = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema)
    out = result.to_json()
    assert out["exact_copies_member"] == len(syn) == out["n_synthetic"]
    assert out["exact_copies_holdout"] < 0.05 * len(syn)  # Adult's duplicate records only
    assert out["share_closer_to_member"] > 0.97 and out["share_interval"]["low"] > 0.95
    assert out["p_value_one_sided"] < 1e-100
    assert out["dcr_member"]["median"] == 0 and out["dcr_holdout"]["median"] > 0
    # a tie is exactly a copy of a record found in both sets (d_m = 0 = d_h here)
    records = result.records
    assert out["n_ties"] == int(np.sum(records.distance_holdout == 0)) == out["exact_copies_holdout"]
    assert set(records.nearest_member) <= set(adult_parts["train"].row_id)
    assert out["subsampled"] is None and out["n_compared"] == 2000


def test_independent_is_at_one_half(adult_parts, adult_schema):
    syn = synthetic(adult_parts, adult_schema, "independent")
    out = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema).to_json()
    low, high = out["share_interval"]["low"], out["share_interval"]["high"]
    assert low <= 0.5 <= high and high - low < 0.05
    assert abs(out["share_closer_to_member"] - 0.5) < 0.03
    assert out["p_value_one_sided"] > 0.01
    assert abs(out["nndr_privacy_loss"]["value"]) < 4 * out["nndr_privacy_loss"]["se"]


def test_cart_is_between(adult_parts, adult_schema):
    syn = synthetic(adult_parts, adult_schema, "cart")
    out = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema).to_json()
    assert 0.55 < out["share_closer_to_member"] < 0.95 and out["p_value_one_sided"] < 1e-6
    assert out["exact_copies_member"] > out["exact_copies_holdout"]


def test_larger_member_set_is_subsampled_to_stay_fair(adult, adult_schema):
    """With three times as many members as holdout records, comparing against all members puts
    the independent generator's records closer to the members; the equal-size subsample does not."""
    parts = split_real(adult, 6000, 2000, 0, seed=4)
    syn = synthetic(parts, adult_schema, "independent", n=3000)
    result = dcr(parts["train"], parts["holdout"], syn, adult_schema, seed=1)
    out = result.to_json()
    assert out["subsampled"] == "members" and out["n_compared"] == 2000
    assert out["share_interval"]["low"] <= 0.5 <= out["share_interval"]["high"]
    assert result.records.nearest_member.nunique() <= 2000
    real = pd.concat([parts["train"], parts["holdout"]], ignore_index=True).drop(columns="row_id")
    space = GowerSpace.fit(adult_schema.conform(real), adult_schema)
    d_all = nearest_synthetic(syn, adult_schema.conform(parts["train"].drop(columns="row_id")), space)[0]
    naive = np.mean(np.where(d_all < result.records.distance_holdout, 1.0,
                             np.where(d_all > result.records.distance_holdout, 0.0, 0.5)))
    assert naive > out["share_interval"]["high"] + 0.05, naive


def test_exact_copy_flags_match_zero_distances(adult_parts, adult_schema):
    syn = synthetic(adult_parts, adult_schema, "cart")
    records = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema).records
    np.testing.assert_array_equal(records.exact_copy_member, records.distance_member == 0)
    np.testing.assert_array_equal(records.exact_copy_holdout, records.distance_holdout == 0)
    assert records.exact_copy_member.sum() > 0
    assert not any(c in records.columns for c in adult_parts["train"].columns if c != "row_id")  # no raw values


def test_deterministic_and_plain_json(adult, adult_schema):
    parts = split_real(adult, 1500, 1000, 0, seed=5)
    syn = synthetic(parts, adult_schema, "cart", n=1200)
    a = dcr(parts["train"], parts["holdout"], syn, adult_schema, seed=7)
    b = dcr(parts["train"], parts["holdout"], syn, adult_schema, seed=7)
    c = dcr(parts["train"], parts["holdout"], syn, adult_schema, seed=8)
    assert a.to_json() == b.to_json()
    pd.testing.assert_frame_equal(a.records, b.records)
    assert not a.records.nearest_member.equals(c.records.nearest_member)  # another member subsample
    assert json.loads(json.dumps(a.to_json())) == a.to_json()


def test_missing_values(mixed, mixed_schema):
    out = dcr(mixed.iloc[:150], mixed.iloc[150:300], mixed.iloc[300:], mixed_schema).to_json()
    assert 0 <= out["share_closer_to_member"] <= 1 and np.isfinite(out["dcr_member"]["mean"])


def test_bad_inputs(adult_parts, adult_schema):
    m, h = adult_parts["train"].iloc[:50], adult_parts["holdout"].iloc[:50]
    with pytest.raises(DataError, match=r"dcr: holdout has 0 record\(s\)"):
        dcr(m, h.iloc[:0], m, adult_schema)
    with pytest.raises(DataError, match=r"dcr: members has 1 record\(s\).*at least 2"):
        dcr(m.iloc[:1], h, m, adult_schema)
    with pytest.raises(DataError, match="dcr: holdout is None"):
        dcr(m, None, m, adult_schema)
    with pytest.raises(DataError, match="dcr: synthetic has 0 record"):
        dcr(m, h, m.iloc[:0], adult_schema)
    with pytest.raises(SchemaError, match=r"synthetic: column\(s\) \['age'\]"):
        dcr(m, h, m.drop(columns="age"), adult_schema)


def test_synthetic_cap_searches_a_sample_and_counts_copies_over_all(adult_parts, adult_schema):
    """Issue #28: above max_synthetic the searches (share, interval, test, DCR, NNDR) are those of a
    seeded sample of synthetic records, each with the distances it has in the full run; exact copies
    are counted over every synthetic record; at the cap nothing changes."""
    from synthrisk.errors import ConfigError

    syn = synthetic(adult_parts, adult_schema, "cart")
    full = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema, seed=2, max_synthetic=None)
    at_cap = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema, seed=2, max_synthetic=2000)
    assert {**at_cap.to_json(), "max_synthetic": None} == full.to_json() and full.to_json()["subsample_note"] is None
    capped = dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema, seed=2, max_synthetic=500)
    out, records = capped.to_json(), capped.records
    assert out["n_synthetic"] == len(records) == 500 and out["n_synthetic_total"] == 2000 and out["capped"]
    assert "500 of the 2,000 synthetic records" in out["subsample_note"]
    pd.testing.assert_frame_equal(records.reset_index(drop=True),
                                  full.records.iloc[records["synthetic_index"]].reset_index(drop=True))
    assert out["exact_copies_member"] == full.to_json()["exact_copies_member"]  # over all 2,000
    assert out["share_interval"]["high"] - out["share_interval"]["low"] > \
        full.to_json()["share_interval"]["high"] - full.to_json()["share_interval"]["low"]
    with pytest.raises(ConfigError, match="max_synthetic"):
        dcr(adult_parts["train"], adult_parts["holdout"], syn, adult_schema, max_synthetic=0)
