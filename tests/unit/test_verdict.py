"""The verdict a steward acts on (issues #26, #42): Holm over a risk's attacks, effects on one scale
with simultaneous intervals, a decision against the policy threshold with three outcomes (at risk,
below the threshold, inconclusive) at a per-audit level, and the audit's answer. Checked the way
it is used: the error rates of the decision are simulated at the null and at the threshold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from synthrisk.errors import ConfigError
from synthrisk.measures.base import RISKS
from synthrisk.measures.policy import LEVELS, Policy, load_policy, policy_from_mapping
from synthrisk.measures.verdict import decisions, release_answer, risk_table

#: the level of one risk under the default policy (Holm): the audit's 0.05 over its four risks; the
#: one-sided level of its lower bounds: 0.05 of the audit's 0.05 over the four risks (naming spends 0.9
#: of it, the rare-copies test 0.05); of every attack's upper bound: the audit's 0.05, unsplit
RISK_ALPHA = 0.05 / 4
LOWER_ALPHA = 0.05 * 0.05 / 4
UPPER_ALPHA = 0.05
RISKS_ORDER = list(RISKS)


def test_the_audits_level_is_spent_once_by_the_names_and_the_bounds():
    for alpha in (0.05, 0.01, 0.2):
        policy = Policy(alpha=alpha)
        assert policy.naming_fdr + policy.rare_copies_level + 4 * policy.lower_alpha == pytest.approx(alpha)
    assert (Policy().naming_fdr, Policy().rare_copies_level, Policy().lower_alpha) == pytest.approx(
        (0.045, 0.0025, LOWER_ALPHA))


def row(attack, value, reference, se, p=None, scale=1.0, risk="membership", generator="g", n_seeds=1):
    return {"dataset": "d", "generator": generator, "risk": risk, "measure": "m", "attack": attack, "metric": "x",
            "value": value, "reference": reference, "ci_low": value - 1.959964 * se, "ci_high": value + 1.959964 * se,
            "n_seeds": n_seeds, "n_seeds_beating": 0, "tpr_at_1e-02": np.nan, "tpr_at_1e-03": np.nan, "detail": "",
            "p_value": np.nan if p is None else p, "effect_scale": scale}


def test_three_outcomes_against_the_policy_threshold():
    evidence = pd.DataFrame([
        # effect 2 x 0.2 = 0.4, tight interval: above the threshold 0.09
        row("big", 0.70, 0.5, 0.01, p=1e-9, scale=2.0, generator="material"),
        # significant but small: effect 0.02, upper bound far below 0.09
        row("small", 0.51, 0.5, 0.002, p=1e-6, scale=2.0, generator="small"),
        # the case: 10 % member copies, effect 0.144 [0.064, 0.224] at 95 %: it straddles 0.09
        row("copies", 0.572, 0.5, 0.0204, p=1e-4, scale=2.0, generator="copies"),
        # nothing beats its reference, but the interval is too wide to rule the threshold out
        row("wide", 0.51, 0.5, 0.05, p=0.42, scale=2.0, generator="wide"),
    ])
    table = risk_table(evidence, Policy()).set_index("generator")
    assert table.loc["material", "level"] == LEVELS["at_risk"] and table.loc["material", "effect_low"] > 0.09
    assert table.loc["small", "level"] == LEVELS["below"] and table.loc["small", "effect_high"] < 0.09
    assert table.loc["small", "verdict"].startswith("below the threshold") and table.loc["small", "beats"]
    # a point estimate above the threshold is never read as below it
    copies = table.loc["copies"]
    assert copies["level"] == LEVELS["inconclusive"] and copies["effect"] == pytest.approx(0.144)
    z, z_low = norm.ppf(1 - UPPER_ALPHA), norm.ppf(1 - LOWER_ALPHA)
    assert copies["effect_low"] == pytest.approx(0.144 - z_low * 2 * 0.0204, rel=1e-6)
    # what decides it: (half-width / distance to the threshold)^2 times the records
    assert copies["decide_factor"] == pytest.approx((z_low * 2 * 0.0204 / (0.144 - 0.09)) ** 2, rel=1e-6)
    assert f"about {copies['decide_factor']:.1f} times the records would decide it" in copies["verdict"]
    wide = table.loc["wide"]
    assert wide["level"] == LEVELS["inconclusive"] and not wide["beats"]
    assert wide["decide_factor"] == pytest.approx((z * 0.1 / (0.09 - 0.02)) ** 2, rel=1e-6)
    # what the audit could have detected: (z_{1-risk alpha} + z_{0.8}) x the effect's standard error
    assert wide["detectable_effect"] == pytest.approx((norm.ppf(1 - RISK_ALPHA) + norm.ppf(0.8)) * 0.1, rel=1e-3)
    # a laxer threshold moves the large effect below it
    lax = risk_table(evidence, policy_from_mapping({"thresholds": {"membership": 0.5}})).set_index("generator")
    assert lax.loc["material", "level"] == LEVELS["below"] and lax.loc["material", "threshold"] == 0.5


def test_an_attack_without_an_interval_is_never_below_the_threshold():
    bare = dict(row("bare", 0.51, 0.5, 0.01, p=0.3), ci_low=np.nan, ci_high=np.nan)
    table = risk_table(pd.DataFrame([row("tight", 0.501, 0.5, 0.001, p=0.3), bare])).iloc[0]
    assert table["level"] == LEVELS["inconclusive"] and table["attack"] == "bare"


def test_an_identified_member_makes_the_risk_at_risk_whatever_the_average():
    quiet = dict(row("exposure", 0.52, 0.5, 0.01, p=0.02, scale=2.0), n_identified=3)
    table = risk_table(pd.DataFrame([quiet, row("other", 0.5, 0.5, 0.01, p=0.5, scale=2.0)])).iloc[0]
    assert table["level"] == LEVELS["at_risk"] and table["n_identified"] == 3 and table["attack"] == "exposure"
    assert "identifies 3 members" in table["verdict"]


def test_the_audits_answer_is_yes_only_when_every_risk_is_below_its_threshold():
    below = dict.fromkeys(RISKS, LEVELS["below"])
    assert release_answer(below) == "yes"
    assert release_answer({**below, "linkability": LEVELS["at_risk"]}) == "no"
    assert release_answer({**below, "membership": LEVELS["inconclusive"]}) == "inconclusive"
    assert release_answer({**below, "membership": "not measured"}) == "inconclusive"
    assert release_answer({**below, "membership": LEVELS["inconclusive"], "linkability": LEVELS["at_risk"]}) == "no"


def test_the_strongest_attack_is_chosen_on_the_common_scale_with_a_simultaneous_bound():
    # Raw excess 0.15 on a rate (scale 1) against 0.10 on an AUC (scale 2, effect 0.20): the AUC is stronger.
    evidence = pd.DataFrame([row("rate", 0.40, 0.25, 0.01, p=1e-8, scale=1.0), row("auc", 0.60, 0.5, 0.01, p=1e-8, scale=2.0)])
    best = risk_table(evidence).iloc[0]
    assert best["attack"] == "auc" and best["effect"] == pytest.approx(0.2)
    # the bound is simultaneous over both attacks at the risk's level: wider than the attack's own 95% interval
    assert best["effect_low"] < 0.2 - 2 * 1.959964 * 0.01 + 1e-12
    assert best["effect_low"] == pytest.approx(0.2 - norm.ppf(1 - LOWER_ALPHA / 2) * 0.02)


def test_each_verdict_cell_shows_the_policy_it_was_judged_by():
    """The report's matrix states, in each cell and not only in its hover text, the threshold and
    the risk's level; an inconclusive cell also how many times the records would decide it."""
    from synthrisk.report.verdicts import verdict_matrix_html

    evidence = pd.DataFrame([row("big", 0.70, 0.5, 0.01, p=1e-9, scale=2.0, generator="material"),
                             row("open", 0.55, 0.5, 0.03, p=0.05, scale=2.0, generator="open")])
    policy = policy_from_mapping({"alpha": 0.01, "thresholds": {"membership": 0.2}})
    table = risk_table(evidence, policy)
    page = verdict_matrix_html(table)
    cells = page.split("<tr>")[1:]
    material, open_ = (next(c for c in cells if f"<th>{g}</th>" in c) for g in ("material", "open"))
    assert "threshold 0.2; Holm at 0.0025" in material and "would decide" not in material
    factor = table.set_index("generator").loc["open", "decide_factor"]
    assert f"threshold 0.2; Holm at 0.0025; about {factor:.1f} times the records would decide it" in open_
    # rows without the policy's columns (the audit page's matrix) show none
    assert "level 0.0025" not in verdict_matrix_html(table.drop(columns=["threshold", "alpha"]))


