"""Singling-out, linkability and inference risk against a control set (synthrisk.anonymity)."""

import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from synthrisk.anonymity import (
    applicable_reason,
    control_risk,
    correct_guesses,
    default_aux_cols,
    inference,
    k_nearest,
    linkability,
    singling_out,
    success_rate,
)
from synthrisk.anonymity._inputs import sub_schema
from synthrisk.anonymity.singling_out import _fit_weight, _integral
from synthrisk.data.schema import DatasetSchema
from synthrisk.data.simulate import simulate
from synthrisk.data.split import ROW_ID, split_real
from synthrisk.errors import ConfigError, DataError
from synthrisk.generators import make_generator
from synthrisk.mia import GowerSpace, gower_matrix, nearest_synthetic

N = 1500
N_ATTACKS = 400


@pytest.fixture(scope="module")
def sim(sim_schema):
    """Members and control from the simulator (disjoint, with row ids) and three releases."""
    real = sim_schema.conform(simulate(n=2 * N, strength=0.8, seed=3))
    parts = split_real(real, N, N, 0, seed=0)
    members, control = parts["train"], parts["holdout"]
    releases = {}
    for backend in ("identity", "independent", "cart"):
        generator = make_generator({"backend": backend}, seed=0).fit(members.drop(columns=[ROW_ID]), sim_schema)
        releases[backend] = generator.sample(N, seed=0)
    return members, control, releases


# ---------------------------------------------------------------- the risk formula


def wilson_by_hand(k, n, z):
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return centre, half


def test_control_risk_matches_hand_computation():
    z = 1.959963984540054  # Phi^-1(0.975)
    m, em = wilson_by_hand(90, 300, z)
    c, ec = wilson_by_hand(30, 250, z)
    risk = (m - c) / (1 - c)
    error = math.sqrt((em / (1 - c)) ** 2 + (ec * (m - 1) / (1 - c) ** 2) ** 2)
    result = control_risk(90, 300, 30, 250, confidence=0.95, n_baseline_success=10, n_baseline=300)
    assert result.risk == pytest.approx(risk, rel=1e-12)
    assert result.residual_error == pytest.approx(error, rel=1e-12)
    # The interval is 1 - statsmodels' Miettinen-Nurminen interval of the failure rates' ratio
    # (interior counts, where statsmodels' own inversion works).
    ratio_low, ratio_high = confint_proportions_2indep(210, 300, 220, 250, method="score", compare="ratio")
    assert (result.ci_low, result.ci_high) == pytest.approx((1 - ratio_high, 1 - ratio_low), rel=1e-8)
    assert (result.main.rate, result.main.error) == pytest.approx((m, em), rel=1e-12)
    assert (result.control.ci_low, result.control.ci_high) == pytest.approx((c - ec, c + ec), rel=1e-12)
    assert result.baseline.rate == pytest.approx(wilson_by_hand(10, 300, z)[0], rel=1e-12)
    # Numbers worked out once by hand from the formulas, so the test also catches a wrong z.
    assert risk == pytest.approx(0.2022, abs=5e-4) and error == pytest.approx(0.0696, abs=5e-4)
    payload = result.to_json()
    assert json.loads(json.dumps(payload)) == payload
    assert set(payload) == {"risk", "ci_low", "ci_high", "residual", "residual_error", "confidence", "main",
                            "control", "baseline", "p_value", "test"}


def test_risk_is_clipped_but_residual_kept():
    result = control_risk(10, 100, 40, 100)
    assert result.residual < 0 and result.risk == 0.0 and result.ci_low == 0.0
    assert 0.0 <= result.ci_high < 0.05
    assert control_risk(100, 100, 0, 100).risk == pytest.approx(1.0, abs=0.02)
    wide, narrow = success_rate(5, 10, confidence=0.99), success_rate(5, 10, confidence=0.9)
    assert wide.ci_high - wide.ci_low > narrow.ci_high - narrow.ci_low


