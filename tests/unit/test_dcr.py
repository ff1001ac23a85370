import json
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT, synthetic_from

from synthrisk.data import split_real
from synthrisk.dcr import dcr, two_nearest
from synthrisk.dcr.core import TIE_K, nearest_ties, permutation_scores
from synthrisk.errors import ConfigError, DataError, SchemaError
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
    syn = synthetic_from(adult_parts, adult_schema, "identity")
    result = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema)
    out = result.to_json()
    assert out["exact_copies_member"] == len(syn) == out["n_synthetic"]
    assert out["exact_copies_holdout"] < 0.05 * len(syn)  # Adult's duplicate records only
    assert out["share_closer_to_member"] > 0.97 and out["share_interval"]["low"] > 0.95
    # the permutation p-value's floor: no relabelling comes near the observed share
    assert out["p_value_one_sided"] == 1 / (out["permutations"] + 1) and out["p_value_sign_test"] < 1e-100
    assert out["dcr_member"]["median"] == 0 and out["dcr_holdout"]["median"] > 0
    # a tie is exactly a copy of a record found in both sets (d_m = 0 = d_h here)
    records = result.records
    assert out["n_ties"] == int(np.sum(records.distance_holdout == 0)) == out["exact_copies_holdout"]
    assert set(records.nearest_member) <= set(adult_parts["train"].row_id)
    assert out["subsampled"] is None and out["n_compared"] == 2000

    # the page's table: each reading beside its holdout reference
    from synthrisk.measures.dcr import Dcr

    closer, copies, median = Dcr().reported([{**out, "status": "ok", "seed": 0}])["rows"]
    assert closer["p-value"] == out["p_value_one_sided"] and closer["reference"].startswith("50.0%")
    assert copies["release"].startswith(f"{len(syn):,} of {len(syn):,} equal a member (100.0%)")
    assert copies["reference"].startswith(f"{out['exact_copies_holdout']:,} equal a holdout record")
    assert median["release"] == "0.0000 to the members" and "seed" not in median
    assert Dcr().reported([{"status": "failed"}]) is None

def test_independent_is_at_one_half(adult_parts, adult_schema):
    syn = synthetic_from(adult_parts, adult_schema, "independent")
    out = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema).to_json()
    low, high = out["share_interval"]["low"], out["share_interval"]["high"]
    assert low <= 0.5 <= high and high - low < 0.07
    assert abs(out["share_closer_to_member"] - 0.5) < 0.03
    assert out["p_value_one_sided"] > 0.01
    # 2,000 synthetic records share fewer nearest real records: the spread over splits is wider
    # than the binomial one, and the interval carries it
    assert out["nearest_real"]["distinct"] < 0.8 * out["n_synthetic"]
    assert out["null_sd"]["permutation"] > 1.2 * out["null_sd"]["binomial"]
    assert high - low == pytest.approx(2 * 1.959964 * out["null_sd"]["permutation"], rel=1e-5)
    assert abs(out["nndr_privacy_loss"]["value"]) < 4 * out["nndr_privacy_loss"]["se"]


def test_cart_is_between(adult_parts, adult_schema):
    syn = synthetic_from(adult_parts, adult_schema, "cart")
    out = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema).to_json()
    assert 0.55 < out["share_closer_to_member"] < 0.95 and out["p_value_one_sided"] == 1 / 1000
    assert out["p_value_sign_test"] < 1e-6 and out["permutations"] == 999
    assert out["exact_copies_member"] > out["exact_copies_holdout"]


def test_larger_member_set_is_subsampled_to_stay_fair(adult, adult_schema):
    """With three times as many members as holdout records, comparing against all members puts
    the independent generator's records closer to the members; the equal-size subsample does not."""
    parts = split_real(adult, 6000, 2000, 0, seed=4)
    syn = synthetic_from(parts, adult_schema, "independent", n=3000)
    result = dcr(parts["train"], syn, parts["holdout"], schema=adult_schema, seed=1)
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
    syn = synthetic_from(adult_parts, adult_schema, "cart")
    records = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema).records
    np.testing.assert_array_equal(records.exact_copy_member, records.distance_member == 0)
    np.testing.assert_array_equal(records.exact_copy_holdout, records.distance_holdout == 0)
    assert records.exact_copy_member.sum() > 0
    assert not any(c in records.columns for c in adult_parts["train"].columns if c != "row_id")  # no raw values


def test_deterministic_and_plain_json(adult, adult_schema):
    parts = split_real(adult, 1500, 1000, 0, seed=5)
    syn = synthetic_from(parts, adult_schema, "cart", n=1200)
    a = dcr(parts["train"], syn, parts["holdout"], schema=adult_schema, seed=7)
    b = dcr(parts["train"], syn, parts["holdout"], schema=adult_schema, seed=7)
    c = dcr(parts["train"], syn, parts["holdout"], schema=adult_schema, seed=8)
    assert a.to_json() == b.to_json()
    pd.testing.assert_frame_equal(a.records, b.records)
    assert not a.records.nearest_member.equals(c.records.nearest_member)  # another member subsample
    assert json.loads(json.dumps(a.to_json())) == a.to_json()