def test_the_report_states_the_runs_own_policy():
    """The workflow report's policy sentence is the configured policy's, not the default's (the
    tiny run's report shows the default's: tests/workflow/test_measures_workflow.py)."""
    from synthrisk.report.html import policy_statement

    custom = {"alpha": 0.01, "power": 0.9, "thresholds": {"membership": 0.2}, "source": "our data access committee"}
    stated = policy_statement({"policy": custom})
    assert "family-wise level 0.01" in stated and "membership inference 0.2" in stated and "90% power" in stated
    assert "our data access committee" in stated and "Policy 0070" not in stated
    assert policy_statement({}) == Policy().statement()


def test_the_report_quotes_the_calibration_study_only_at_the_level_it_was_read_at():
    """The published study read each risk at 0.05; the shipped audit reads a risk at 0.05 / 4. Its
    power is quoted only for a policy whose risks are read at the study's level."""
    from synthrisk.measures import calibrated_power
    from synthrisk.report.html import calibrated_power_statements

    risk = pd.DataFrame({"dataset": ["adult", "adult", "sim"], "generator": "g",
                         "risk": ["membership", "linkability", "membership"]})
    config = {"datasets": {"adult": {"n_train": 9000}, "sim": {"n_train": 800}}}
    assert calibrated_power_statements(risk, config) == []  # the default policy: another level
    study_level = {**config, "policy": {"alpha": 0.2}}  # 0.2 / 4 risks = the study's 0.05
    found = calibrated_power_statements(risk, study_level)
    assert [(e["dataset"], e["risk"]) for e in found] == [("adult", "membership inference"), ("adult", "linkability"),
                                                          ("sim", "membership inference")]
    assert found[0]["statement"] == calibrated_power.statement("membership", 9000, yours="this run trains on")
    assert "10,000 training records per split" in found[0]["statement"] and "this run trains on 9,000" in found[0]["statement"]
    # the policy's power, not a fixed 80 %
    stricter = calibrated_power_statements(risk, {**study_level, "policy": {"alpha": 0.2, "power": 0.95}})
    assert "at least 95% power" in stricter[0]["statement"] or "did not reach 95% power" in stricter[0]["statement"]
    assert "1,000 training records per split" in found[2]["statement"]
    # a dataset the config does not size (none here) is left out rather than guessed
    assert calibrated_power_statements(risk, {"datasets": {}, "policy": {"alpha": 0.2}}) == []
    assert "family-wise level 0.05, 300 attacks per control-set risk" in found[0]["statement"]


