"""What the audit says about a risk's strongest attack in words is asked of its measure (issue #29:
`explain`); who the attack got right and whom it names comes with its run as data (issue #43: the
run's outcomes, `OUTCOME_COLUMNS`), as do the run that holds them (`unit`) and whether it reads the
members against the holdout (`reads_holdout`) with its evidence row, so the audit does not ask back.
A plug-in's own sentence, outcomes and evidence reach the audit's risk entry; every built-in risk
measure words its own attack, and its outcomes follow its own attack's score."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from synthrisk.data.schema import DatasetSchema
from synthrisk.measures import EVIDENCE_COLUMNS, Measure, builtin_measures
from synthrisk.measures.base import hit_outcomes, member_outcomes
from synthrisk.measures.mia import attack_outcomes
from synthrisk.measures.policy import LEVELS
from synthrisk.measures.runner import Outcome, UnitRun
from synthrisk.measures.singling_out import isolated_members
from synthrisk.measures.verdict import risk_table, with_defaults
from synthrisk.measures.wording import generic
from synthrisk.release_audit import explain, named
from synthrisk.release_audit.report import risk_entries

SENTENCE = "The echo attack repeats {value:.0%} of the training records word for word."


class Echo(Measure):
    """A plug-in membership measure with hooks of its own, one unit per column (not registered:
    the registry is shared by the process)."""

    name = "echo"
    title = "Echo"
    risk = "membership"

    def units(self, schema, settings):
        return ["a", "b"]

    def explain(self, row):
        return SENTENCE.format(value=float(row["value"]))


class Plain(Measure):
    """A plug-in that words nothing of its own."""

    name = "plain"
    title = "Plain"
    risk = "singling_out"


def evidence(measure: str, risk: str, attack: str, value: float, reference: float, se: float, p: float,
             **optional) -> pd.DataFrame:
    """One evidence row as a plug-in's `evidence` gives it: without the optional columns unless given."""
    row = {"dataset": "audit", "generator": "release", "risk": risk, "measure": measure, "attack": attack,
           "metric": "echo rate", "value": value, "reference": reference, "ci_low": value - 1.96 * se,
           "ci_high": value + 1.96 * se, "n_seeds": 1, "n_seeds_beating": 1, "tpr_at_1e-02": np.nan,
           "tpr_at_1e-03": np.nan, "detail": "", "p_value": p, **optional}
    return pd.DataFrame([row])[[c for c in EVIDENCE_COLUMNS if c in row]]


@pytest.fixture
def members() -> tuple[pd.DataFrame, DatasetSchema]:
    """200 members; the echo attack gets the 'young' ones right far more often than the others."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"row_id": np.arange(200), "age": np.repeat(["young", "old"], 100),
                          "zip": rng.choice(["1", "2"], 200), "income": rng.choice(["low", "high"], 200)})
    schema = DatasetSchema.from_dict({
        "name": "toy", "source": {"frame": "test"},
        "columns": {"age": {"type": "categorical"}, "zip": {"type": "categorical"}, "income": {"type": "categorical"}},
        "quasi_identifiers": ["age", "zip"], "sensitive": ["income"]})
    return frame, schema


def outcome(measure: Measure, unit: str, records: pd.DataFrame, tmp_path) -> Outcome:
    """A finished run held in memory, as the audit holds its runs, with the outcomes its `run` gives:
    the echoed members are the attack's hits."""
    hits = member_outcomes(f"echo {unit}", records["row_id"], records["echoed"])
    return Outcome(UnitRun(measure, None, unit), "ok", None, 0.1, {"status": "ok", "error": None}, records, hits)


