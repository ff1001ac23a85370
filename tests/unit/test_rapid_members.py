"""RAPID's member excess (issue #26 item 5): the attacker fitted for RAPID also scores holdout records
the generator never saw; the privacy verdict rests on RAPID(members) - RAPID(holdout), and RAPID
against its chance floor is shown beside it as population-level inference."""

import json

import numpy as np
import pandas as pd
import pytest

from synthrisk.data.simulate import simulate
from synthrisk.errors import DataError
from synthrisk.generators import make_generator
from synthrisk.measures.base import EVIDENCE_COLUMNS, MeasureInput
from synthrisk.rapid import rapid
from synthrisk.rapid.summary import MEMBER_EXCESS, NO_HOLDOUT, NO_MEMBER_EXCESS, summarise
from synthrisk.stats.proportions import member_excess_test

FAST = {"n_trees": 60, "n_permutations": 99, "null_refits": 3, "attribution": False}
NEW_KEYS = {"rapid_holdout", "n_holdout", "n_holdout_at_risk", "n_holdout_total", "member_excess",
            "member_excess_ci_low", "member_excess_ci_high", "member_excess_ci_method", "member_excess_p_value",
            "member_excess_test", "member_excess_significant", "member_verdict"}


@pytest.fixture(scope="module")
def population(sim_schema):
    """Simulator at dependence strength 0.8: 1,000 members, 1,000 holdout records and 2,000 more
    people of the same population, all disjoint; row ids as the split files have them."""
    frame = sim_schema.conform(simulate(4000, strength=0.8, seed=11)).assign(row_id=np.arange(4000))
    return frame.iloc[:1000], frame.iloc[1000:2000], frame.iloc[2000:].drop(columns="row_id")


@pytest.fixture(scope="module")
def releases(population, sim_schema):
    members, holdout, others = population
    identity = make_generator({"backend": "identity"}, seed=0).fit(members.drop(columns="row_id"), sim_schema)
    results = {}
    for name, synthetic in (("population", others), ("identity", identity.sample(1000, 0))):
        for attacker, sensitive in (("logit", "y_cat"), ("rf", "y_cat"), ("rf", "y_cont")):
            results[name, attacker, sensitive] = rapid(members, synthetic, schema=sim_schema, sensitive=sensitive,
                                                       attacker=attacker, holdout=holdout, seed=0, **FAST)
    return results


def test_a_release_of_other_people_has_no_member_excess_but_population_level_inference(releases):
    """The issue's case: a release of population records disjoint from the members. RAPID beats
    its chance floor (the quasi-identifiers predict the attribute in the whole population), and
    the same attacker does as well on records it never saw: no member excess."""
    for attacker, sensitive in (("logit", "y_cat"), ("rf", "y_cat"), ("rf", "y_cont")):
        result = releases["population", attacker, sensitive]
        assert result.beats_chance and result.rapid > result.chance_floor + 0.1, (attacker, sensitive)
        assert abs(result.rapid - result.rapid_holdout) < 0.06 and result.n_holdout == 1000
        assert result.member_excess == pytest.approx(result.rapid - result.rapid_holdout)
        assert result.member_excess_ci_low < 0 < result.member_excess_ci_high, (attacker, sensitive)
        assert result.member_excess_p_value > 0.05 and not result.member_excess_significant
        assert result.member_verdict.startswith("no member excess")


def test_identity_release_has_a_clear_member_excess(releases):
    """The members themselves released: a forest learns them, and infers them far better than
    anyone else of the population. A logistic model cannot memorise records: its RAPID is
    population-level inference even here, and it says so."""
    for sensitive in ("y_cat", "y_cont"):
        result = releases["identity", "rf", sensitive]
        assert result.member_excess > 0.2 and result.member_excess_ci_low > 0.15, sensitive
        assert result.member_excess_p_value < 1e-10 and result.member_excess_significant
        assert result.member_verdict.startswith("members inferred more often")
    logit = releases["identity", "logit", "y_cat"]
    assert abs(logit.member_excess) < 0.06 and not logit.member_excess_significant