def test_a_missing_p_value_is_derived_from_the_interval():
    decided = decisions(pd.DataFrame([row("plugin", 0.53, 0.5, 0.01)]))
    assert decided["p"].iloc[0] == pytest.approx(norm.sf(3.0), rel=1e-4)


def test_a_zero_width_interval_is_a_certain_effect_not_a_missing_one():
    # An attack that separates every member from every holdout record: AUC 1, Hanley-McNeil [1, 1].
    perfect = row("perfect", 1.0, 0.5, 0.0, scale=2.0)
    table = risk_table(pd.DataFrame([perfect])).iloc[0]
    assert table["level"] == LEVELS["at_risk"] and table["effect_low"] == pytest.approx(1.0)
    # ... and a certain value at its reference beats nothing and is below any threshold
    flat = risk_table(pd.DataFrame([row("flat", 0.5, 0.5, 0.0, scale=2.0)])).iloc[0]
    assert flat["level"] == LEVELS["below"] and not flat["beats"]


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
    false_beats = table["beats"].mean()
    assert any_raw > 0.15
    assert false_beats <= RISK_ALPHA + 3 * np.sqrt(RISK_ALPHA * (1 - RISK_ALPHA) / 2000)
    assert (table["level"] == LEVELS["at_risk"]).sum() == 0


