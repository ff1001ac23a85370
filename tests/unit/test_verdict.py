"""The verdict a steward acts on (issue #26): Holm over a risk's attacks, effects on one scale with
simultaneous intervals, three levels against a policy threshold, and the effect the audit could
have detected. Checked the way it is used: the family-wise rate under the null is simulated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from synthrisk.errors import ConfigError
from synthrisk.measures.policy import LEVELS, Policy, load_policy, policy_from_mapping
from synthrisk.measures.verdict import decisions, risk_table


def row(attack, value, reference, se, p=None, scale=1.0, risk="membership", generator="g", n_seeds=1):
    return {"dataset": "d", "generator": generator, "risk": risk, "measure": "m", "attack": attack, "metric": "x",
            "value": value, "reference": reference, "ci_low": value - 1.959964 * se, "ci_high": value + 1.959964 * se,
            "n_seeds": n_seeds, "n_seeds_beating": 0, "tpr_at_1e-02": np.nan, "tpr_at_1e-03": np.nan, "detail": "",
            "p_value": np.nan if p is None else p, "effect_scale": scale}


def test_three_levels_against_the_policy_threshold():
    evidence = pd.DataFrame([
        # material: effect 2 x 0.2 = 0.4, tight interval
        row("big", 0.70, 0.5, 0.01, p=1e-9, scale=2.0, generator="material"),
        # significant but small: effect 2 x 0.01 = 0.02
        row("small", 0.51, 0.5, 0.002, p=1e-6, scale=2.0, generator="small"),
        # not significant
        row("none", 0.501, 0.5, 0.01, p=0.46, scale=2.0, generator="none"),
    ])
    table = risk_table(evidence, Policy()).set_index("generator")
    assert table.loc["material", "level"] == LEVELS["at_risk"]
    assert table.loc["material", "effect_low"] > 0.09
    assert table.loc["small", "level"] == LEVELS["detectable"]
    assert table.loc["small", "verdict"].startswith("detectable, below the policy threshold")
    assert table.loc["none", "level"] == LEVELS["no_evidence"]
    # what the audit could have detected: (z_{1-alpha} + z_{0.8}) x the effect's standard error
    assert table.loc["none", "detectable_effect"] == pytest.approx((norm.ppf(0.95) + norm.ppf(0.8)) * 0.02, rel=1e-3)
    assert "with 80% power this audit detects an effect of 0.050" in table.loc["none", "verdict"]
    # a stricter policy turns the material risk into a detectable one
    strict = risk_table(evidence, policy_from_mapping({"thresholds": {"membership": 0.5}})).set_index("generator")
    assert strict.loc["material", "level"] == LEVELS["detectable"] and strict.loc["material", "threshold"] == 0.5


def test_the_strongest_attack_is_chosen_on_the_common_scale_with_a_simultaneous_bound():
    # Raw excess 0.15 on a rate (scale 1) against 0.10 on an AUC (scale 2, effect 0.20): the AUC is stronger.
    evidence = pd.DataFrame([row("rate", 0.40, 0.25, 0.01, p=1e-8, scale=1.0), row("auc", 0.60, 0.5, 0.01, p=1e-8, scale=2.0)])
    best = risk_table(evidence).iloc[0]
    assert best["attack"] == "auc" and best["effect"] == pytest.approx(0.2)
    # the bound is simultaneous over both attacks: wider than the attack's own 95% interval
    assert best["effect_low"] < 0.2 - 2 * 1.959964 * 0.01 + 1e-12
    assert best["effect_low"] == pytest.approx(0.2 - norm.ppf(1 - 0.05 / 4) * 0.02)


def test_each_verdict_cell_shows_the_policy_it_was_judged_by():
    """The report's matrix states, in each cell and not only in its hover text, the threshold and
    family-wise level; a "no evidence" cell also what the run could have detected."""
    from synthrisk.report.verdicts import verdict_matrix_html

    evidence = pd.DataFrame([row("big", 0.70, 0.5, 0.01, p=1e-9, scale=2.0, generator="material"),
                             row("none", 0.501, 0.5, 0.01, p=0.46, scale=2.0, generator="none")])
    policy = policy_from_mapping({"alpha": 0.01, "thresholds": {"membership": 0.2}})
    table = risk_table(evidence, policy)
    page = verdict_matrix_html(table)
    cells = page.split("<tr>")[1:]
    material, none = (next(c for c in cells if f"<th>{g}</th>" in c) for g in ("material", "none"))
    assert "threshold 0.2; Holm at 0.01" in material and "would detect" not in material
    detectable = table.set_index("generator").loc["none", "detectable_effect"]
    assert f"threshold 0.2; Holm at 0.01; would detect an effect of {detectable:.3f}" in none
    # rows without the policy's columns (the audit page's matrix) show none
    assert "Holm at" not in verdict_matrix_html(table.drop(columns=["threshold", "alpha"]))


def test_the_report_states_the_runs_own_policy():
    """The workflow report's policy sentence is the configured policy's, not the default's (the
    tiny run's report shows the default's: tests/workflow/test_measures_workflow.py)."""
    from synthrisk.report.html import policy_statement

    custom = {"alpha": 0.01, "power": 0.9, "thresholds": {"membership": 0.2}, "source": "our data access committee"}
    stated = policy_statement({"policy": custom})
    assert "family-wise level 0.01" in stated and "membership inference 0.2" in stated and "90% power" in stated
    assert "our data access committee" in stated and "Policy 0070" not in stated
    assert policy_statement({}) == Policy().statement()


def test_the_report_quotes_the_calibration_study_per_dataset_and_measured_risk():
    from synthrisk import calibrated_power
    from synthrisk.report.html import calibrated_power_statements

    risk = pd.DataFrame({"dataset": ["adult", "adult", "sim"], "generator": "g",
                         "risk": ["membership", "linkability", "membership"]})
    config = {"datasets": {"adult": {"n_train": 9000}, "sim": {"n_train": 800}}}
    found = calibrated_power_statements(risk, config)
    assert [(e["dataset"], e["risk"]) for e in found] == [("adult", "membership inference"), ("adult", "linkability"),
                                                          ("sim", "membership inference")]
    assert found[0]["statement"] == calibrated_power.statement("membership", 9000, yours="this run trains on")
    assert "10,000 training records per split" in found[0]["statement"] and "this run trains on 9,000" in found[0]["statement"]
    # the policy's power, not a fixed 80 %
    stricter = calibrated_power_statements(risk, {**config, "policy": {"power": 0.95}})
    assert "at least 95% power" in stricter[0]["statement"] or "did not reach 95% power" in stricter[0]["statement"]
    assert "1,000 training records per split" in found[2]["statement"]
    # a dataset the config does not size (none here) is left out rather than guessed
    assert calibrated_power_statements(risk, {"datasets": {}}) == []
    # a policy at another family-wise level than the study's: its power is not quoted
    assert calibrated_power_statements(risk, {**config, "policy": {"alpha": 0.01}}) == []
    assert "family-wise level 0.05, 300 attacks per control-set risk" in found[0]["statement"]


def test_a_missing_p_value_is_derived_from_the_interval():
    decided = decisions(pd.DataFrame([row("plugin", 0.53, 0.5, 0.01)]))
    assert decided["p"].iloc[0] == pytest.approx(norm.sf(3.0), rel=1e-4)


def test_a_zero_width_interval_is_a_certain_effect_not_a_missing_one():
    # An attack that separates every member from every holdout record: AUC 1, Hanley-McNeil [1, 1].
    perfect = row("perfect", 1.0, 0.5, 0.0, scale=2.0)
    table = risk_table(pd.DataFrame([perfect])).iloc[0]
    assert table["level"] == LEVELS["at_risk"] and table["effect_low"] == pytest.approx(1.0)
    # ... and a certain value at its reference beats nothing
    level = risk_table(pd.DataFrame([row("flat", 0.5, 0.5, 0.0, scale=2.0)])).iloc[0]["level"]
    assert level == LEVELS["no_evidence"]


def test_holm_keeps_the_family_wise_rate_under_the_null_where_any_attack_does_not():
    """Four null attacks per release, 2,000 releases: 'any attack beats its reference' without a
    correction is wrong ~19% of the time; with Holm at most alpha."""
    rng = np.random.default_rng(1)
    rows = []
    for release in range(2000):
        for attack in range(4):
            z = rng.normal()
            rows.append(row(f"a{attack}", 0.5 + 0.01 * z, 0.5, 0.01, p=float(norm.sf(z)), generator=f"r{release}"))
    evidence = pd.DataFrame(rows)
    decided = decisions(evidence)
    any_raw = (decided.assign(raw=decided["p"] <= 0.05).groupby("generator")["raw"].any()).mean()
    table = risk_table(evidence)
    false_risks = (table["level"] != LEVELS["no_evidence"]).mean()
    assert any_raw > 0.15
    assert false_risks <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000)


@pytest.mark.parametrize("raw, message", [
    ({"alpha": 1.5}, "policy.alpha"),
    ({"thresholds": {"membership": -0.1}}, "policy.thresholds.membership"),
    ({"thresholds": {"reidentification": 0.1}}, "unknown risk 'reidentification'"),
    ({"level": 0.05}, "unknown key(s) ['level']"),
    ([0.05], "must be a mapping"),
])
def test_bad_policies_are_refused_naming_the_key(raw, message):
    with pytest.raises(ConfigError, match=None) as exc:
        policy_from_mapping(raw)
    assert message in str(exc.value)


def test_policy_file_and_statement(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("alpha: 0.01\nthresholds: {membership: 0.2}\nsource: our data access committee\n")
    policy = load_policy(path)
    assert policy.alpha == 0.01 and policy.threshold("membership") == 0.2 and policy.threshold("linkability") == 0.09
    assert "our data access committee" in policy.statement() and "0.01" in policy.statement()
    with pytest.raises(ConfigError, match="--policy"):
        load_policy(tmp_path / "nope.yaml")


def test_the_workflow_config_refuses_a_bad_policy():
    from synthrisk.config import check_config

    with pytest.raises(ConfigError, match="config: policy.alpha"):
        check_config({"seeds": [0], "datasets": {}, "generators": {}, "policy": {"alpha": 0}})


def test_an_asymmetric_interval_keeps_its_shape_at_the_simultaneous_level():
    # A score interval (the control-set risks', RAPID's member excess) reaching further below its
    # value than above: the simultaneous lower bound is rescaled from the lower side alone.
    skewed = dict(row("score", 0.30, 0.0, 0.0, p=1e-6), ci_low=0.30 - 0.25, ci_high=0.30 + 0.05)
    decided = decisions(pd.DataFrame([skewed, row("other", 0.1, 0.0, 0.05, p=0.2)])).set_index("attack")
    z = norm.ppf(1 - 0.05 / 4)  # two attacks in the family
    assert decided.loc["score", "effect_low"] == pytest.approx(0.30 - z * 0.25 / 1.959964, rel=1e-5)
    assert decided.loc["score", "effect_high"] == pytest.approx(0.30 + z * 0.05 / 1.959964, rel=1e-5)
    # alone, its lower bound 0.05 is below the threshold 0.09: "detectable"; the symmetric interval
    # of the same width (+- 0.15) would have put it at 0.15, "at risk"
    assert risk_table(pd.DataFrame([skewed])).iloc[0]["level"] == LEVELS["detectable"]
    symmetric = dict(skewed, ci_low=0.30 - 0.15, ci_high=0.30 + 0.15)
    assert risk_table(pd.DataFrame([symmetric])).iloc[0]["level"] == LEVELS["at_risk"]