def test_a_plugin_measures_own_hooks_reach_the_audit_risk_entry(members, tmp_path):
    frame, schema = members
    echo = Echo()
    risks = risk_table(evidence("echo", "membership", "echo b", 0.40, 0.0, 0.02, 1e-9, unit="b"))
    # the run of unit 'a' names its attack alike but holds other outcomes
    assert risks["level"].iloc[0] == LEVELS["at_risk"]
    echoed = np.r_[np.arange(100) % 10 < 8, np.arange(100) % 10 < 1]  # young: 80%, old: 10%
    records = frame[["row_id"]].assign(member=1, echoed=echoed)
    # The run of unit 'a' holds other records: the entry must read unit b's, which the evidence row names.
    runs = [outcome(echo, "a", records.assign(echoed=False), tmp_path), outcome(echo, "b", records, tmp_path)]
    runs[0] = dataclasses.replace(runs[0], outcomes=runs[0].outcomes.assign(attack="echo b"))
    data = SimpleNamespace(members=frame, schema=schema, checks={"same_population": {"differs": False}})
    exposed = named.exposed(risks, named.all_outcomes(runs), pd.DataFrame(columns=named.PERSON), frame, schema)
    entry = next(e for e in risk_entries(risks, exposed, runs, {"echo": (echo, echo.Settings())}, data)
                 if e["risk"] == "membership")
    assert entry["meaning"].startswith("The echo attack repeats 40% of the training records word for word. ")
    assert "the release is at risk of membership inference" in entry["meaning"]
    top = entry["subgroups"][0]
    assert (top["column"], top["group"], top["n"], top["n_exposed"]) == ("age", "young", 100, 80)
    assert top["share_exposed_overall"] == pytest.approx(0.45)
    assert entry["unreliable"] is None
    # A membership attack reads the members against the holdout by default: another population
    # makes its verdict unreliable.
    data.checks = {"same_population": {"differs": True, "auc": 0.9, "p_value": 0.001}}
    entry = next(e for e in risk_entries(risks, exposed, runs, {"echo": (echo, echo.Settings())}, data)
                 if e["risk"] == "membership")
    assert entry["unreliable"] and "(unreliable:" in entry["verdict"]


def test_a_plugin_without_hooks_gets_the_generic_sentence_and_no_subgroups(members):
    frame, schema = members
    row = risk_table(evidence("plain", "singling_out", "plain query", 0.30, 0.0, 0.02, 1e-9)).iloc[0].to_dict()
    plain = Plain()
    assert explain.meaning(row, plain).startswith("plain query: echo rate 0.3 against its reference 0. ")
    assert named.subgroups(named.outcomes_of(row, named.all_outcomes([])), frame, schema) == []
    # no unit, and a singling-out attack that says nothing of the holdout does not read it
    assert row["unit"] == "" and not row["reads_holdout"]


ROWS = {
    "rapid": [{"attack": "rf -> income", "metric": "RAPID member excess", "value": 0.05, "reference": 0.0},
              {"attack": "rf -> income", "metric": "RAPID", "value": 0.45, "reference": 0.30}],
    "mia": [{"attack": "kde_realistic", "metric": "AUC", "value": 0.62, "reference": 0.5, "tpr_at_1e-02": 0.05}],
    "domias": [{"attack": "DOMIAS", "metric": "AUC", "value": 0.61, "reference": 0.5}],
    "dcr": [{"attack": "DCR closer to members", "metric": "share closer to members", "value": 0.55, "reference": 0.5}],
    "singling_out": [{"attack": "singling out (univariate)", "metric": "risk vs control", "value": 0.1,
                      "reference": 0.0}],
    "linkability": [{"attack": "linkability (1 neighbour)", "metric": "risk vs control", "value": 0.1,
                     "reference": 0.0}],
    "inference": [{"attack": "nearest synthetic record -> income", "metric": "risk vs control", "value": 0.1,
                   "reference": 0.0}],
}


def test_every_builtin_risk_measure_words_its_own_attack():
    risky = {name: m for name, m in builtin_measures().items() if m.risk}
    assert set(ROWS) <= set(risky)
    for name, measure in risky.items():
        assert type(measure).explain is not Measure.explain, f"{name} falls back to the generic sentence"
        for row in ROWS.get(name, []):
            row = {"measure": name, "risk": measure.risk, "ci_low": None, "ci_high": None, **row}
            sentence = measure.explain(row)
            assert sentence and sentence != generic(row), name


def test_rapid_names_its_unit_and_reads_the_holdout_only_for_the_member_excess():
    rapid = builtin_measures()["rapid"]
    table = pd.DataFrame({"dataset": "audit", "generator": "release", "attacker": ["rf", "logit"],
                          "sensitive": "income", "rapid_mean": [0.45, 0.40], "chance_floor_mean": 0.30,
                          "ci_low_min": 0.40, "ci_high_max": 0.50, "n_seeds": 1, "n_seeds_beating_chance": 1,
                          "member_excess_mean": [0.05, np.nan]})
    rows = rapid.evidence({"rapid": table})
    assert rows["unit"].tolist() == ["rf-income", "logit-income"]
    # the member excess reads the members against the holdout; RAPID against its floor does not
    assert rows["reads_holdout"].tolist() == [True, False]
    excess = {"risk": "attribute_inference", **ROWS["rapid"][0]}
    # the member excess's sentence says what population-level inference is and what a steward can do
    sentence = rapid.explain(excess)
    assert "not a leak of the training records" in sentence and "leave out the quasi-identifiers" in sentence