def test_missing_values(mixed, mixed_schema):
    out = dcr(mixed.iloc[:150], mixed.iloc[300:], mixed.iloc[150:300], schema=mixed_schema).to_json()
    assert 0 <= out["share_closer_to_member"] <= 1 and np.isfinite(out["dcr_member"]["mean"])


def test_bad_inputs(adult_parts, adult_schema):
    m, h = adult_parts["train"].iloc[:50], adult_parts["holdout"].iloc[:50]
    with pytest.raises(DataError, match=r"dcr: holdout has 0 record\(s\)"):
        dcr(m, m, h.iloc[:0], schema=adult_schema)
    with pytest.raises(DataError, match=r"dcr: members has 1 record\(s\).*at least 2"):
        dcr(m.iloc[:1], m, h, schema=adult_schema)
    with pytest.raises(DataError, match="dcr: holdout is None"):
        dcr(m, m, None, schema=adult_schema)
    with pytest.raises(DataError, match="dcr: synthetic has 0 record"):
        dcr(m, m.iloc[:0], h, schema=adult_schema)
    with pytest.raises(SchemaError, match=r"synthetic: column\(s\) \['age'\]"):
        dcr(m, m.drop(columns="age"), h, schema=adult_schema)


def test_synthetic_cap_searches_a_sample_and_counts_copies_over_all(adult_parts, adult_schema):
    """Issue #28: above max_synthetic the searches (share, interval, test, DCR, NNDR) are those of a
    seeded sample of synthetic records, each with the distances it has in the full run; exact copies
    are counted over every synthetic record; at the cap nothing changes."""
    syn = synthetic_from(adult_parts, adult_schema, "cart")
    full = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema, seed=2, max_synthetic=None)
    at_cap = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema, seed=2, max_synthetic=2000)
    assert {**at_cap.to_json(), "max_synthetic": None} == full.to_json() and full.to_json()["subsample_note"] is None
    capped = dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema, seed=2, max_synthetic=500)
    out, records = capped.to_json(), capped.records
    assert out["n_synthetic"] == len(records) == 500 and out["n_synthetic_total"] == 2000 and out["capped"]
    assert "500 of the 2,000 synthetic records" in out["subsample_note"]
    pd.testing.assert_frame_equal(records.reset_index(drop=True),
                                  full.records.iloc[records["synthetic_index"]].reset_index(drop=True))
    assert out["exact_copies_member"] == full.to_json()["exact_copies_member"]  # over all 2,000
    assert out["share_interval"]["high"] - out["share_interval"]["low"] > \
        full.to_json()["share_interval"]["high"] - full.to_json()["share_interval"]["low"]
    with pytest.raises(ConfigError, match="max_synthetic"):
        dcr(adult_parts["train"], syn, adult_parts["holdout"], schema=adult_schema, max_synthetic=0)


# --- the permutation test (issue #26) -------------------------------------------------------------

# The population of benchmarks/dcr_null.py (its `coarse` variant): rounded numerics and skewed
# categories, so that many synthetic records share one nearest real record.
sys.path.insert(0, str(ROOT / "benchmarks"))
from dcr_null import SCHEMA as POPULATION  # noqa: E402
from dcr_null import population as _population  # noqa: E402


def population(n, rng):
    return _population(n, rng, coarse=True)


def brute_scores(syn, pool, space, labels):
    """Twice the count closer to members (ties half) under each labelling, from the full matrix."""
    matrix = gower_matrix(syn, pool, space)
    tied = (matrix == matrix.min(axis=1, keepdims=True)).astype(float)
    size, inside = tied.sum(axis=1), labels @ tied.T
    return np.where(inside == size, 2.0, np.where(inside == 0, 0.0, 1.0)).sum(axis=1)


@pytest.mark.parametrize("data", ["mixed", "population"])
def test_tie_sets_give_the_share_under_every_labelling(data, mixed, mixed_schema):
    """The pooled search's tie sets score any member/holdout labelling as the full distance matrix
    does; under the true labelling they give the two searches' share; a set that fills the search
    (k too small) is scored at least at its true value."""
    if data == "mixed":
        schema, frame = mixed_schema, mixed
    else:
        schema, frame = POPULATION, POPULATION.conform(population(500, np.random.default_rng(3)))
    members, holdout, syn = frame.iloc[:150], frame.iloc[150:300], frame.iloc[300:].reset_index(drop=True)
    pool = pd.concat([members, holdout], ignore_index=True)
    space = GowerSpace.fit(pool, schema)
    q, r = space.encode(syn), space.encode(pool)
    rng = np.random.default_rng(0)
    labels = np.array([rng.permutation(np.r_[np.ones(150), np.zeros(150)]) for _ in range(50)])
    truth = np.r_[np.ones(150), np.zeros(150)]
    exact = brute_scores(syn, pool, space, np.vstack([truth, labels]))

    ties = nearest_ties(*q, *r, space.n_columns)
    assert ties.n_saturated == 0 and ties.n_tied >= (2 if data == "mixed" else 10)
    np.testing.assert_array_equal(ties.scores(np.vstack([truth, labels])[:, ties.pooled]), exact)
    out = dcr(members, syn, holdout, schema=schema).to_json()
    assert exact[0] == 2 * out["n_closer_to_member"] + out["n_ties"]
    assert out["nearest_real"] == {"distinct": len(ties.pooled), "tied": ties.n_tied, "saturated": 0}

    small = nearest_ties(*q, *r, space.n_columns, ks=(2,))
    assert small.n_saturated > 0
    assert np.all(small.scores(labels[:, small.pooled]) >= exact[1:])
    again = nearest_ties(*q, *r, space.n_columns, ks=(2, TIE_K[1]))  # the re-search completes them
    assert again.n_saturated == 0
    np.testing.assert_array_equal(again.scores(labels[:, again.pooled]), exact[1:])