def test_control_risk_interval_at_the_edges_and_its_coverage():
    # every member attacked successfully, no control record: the risk is about 1, and certain
    every = control_risk(100, 100, 0, 100)
    assert every.ci_low > 0.95 and every.ci_high == 1.0
    # the control set always attacked successfully, half the members: the members are certainly
    # attacked less successfully, so the clipped risk and its interval are 0
    assert (control_risk(50, 100, 100, 100).ci_low, control_risk(50, 100, 100, 100).ci_high) == (0.0, 0.0)
    # both always fail (the risk is small); both always succeed (the data say nothing about it)
    assert control_risk(0, 300, 0, 300).ci_high < 0.02
    assert (control_risk(300, 300, 300, 300).ci_low, control_risk(300, 300, 300, 300).ci_high) == (0.0, 1.0)
    # Coverage where it matters for "at risk" (the lower end above the true risk), at a control
    # rate like the inference attack's: true risk 0.1, control success 0.9, 300 attacks each. The
    # score interval misses from above at about its one-sided 2.5%; the first-order interval it
    # replaced (risk +- residual_error) at about 5% (benchmarks/control_risk_interval.py).
    rng = np.random.default_rng(7)
    control_p, risk = 0.9, 0.1
    main_p = control_p + risk * (1 - control_p)
    draws = zip(rng.binomial(300, main_p, 1000), rng.binomial(300, control_p, 1000))
    above = [(r.ci_low > risk, r.residual - r.residual_error > risk)
             for r in (control_risk(k_main, 300, k_control, 300) for k_main, k_control in draws)]
    score_miss, first_order_miss = np.mean(above, axis=0)
    assert score_miss <= 0.035 and first_order_miss >= score_miss + 0.01, (score_miss, first_order_miss)


def test_risk_refuses_impossible_counts():
    with pytest.raises(DataError, match="n_success"):
        success_rate(11, 10)
    with pytest.raises(DataError, match="n: the number of attacks"):
        control_risk(0, 0, 0, 10)
    with pytest.raises(ConfigError, match="confidence"):
        control_risk(1, 10, 1, 10, confidence=95)


# ---------------------------------------------------------------- the attacks