def test_interval_and_p_value_agree_in_direction(releases):
    for key, result in releases.items():
        low, high, p = result.member_excess_ci_low, result.member_excess_ci_high, result.member_excess_p_value
        assert low <= result.member_excess <= high, key
        assert (low <= 0 or p < 0.05) and (p >= 0.025 or low > 0), key
    # On a grid of small and unequal sizes: a lower bound above 0 comes with p < 0.05, p < 0.025
    # with a lower bound above 0 (the exact test is a little conservative against Newcombe's
    # interval, so the two can differ only between 0.025 and 0.05), an upper bound below 0 with p > 0.95.
    for n, m in ((30, 30), (50, 120), (200, 200), (400, 150)):
        for k in range(0, n + 1, max(1, n // 20)):
            for j in range(0, m + 1, max(1, m // 20)):
                out = member_excess_test(k, n, j, m)
                low, high, p = out["member_excess_ci_low"], out["member_excess_ci_high"], out["member_excess_p_value"]
                assert low <= out["member_excess"] <= high and 0 <= p <= 1
                assert (low <= 0 or p < 0.05) and (p >= 0.025 or low > 0), (n, m, k, j, low, p)
                assert high >= 0 or p > 0.95, (n, m, k, j, high, p)
    # the test is the exact permutation test: its p-value matches drawn permutations of the labels
    flags = np.r_[np.ones(70), np.zeros(50), np.ones(55), np.zeros(65)].astype(bool)
    rng = np.random.default_rng(0)
    drawn = np.mean([rng.permutation(flags)[:120].sum() >= 70 for _ in range(20000)])
    assert member_excess_test(70, 120, 55, 120)["member_excess_p_value"] == pytest.approx(drawn, abs=0.01)
    # counts that are no counts are refused with the group named
    from synthrisk.errors import ConfigError
    from synthrisk.stats.proportions import member_excess_p_value

    for args, group in (((5, 4, 1, 10), "members"), ((1, 10, -1, 10), "holdout"), ((1.5, 10, 1, 10), "members")):
        with pytest.raises(ConfigError, match=group):
            member_excess_p_value(*args)


def test_the_same_fitted_attacker_scores_the_holdout_and_rapid_is_unchanged(population, sim_schema):
    """No refit: a continuous target has no b_i, so the holdout's scores are those of RAPID run with
    the holdout as the real records (same seed, same attacker). RAPID as published, its test and
    its records do not change with a holdout."""
    members, holdout, others = population
    kwargs = {"n_trees": 30, "n_permutations": 19, "null_refits": 2, "attribution": False, "seed": 4}
    with_holdout = rapid(members, others, schema=sim_schema, sensitive="y_cont", attacker="rf", holdout=holdout,
                         **kwargs)
    alone = rapid(holdout, others, schema=sim_schema, sensitive="y_cont", attacker="rf", **kwargs)
    np.testing.assert_array_equal(with_holdout.holdout_records["score"], alone.records["score"])
    assert with_holdout.holdout_records["row_id"].tolist() == holdout["row_id"].tolist()
    assert with_holdout.rapid_holdout == alone.rapid
    without = rapid(members, others, schema=sim_schema, sensitive="y_cont", attacker="rf", **kwargs)
    published = {k: v for k, v in with_holdout.to_json().items() if k not in NEW_KEYS}
    assert published == {k: v for k, v in without.to_json().items() if k not in NEW_KEYS}
    pd.testing.assert_frame_equal(with_holdout.records, without.records)
    # categorical: a holdout class no member has is scored with b below one member's share
    lacking = members[members["y_cat"] != "high"]
    result = rapid(lacking, others, schema=sim_schema, sensitive="y_cat", attacker="logit", holdout=holdout,
                   **kwargs)
    assert np.isfinite(result.holdout_records["score"]).all() and 0 <= result.rapid_holdout <= 1
    with pytest.raises(DataError, match="holdout data: no records"):
        rapid(members, others, schema=sim_schema, sensitive="y_cat", attacker="logit", holdout=holdout.iloc[:0],
              **kwargs)


def test_without_holdout_the_excess_is_not_available_and_the_verdict_falls_back(population, sim_schema):
    members, _, others = population
    result = rapid(members, others, schema=sim_schema, sensitive="y_cat", attacker="logit", seed=0, **FAST)
    out = json.loads(json.dumps(result.to_json()))
    assert out["rapid_holdout"] is None and out["member_excess"] is None and out["member_excess_p_value"] is None
    assert out["member_excess_significant"] is None and "not available: no holdout" in out["member_verdict"]
    assert result.beats_chance  # RAPID against chance, as before


def _frame(result, seed, generator="g"):
    return {**json.loads(json.dumps(result.to_json())), "dataset": "simulation", "generator": generator,
            "seed": seed, "status": "ok", "error": None}


def test_summary_and_evidence_rest_on_the_member_excess(releases, population, sim_schema, tmp_path):
    """rapid.csv gains the holdout RAPID and the member excess with its interval and p-value; the
    evidence row of a run with a holdout is the member excess against 0, RAPID against its floor
    stays in the table and in the detail as population-level inference; without a holdout the row
    is RAPID against its chance floor, and says why."""
    from synthrisk.measures import measure

    members, _, others = population
    rows = [_frame(releases[name, attacker, "y_cat"], seed=0, generator=name)
            for name in ("population", "identity") for attacker in ("logit", "rf")]
    no_holdout = rapid(members, others, schema=sim_schema, sensitive="y_cat", attacker="rf", seed=0, **FAST)
    rows.append(_frame(no_holdout, seed=0, generator="no_holdout"))
    table, rapid_max = summarise(pd.DataFrame(rows))
    by = table.set_index(["generator", "attacker"])
    for column in ("rapid_mean", "chance_floor_mean", "rapid_holdout_mean", "member_excess_mean",
                   "member_excess_ci_low_min", "member_excess_ci_high_max", "member_excess_p_value_merged",
                   "n_seeds_member_excess"):
        assert column in table, column
    population_rf = by.loc[("population", "rf")]
    assert population_rf["n_seeds_beating_chance"] == 1 and population_rf["n_seeds_member_excess"] == 0
    assert by.loc[("identity", "rf"), "n_seeds_member_excess"] == 1
    assert np.isnan(by.loc[("no_holdout", "rf"), "member_excess_mean"])
    verdicts = rapid_max.set_index("generator")
    assert verdicts.loc["population", "verdict"].startswith("beats chance")  # population-level inference
    assert verdicts.loc["population", "member_verdict"] == NO_MEMBER_EXCESS
    assert verdicts.loc["population", "member_excess_max_mean"] == 0.0
    assert verdicts.loc["identity", "member_verdict"] == MEMBER_EXCESS
    assert verdicts.loc["no_holdout", "member_verdict"] == NO_HOLDOUT

    m = measure("rapid")
    tables = {"rapid": table, "rapid_max": rapid_max}
    evidence = m.evidence(tables)
    assert list(evidence.columns) == EVIDENCE_COLUMNS
    rows = evidence.set_index(["generator", "attack"])
    member = rows.loc[("population", "rf -> y_cat")]
    assert member["metric"] == "RAPID member excess" and member["reference"] == 0.0
    assert member["value"] == pytest.approx(population_rf["member_excess_mean"])
    assert member["ci_low"] == pytest.approx(population_rf["member_excess_ci_low_min"])
    assert member["ci_high"] == pytest.approx(population_rf["member_excess_ci_high_max"])
    assert member["p_value"] == pytest.approx(population_rf["member_excess_p_value_merged"])
    assert member["effect_scale"] == 1.0
    assert member["n_seeds_beating"] == 0
    assert member["detail"] == (f"RAPID on members minus the same attacker on holdout records it never saw "
                                f"(population-level inference, RAPID {population_rf['rapid_mean']:.3f} vs floor "
                                f"{population_rf['chance_floor_mean']:.3f}, shown apart)")
    assert rows.loc[("identity", "rf -> y_cat"), "n_seeds_beating"] == 1
    fallback = rows.loc[("no_holdout", "rf -> y_cat")]
    assert fallback["metric"] == "RAPID"
    assert fallback["reference"] == pytest.approx(by.loc[("no_holdout", "rf"), "chance_floor_mean"])
    assert fallback["n_seeds_beating"] == 1 and "no holdout records" in fallback["detail"]

    from synthrisk.measures.verdict import risk_table

    risks = risk_table(evidence).set_index("generator")
    assert not risks.loc["population", "verdict"].startswith("at risk")  # the "at risk" is gone
    assert risks.loc["identity", "verdict"].startswith("at risk")
    assert risks.loc["no_holdout", "verdict"].startswith("at risk")  # fallback: RAPID against chance
    summary = m.outputs.summary_columns(tables).set_index("generator")
    assert summary.loc["population", "rapid_verdict"].startswith("y_cat: beats chance")
    assert summary.loc["population", "rapid_member_verdict"] == f"y_cat: {NO_MEMBER_EXCESS}"
    assert summary.loc["identity", "rapid_member_excess"] > 0.2 and np.isnan(summary.loc["no_holdout",
                                                                                       "rapid_member_excess"])


def test_the_measure_passes_the_holdout(population, sim_schema):
    from synthrisk.measures import measure

    members, holdout, others = population
    m = measure("rapid")
    settings = m.settings({"attackers": ["logit"], "permutations": 19, "null_refits": 0})
    synthetic = others.assign(row_id=np.arange(len(others)))
    data = MeasureInput(members=members, holdout=holdout, aux=members.iloc[:0], synthetic=synthetic,
                        schema=sim_schema, population_size=4000, seed=0)
    result = m.run(data, settings, "logit-y_cat")
    assert result.summary["n_holdout"] == 1000 and result.summary["member_excess"] is not None
    assert "member excess" in m.log_line(result)
    assert set(result.records.columns) == {"row_id", "score", "at_risk"} and len(result.records) == 1000
    alone = m.run(MeasureInput(**{**data.__dict__, "holdout": holdout.iloc[:0]}), settings, "logit-y_cat")
    assert alone.summary["member_excess"] is None and alone.summary["rapid"] == result.summary["rapid"]