def test_the_decision_errs_at_most_at_the_audits_level_at_the_threshold_and_at_the_null():
    """Four risks of three attacks per audit. A false "yes" needs every risk below its threshold, so
    its worst case is one attack at the threshold and every other attack far below it: the audit says
    yes in at most the audit's level (0.05), and close to it, since "below" reads each upper bound at
    that level, unsplit (an intersection-union test). With every attack at the threshold, a risk is
    below it in about 0.05^3 of audits. With every true effect 0, no risk is called at risk, and "any
    risk beats its reference" stays within the audit's level (Bonferroni over the risks)."""
    rng = np.random.default_rng(3)
    se = 0.02  # on the effect scale (scale 1)

    def audits(effect, n, lone=None):
        rows = []
        for audit in range(n):
            for risk in RISKS:
                for attack in range(3):
                    true = lone if (lone is not None and risk == RISKS_ORDER[0] and attack == 0) else effect
                    value = true + se * rng.normal()
                    rows.append(row(f"a{attack}", value, 0.0, se, p=float(norm.sf(value / se)), risk=risk,
                                    generator=f"r{audit}"))
        return risk_table(pd.DataFrame(rows))

    def yes_rate(table):
        answers = table.groupby("generator").apply(lambda t: release_answer(dict(zip(t["risk"], t["level"]))),
                                                   include_groups=False)
        return float((answers == "yes").mean())

    # one attack at the threshold, the rest of the audit clearly below it (true effect -0.2)
    lone = audits(-0.2, 1000, lone=0.09)
    assert (lone[lone["risk"] != RISKS_ORDER[0]]["level"] == LEVELS["below"]).all()
    rate, tolerance = yes_rate(lone), 3 * np.sqrt(UPPER_ALPHA * (1 - UPPER_ALPHA) / 1000)
    assert UPPER_ALPHA - tolerance <= rate <= UPPER_ALPHA + tolerance
    at = audits(0.09, 400)
    assert (at["level"] == LEVELS["below"]).mean() <= UPPER_ALPHA ** 3 + 3 * np.sqrt(UPPER_ALPHA ** 3 / 1600)
    assert yes_rate(at) == 0
    null = audits(0.0, 400)
    assert (null["level"] == LEVELS["at_risk"]).sum() == 0
    any_beats = null.groupby("generator")["beats"].any().mean()
    assert any_beats <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)


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
    from synthrisk.study.config import check_config

    with pytest.raises(ConfigError, match="config: policy.alpha"):
        check_config({"seeds": [0], "datasets": {}, "generators": {}, "policy": {"alpha": 0}})


def test_an_asymmetric_interval_keeps_its_shape_at_the_simultaneous_level():
    # A score interval (the control-set risks', RAPID's member excess) reaching further below its
    # value than above: the simultaneous lower bound is rescaled from the lower side alone.
    skewed = dict(row("score", 0.30, 0.0, 0.0, p=1e-6), ci_low=0.30 - 0.25, ci_high=0.30 + 0.05)
    decided = decisions(pd.DataFrame([skewed, row("other", 0.1, 0.0, 0.05, p=0.2)])).set_index("attack")
    # two attacks in the family: the lower bound is simultaneous over both, the upper one per attack
    z_low, z_high = norm.ppf(1 - LOWER_ALPHA / 2), norm.ppf(1 - UPPER_ALPHA)
    assert decided.loc["score", "effect_low"] == pytest.approx(0.30 - z_low * 0.25 / 1.959964, rel=1e-5)
    assert decided.loc["score", "effect_high"] == pytest.approx(0.30 + z_high * 0.05 / 1.959964, rel=1e-5)
    # alone, its lower bound (-0.09) is below the threshold 0.09: inconclusive; a symmetric interval
    # of +- 0.10 would have put it at 0.15, "at risk"
    assert risk_table(pd.DataFrame([skewed])).iloc[0]["level"] == LEVELS["inconclusive"]
    symmetric = dict(skewed, ci_low=0.30 - 0.10, ci_high=0.30 + 0.10)
    assert risk_table(pd.DataFrame([symmetric])).iloc[0]["level"] == LEVELS["at_risk"]


def test_what_decides_an_inconclusive_risk_is_what_its_slowest_attack_needs():
    """The attack shown (largest upper bound) is not always the one that needs the most records: an
    estimate close under the threshold needs more than a wide interval around 0."""
    close, wide = row("close", 0.085, 0.0, 0.0044, p=1e-6), row("wide", 0.0, 0.0, 0.06, p=0.5)
    table = risk_table(pd.DataFrame([close, wide])).iloc[0]
    assert table["level"] == LEVELS["inconclusive"] and table["attack"] == "wide"
    decided = decisions(pd.DataFrame([close, wide])).set_index("attack")
    needs = {a: ((decided.loc[a, "effect_high"] - decided.loc[a, "effect"]) / (0.09 - decided.loc[a, "effect"])) ** 2
             for a in ("close", "wide")}
    assert needs["close"] > needs["wide"] and table["decide_factor"] == pytest.approx(needs["close"])