def test_identity_release_is_flagged_by_every_attack(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["identity"]
    results = {
        "singling_out": singling_out(members, synthetic, control, schema=sim_schema, n_attacks=N_ATTACKS,
                                     mode="multivariate", n_cols=3),
        "linkability": linkability(members, synthetic, control, schema=sim_schema, n_attacks=N_ATTACKS),
        "inference y_cat": inference(members, synthetic, control, schema=sim_schema, secret="y_cat", n_attacks=N_ATTACKS),
        "inference y_cont": inference(members, synthetic, control, schema=sim_schema, secret="y_cont", n_attacks=N_ATTACKS),
    }
    for name, result in results.items():
        assert result.risk.ci_low > 0.2, (name, result.to_json())
        assert result.risk.main.rate > result.risk.control.rate, name
    # The members themselves are released: a query that singles out there singles out a member,
    # and the nearest record on continuous quasi-identifiers is the target itself.
    so = results["singling_out"]
    assert so.risk.main.n_success == so.n_queries == N_ATTACKS
    assert results["inference y_cat"].risk.main.n_success == N_ATTACKS
    assert results["inference y_cont"].regression and results["inference y_cont"].risk.main.n_success == N_ATTACKS


def test_univariate_singling_out_of_identity_release(sim, sim_schema):
    members, control, releases = sim
    result = singling_out(members, releases["identity"], control, schema=sim_schema, n_attacks=N_ATTACKS)
    # Continuous values are unique: every univariate query singles out a member, almost none a
    # control record (only a <= min or >= max query can).
    assert result.risk.main.n_success == result.n_queries == N_ATTACKS
    assert result.risk.control.n_success <= 10
    assert result.risk.ci_low > 0.9


def test_independent_release_carries_no_linkability_or_inference_risk(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["independent"]
    for result in (linkability(members, synthetic, control, schema=sim_schema, n_attacks=N_ATTACKS, n_neighbors=3),
                   inference(members, synthetic, control, schema=sim_schema, secret="y_cat", n_attacks=N_ATTACKS)):
        assert result.risk.ci_low < 0.03, result.to_json()
        assert result.risk.risk < 0.1, result.to_json()


def test_more_neighbours_link_more(sim, sim_schema):
    members, control, releases = sim
    one = linkability(members, releases["identity"], control, schema=sim_schema, n_attacks=N_ATTACKS)
    five = linkability(members, releases["identity"], control, schema=sim_schema, n_attacks=N_ATTACKS, n_neighbors=5)
    assert five.risk.main.n_success >= one.risk.main.n_success
    assert one.aux_cols == (("x1", "x2", "x3"), ("age", "region", "group"))


def test_same_seed_same_result_other_seed_other_attacks(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["cart"]
    for run in (lambda s: singling_out(members, synthetic, control, schema=sim_schema, n_attacks=200,
                                       mode="multivariate", seed=s),
                lambda s: linkability(members, synthetic, control, schema=sim_schema, n_attacks=200, seed=s),
                lambda s: inference(members, synthetic, control, schema=sim_schema, secret="y_cat", n_attacks=200, seed=s)):
        first, again, other = run(5), run(5), run(6)
        assert first.to_json() == again.to_json()
        pd.testing.assert_frame_equal(first.records, again.records)
        assert not first.records.equals(other.records)


def test_records_hold_row_ids_and_booleans_only(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["cart"]
    known_ids = set(members[ROW_ID]) | set(control[ROW_ID])
    for result in (singling_out(members, synthetic, control, schema=sim_schema, n_attacks=100, mode="multivariate"),
                   linkability(members, synthetic, control, schema=sim_schema, n_attacks=100),
                   inference(members, synthetic, control, schema=sim_schema, secret="y_cont", n_attacks=100)):
        records = result.records
        others = [c for c in records.columns if c not in (ROW_ID, "query")]
        assert all(records[c].dtype == bool for c in others), records.dtypes
        assert set(records[ROW_ID].dropna()) <= known_ids
        assert set(records.loc[records["member"], ROW_ID].dropna()) <= set(members[ROW_ID])
        payload = result.to_json()
        assert json.loads(json.dumps(payload)) == payload


def test_results_json_keys(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["cart"]
    common = {"attack", "risk", "ci_low", "ci_high", "residual", "residual_error", "confidence", "main", "control",
              "baseline", "n_attacks", "seed", "p_value", "test"}
    so = singling_out(members, synthetic, control, schema=sim_schema, n_attacks=50).to_json()
    assert set(so) == common | {"mode", "n_queries", "n_cols", "columns", "max_attempts", "n_attempts", "n_members",
                                "n_control", "n_synthetic", "control_success_raw", "control_correction"}
    li = linkability(members, synthetic, control, schema=sim_schema, n_attacks=50).to_json()
    assert set(li) == common | {"aux_cols", "n_members_attacked", "n_control_attacked", "n_neighbors", "n_synthetic"}
    inf = inference(members, synthetic, control, schema=sim_schema, secret="y_cat", n_attacks=50).to_json()
    assert set(inf) == common | {"secret", "known", "regression", "tolerance", "n_members_attacked",
                                 "n_control_attacked", "n_synthetic"}


# ---------------------------------------------------------------- pieces


def test_k_nearest_matches_brute_force_with_missing_values(mixed, mixed_schema):
    query, synthetic = mixed.iloc[:50].reset_index(drop=True), mixed.iloc[50:250].reset_index(drop=True)
    space = GowerSpace.fit(mixed, mixed_schema)
    full = gower_matrix(query, synthetic, space)
    order = np.argsort(full, axis=1, kind="stable")[:, :4]  # ties to the lower index
    distance, index = k_nearest(query, synthetic, space, 4, block_size=7)
    np.testing.assert_allclose(distance, np.take_along_axis(full, order, axis=1), atol=1e-12)
    np.testing.assert_array_equal(index, order)
    one_d, one_i = nearest_synthetic(query, synthetic, space)
    np.testing.assert_array_equal(index[:, 0], one_i)
    np.testing.assert_allclose(k_nearest(query, synthetic, space, 1)[0][:, 0], one_d)


def test_k_nearest_breaks_ties_to_the_lower_index(mixed, mixed_schema):
    # Two categorical columns: every distance is 0, 1/2 or 1, so nearly all neighbours are tied.
    columns = ["cat", "target"]
    space = GowerSpace.fit(mixed[columns], sub_schema(mixed_schema, columns))
    query, synthetic = mixed.iloc[:30][columns], mixed.iloc[30:230][columns].reset_index(drop=True)
    full = gower_matrix(query, synthetic, space)
    order = np.argsort(full, axis=1, kind="stable")[:, :6]
    distance, index = k_nearest(query, synthetic, space, 6, block_size=8)
    np.testing.assert_array_equal(index, order)
    np.testing.assert_allclose(distance, np.take_along_axis(full, order, axis=1))


def test_correct_guesses_relative_to_the_guess():
    guesses = np.array([100.0, 100.0, -100.0, 0.0, np.nan, np.nan])
    secrets = np.array([104.9, 106.0, -96.0, 0.0, np.nan, 3.0])
    assert correct_guesses(guesses, secrets, regression=True, tolerance=0.05).tolist() == [
        True, False, True, True, True, False]
    labels = np.array(["a", "b", None], dtype=object)
    assert correct_guesses(labels, np.array(["a", "a", None], dtype=object), regression=False).tolist() == [
        True, False, True]


def test_control_size_correction_recovers_the_size_effect():
    # Queries of population weights w ~ U(0, 3e-4) single out among n records with probability
    # n w (1 - w)^(n - 1); the correction from subsets of a 9,000-record table to 30,000 must
    # match the exact ratio of expected counts.
    rng = np.random.default_rng(0)
    w = rng.uniform(0, 3e-4, 2000)
    sizes = np.repeat(np.linspace(1000, 9000, 10).astype(int), 5).astype(float)
    successes = np.array([(rng.random(len(w)) < n * w * (1 - w) ** (n - 1)).sum() for n in sizes], dtype=float)
    fitted = _fit_weight(sizes, successes)
    exact = (30000 * w * (1 - w) ** 29999).sum() / (9000 * w * (1 - w) ** 8999).sum()
    assert _integral(30000, fitted) / _integral(9000, fitted) == pytest.approx(exact, rel=0.15)


def test_control_correction_same_with_listed_or_scanned_matches(sim, sim_schema, monkeypatch):
    members, control, releases = sim
    def run():
        return singling_out(members, releases["cart"], control.iloc[:700], schema=sim_schema, n_attacks=200, mode="multivariate")

    listed = run()
    assert listed.control_correction is not None and listed.control_correction > 1.0  # smaller control
    assert listed.risk.control.n_success == pytest.approx(listed.control_success_raw * listed.control_correction)
    monkeypatch.setattr(sys.modules["synthrisk.anonymity.singling_out"], "MAX_LISTED_MATCHES", 0)
    assert run().to_json() == listed.to_json()


# ---------------------------------------------------------------- refusals


def test_bad_inputs_are_refused_with_the_argument_named(sim, sim_schema):
    members, control, releases = sim
    synthetic = releases["cart"]
    with pytest.raises(DataError, match="control: the control set .* is empty"):
        linkability(members, synthetic, control.iloc[:0], schema=sim_schema)
    with pytest.raises(ConfigError, match="secret: 'salary' is not a column"):
        inference(members, synthetic, control, schema=sim_schema, secret="salary")
    with pytest.raises(ConfigError, match="known: lists the secret"):
        inference(members, synthetic, control, schema=sim_schema, secret="y_cat", known=["x1", "y_cat"])
    with pytest.raises(ConfigError, match="n_cols: 9 columns per query"):
        singling_out(members, synthetic, control, schema=sim_schema, mode="multivariate", n_cols=9)
    with pytest.raises(ConfigError, match="mode: must be one of"):
        singling_out(members, synthetic, control, schema=sim_schema, mode="bivariate")
    with pytest.raises(DataError, match="control: 3 record"):
        inference(members, synthetic, pd.concat([control, members.iloc[:3]]), schema=sim_schema, secret="y_cat")
    with pytest.raises(DataError, match="synthetic: column"):
        linkability(members, synthetic.drop(columns=["x1"]), control, schema=sim_schema)
    with pytest.raises(ConfigError, match="n_neighbors: 5 neighbours asked"):
        linkability(members, synthetic.iloc[:4], control, schema=sim_schema, n_neighbors=5)


def test_linkability_needs_two_quasi_identifiers(sim, sim_schema):
    members, control, releases = sim
    one_qi = DatasetSchema.from_dict({**sim_schema.to_dict(), "quasi_identifiers": ["x1"]})
    with pytest.raises(ConfigError, match="aux_cols: not given, and schema .* has 1 quasi-identifier"):
        default_aux_cols(one_qi)
    reason = applicable_reason("linkability", members, releases["cart"], control, schema=one_qi)
    assert reason.startswith("aux_cols:") and "at least 2" in reason
    assert applicable_reason("linkability", members, releases["cart"], control, schema=sim_schema) is None
    assert applicable_reason("inference", members, releases["cart"], control, schema=sim_schema, secret="y_cont") is None
    assert applicable_reason("inference", members, releases["cart"], control, schema=sim_schema).startswith("secret:")
    assert applicable_reason("singling_out", members, releases["cart"], control.iloc[:0], schema=sim_schema).startswith(
        "control:")
    assert applicable_reason("singling_out", members, releases["cart"], control, schema=sim_schema,
                             n_colls=2).startswith("n_colls: not a setting")


# ---------------------------------------------------------------- the tests of member excess


def test_record_attacks_test_by_the_exact_label_permutation(sim, sim_schema):
    """Inference and linkability attack records one at a time: their p-value is the one-sided
    Fisher exact test of the attacked records' successes (members against control)."""
    from scipy.stats import fisher_exact

    members, control, releases = sim
    for synthetic in (releases["cart"], releases["identity"]):
        for result, flag in ((inference(members, synthetic, control, schema=sim_schema, secret="y_cat", n_attacks=N_ATTACKS),
                              "correct"),
                             (linkability(members, synthetic, control, schema=sim_schema, n_attacks=N_ATTACKS), "linked")):
            records = result.records
            hits = records.groupby("member")[flag].agg(["sum", "size"])
            table = [[hits.loc[True, "sum"], hits.loc[True, "size"] - hits.loc[True, "sum"]],
                     [hits.loc[False, "sum"], hits.loc[False, "size"] - hits.loc[False, "sum"]]]
            assert result.risk.p_value == pytest.approx(fisher_exact(table, alternative="greater").pvalue, rel=1e-9)
            assert "hypergeometric" in result.risk.test


@pytest.mark.slow  # 200 brute-force relabellings: `make test-all` and CI run it
def test_singling_out_test_relabels_the_pooled_records(sim, sim_schema):
    """The singling-out p-value is the share of relabellings of the pooled records at least as
    extreme: recomputed here by running the attack itself on relabelled member and control sets
    (the queries depend on the synthetic data and the seed only, so they are the same queries)."""
    members, control, releases = sim
    members, control = members.iloc[:300], control.iloc[:300]
    synthetic = releases["cart"].iloc[:600]
    pooled = pd.concat([members, control], ignore_index=True)

    def statistic(m, c, permutations=1):
        result = singling_out(m, synthetic, c, schema=sim_schema, n_attacks=100, mode="multivariate", n_cols=2,
                              seed=4, permutations=permutations)
        return result.risk.main.n_success - result.control_success_raw, result

    observed, result = statistic(members, control, permutations=999)
    rng = np.random.default_rng(0)
    relabelled = []
    for _ in range(200):  # the brute-force p-value's sd is at most 0.035: the tolerance is about 3 sd
        order = rng.permutation(len(pooled))
        relabelled.append(statistic(pooled.iloc[order[:300]], pooled.iloc[order[300:]])[0])
    brute = (1 + np.sum(np.array(relabelled) >= observed)) / 201
    assert 0.02 < brute < 0.98, "choose a case whose p-value is not at an end"
    assert result.risk.p_value == pytest.approx(brute, abs=0.1)
    assert "relabellings" in result.risk.test


def test_singling_out_counts_the_same_from_the_pooled_scan_as_from_the_separate_scans(sim, sim_schema, monkeypatch):
    """The counts and the records singled out come from one scan of the pooled distinct records
    (which the test relabels); with too many matches to list, from a capped scan of the members and
    one of the control records, with no test. Both give the same results, duplicates included."""
    members, control, releases = sim
    # copies of records on both sides: a query matching two copies of one record singles it out
    members = pd.concat([members, members.iloc[:40].assign(**{ROW_ID: members[ROW_ID].iloc[:40] + 10**6})])
    control = pd.concat([control, members.iloc[40:60].assign(**{ROW_ID: members[ROW_ID].iloc[40:60] + 2 * 10**6})])
    for mode in ("univariate", "multivariate"):
        # 99 relabellings: the counts compared do not depend on how many the test draws
        pooled = singling_out(members, releases["cart"], control, schema=sim_schema, n_attacks=150, mode=mode,
                              n_cols=2, permutations=99)
        monkeypatch.setattr(sys.modules["synthrisk.anonymity.singling_out"], "MAX_TEST_MATCHES", 0)
        scanned = singling_out(members, releases["cart"], control, schema=sim_schema, n_attacks=150, mode=mode,
                               n_cols=2, permutations=99)
        monkeypatch.undo()
        assert scanned.risk.p_value is None and pooled.risk.p_value is not None
        pd.testing.assert_frame_equal(pooled.records, scanned.records)
        assert {k: v for k, v in pooled.to_json().items() if k not in ("p_value", "test")} == \
            {k: v for k, v in scanned.to_json().items() if k not in ("p_value", "test")}
    # a release no query of which matches a real record: nothing singled out, p = 1
    # (values between the real ones, and extremes beyond them: no `==`, `<= min` or `>= max` matches)
    spread = np.linspace(-100.0, 100.0, len(releases["cart"])) + np.pi * 1e-7
    unmatched = releases["cart"].assign(x1=spread, x2=spread[::-1])
    result = singling_out(members, unmatched, control, schema=sim_schema, n_attacks=100, columns=["x1", "x2"], permutations=99)
    assert result.risk.main.n_success == 0 and result.control_success_raw == 0 and result.risk.p_value == 1.0


def test_member_excess_tests_separate_copies_from_unseen_records(sim, sim_schema):
    """A release of the members gives the smallest p-value the test has; the holdout released
    as it is (a release that never saw the members) gives no evidence."""
    members, control, releases = sim
    for synthetic, low in ((releases["identity"], True), (control, False)):
        for result in (singling_out(members, synthetic, control, schema=sim_schema, n_attacks=200),
                       linkability(members, synthetic, control, schema=sim_schema, n_attacks=200),
                       inference(members, synthetic, control, schema=sim_schema, secret="y_cont", n_attacks=200)):
            if low:
                assert result.risk.p_value <= 1e-3, result.to_json()
            else:
                assert result.risk.p_value > 0.5, result.to_json()