def test_permutations_draw_uniform_labellings():
    """Relabellings restricted to the records that matter: each is a member with probability
    n_members / n_pooled, and exactly n_members of the n_pooled are (hypergeometric count)."""
    from synthrisk.dcr.core import NearestTies

    # each of 3 records is the unique nearest of one synthetic record: score = 2 x members among them
    ties = NearestTies(np.array([0, 1, 2]), np.ones(3), (), 0, 0)
    scores = permutation_scores(ties, 5, 10, 20000, np.random.default_rng(1)) / 2
    counts = np.bincount(scores.astype(int), minlength=4) / len(scores)
    from scipy.stats import hypergeom
    np.testing.assert_allclose(counts, hypergeom(10, 5, 3).pmf(np.arange(4)), atol=0.01)


def test_permutation_setting(mixed, mixed_schema):
    members, holdout, syn = mixed.iloc[:150], mixed.iloc[150:300], mixed.iloc[300:]
    out = dcr(members, syn, holdout, schema=mixed_schema, permutations=99).to_json()
    assert out["permutations"] == 99 and round(out["p_value_one_sided"] * 100) == out["p_value_one_sided"] * 100
    assert "permutation" in out["test"] and "relabellings" in out["share_interval"]["method"]
    for bad in (0, -1, 2.5, True, "9"):
        with pytest.raises(ConfigError, match="permutations"):
            dcr(members, syn, holdout, schema=mixed_schema, permutations=bad)
    from synthrisk.measures import measure

    assert measure("dcr").settings({}).permutations == 999
    with pytest.raises(ConfigError, match="dcr.permutations: 0 is less than the minimum of 1"):
        measure("dcr").settings({"permutations": 0})


def _null_runs(sizes, reps, leak=0.0):
    n_m, n_h, n_s = sizes
    runs = []
    for rep in range(reps):
        rng = np.random.default_rng([26, n_m, n_s, rep, int(leak * 100)])
        members, holdout, syn = population(n_m, rng), population(n_h, rng), population(n_s, rng)
        copies = int(leak * n_s)
        if copies:
            syn.iloc[:copies] = members.iloc[rng.choice(n_m, copies, replace=False)].to_numpy()
        runs.append(dcr(members, syn, holdout, schema=POPULATION, seed=rep, permutations=199).to_json())
    return runs


@pytest.mark.slow  # a null study: `make test-all` and CI run it
def test_null_level_and_spread_when_synthetic_records_share_nearest_records():
    """Synthetic data drawn afresh from the population (the generator never saw the members): the
    permutation test rejects at about its level, the share's spread over replications is the
    permutation sd, and it is wider than the binomial sd the sign test assumes, which therefore
    rejects too often with 3,000 synthetic records on 2,000 real ones. 10 % copies of members are
    found. (benchmarks/dcr_null.py: the same at 200 replications.)"""
    small = _null_runs((300, 300, 300), 60)
    assert sum(r["p_value_one_sided"] < 0.05 for r in small) <= 10
    large = _null_runs((1000, 1000, 3000), 60)
    share = np.array([r["share_closer_to_member"] for r in large])
    sd_perm = np.mean([r["null_sd"]["permutation"] for r in large])
    sd_binom = np.mean([r["null_sd"]["binomial"] for r in large])
    rejections = {test: sum(r[key] < 0.05 for r in large)
                  for test, key in (("permutation", "p_value_one_sided"), ("sign", "p_value_sign_test"))}
    covers = np.mean([r["share_interval"]["low"] <= 0.5 <= r["share_interval"]["high"] for r in large])
    print(rejections, share.std(ddof=1), sd_perm, sd_binom, covers)
    assert rejections["permutation"] <= 10 and covers >= 0.85
    assert 0.75 * sd_perm < share.std(ddof=1) < 1.3 * sd_perm
    assert sd_perm > 1.25 * sd_binom and share.std(ddof=1) > 1.15 * sd_binom
    leaky = _null_runs((1000, 1000, 3000), 10, leak=0.1)
    assert sum(r["p_value_one_sided"] < 0.05 for r in leaky) >= 8