def test_membership_attacks_read_the_holdout_by_default_and_the_control_set_measures_say_so():
    bare = evidence("echo", "membership", "echo", 0.4, 0.0, 0.02, 1e-9)
    other = evidence("plain", "singling_out", "plain", 0.3, 0.0, 0.02, 1e-9)
    assert with_defaults(pd.concat([bare, other]))["reads_holdout"].tolist() == [True, False]
    measures = builtin_measures()
    for name in ("singling_out", "linkability", "inference"):
        # their control set is the holdout: another population's holdout makes them unreliable too
        table = pd.DataFrame({"dataset": ["audit"], "generator": "release", "attack": f"{name} attack",
                              "risk_mean": 0.1, "n_seeds": 1, "n_seeds_beating": 1})
        rows = measures[name].evidence({name: table})
        assert rows["reads_holdout"].tolist() == [True] and "unit" not in rows, name


def test_membership_names_the_members_by_the_winning_attacks_own_score_never_the_oracles():
    """Issue #42: the page's exposed members came from the true-distribution KDE oracle (it reads the
    member and holdout labels) even when Method 1 won. Here the oracle and Method 1 disagree about
    every member: each attack's outcomes follow its own score, and the oracle has none."""
    n = 200
    member = np.r_[np.ones(n), np.zeros(n)].astype(int)
    distance = np.r_[np.zeros(10), np.ones(n - 10), np.linspace(0.5, 2.0, n)]  # 10 copied members
    oracle = np.r_[np.linspace(0, 0.1, n), np.linspace(0, 0.5, n)]  # would flag no member at FPR 1e-2
    realistic = np.r_[np.full(n - 5, 0.1), np.full(5, 0.99), np.full(n, 0.2)]
    records = pd.DataFrame({"row_id": np.arange(2 * n), "member": member, "distance": distance,
                            "p_member_true": oracle, "p_member_realistic": realistic})
    outcomes = attack_outcomes(records)
    method1 = outcomes[outcomes["attack"] == "method1"]
    assert method1["row_id"].tolist() == list(range(n)) and method1["hit"].tolist() == [True] * 10 + [False] * (n - 10)
    kde = outcomes[outcomes["attack"] == "kde_realistic"]
    assert kde["hit"].sum() == 5 and kde["hit"].iloc[-5:].all()
    assert set(outcomes["attack"]) == {"method1", "kde_realistic"} and not outcomes["named"].any()


def test_the_members_an_attack_got_right_follow_its_own_records():
    """The outcomes feed the people named under singling out, linkability and inference
    (release_audit.named): singling out's are the members a query of its own mode isolated, never a
    control record, once each; linkability's the members it linked."""
    queries = pd.DataFrame({"mode": ["univariate"] * 3 + ["multivariate"] * 4, "query": [0, 1, 2, 0, 1, 2, 3],
                            "member": [True, True, False, True, False, True, True],
                            "singled_out": [True, False, True, True, True, True, True],
                            "row_id": pd.array([4, pd.NA, 9, 5, 6, 5, 7], dtype="Int64")})
    univariate = isolated_members(queries[queries["mode"] == "univariate"], "singling out (univariate)")
    assert univariate["row_id"].tolist() == [4] and univariate["hit"].all()
    assert isolated_members(queries[queries["mode"] == "multivariate"], "m")["row_id"].tolist() == [5, 7]
    links = pd.DataFrame({"row_id": [1, 2, 3, 4], "member": [True, True, False, False],
                          "linked": [True, False, True, False]})
    linked = hit_outcomes(links, "linked", "linkability (1 neighbour)")
    assert linked["row_id"].tolist() == [1, 2] and linked["hit"].tolist() == [True, False]


def test_a_verdict_row_reads_the_outcomes_of_its_own_measure_unit_and_attack():
    runs = [Outcome(UnitRun(Plain(), None, None), "ok", None, 0.1, {}, pd.DataFrame(),
                    member_outcomes("plain query", [1, 2], [True, False])),
            Outcome(UnitRun(Echo(), None, "b"), "ok", None, 0.1, {}, pd.DataFrame(),
                    member_outcomes("plain query", [3], [True])),
            Outcome(UnitRun(Plain(), None, None), "failed", "boom", 0.1, {}, pd.DataFrame(),
                    member_outcomes("plain query", [4], [True]))]
    outcomes = named.all_outcomes(runs)
    assert list(outcomes.columns) == named.OUTCOMES and len(outcomes) == 3  # a failed run has none
    mine = named.outcomes_of({"measure": "plain", "unit": np.nan, "attack": "plain query"}, outcomes)
    assert mine["row_id"].tolist() == [1, 2]
    assert named.outcomes_of({"measure": "echo", "unit": "b", "attack": "plain query"}, outcomes)["row_id"].tolist() == [3]
    assert named.outcomes_of({"measure": "plain", "unit": "", "attack": "other"}, outcomes).empty
