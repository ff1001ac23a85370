"""Shadow-model membership inference with the generator in hand (synthrisk.shadow_mia.release, the
`shadow_models` measure, `synthrisk audit --generator`): the query features, the release's p-value,
what a budget can tell from chance, the release-level test under its null (releases that never saw
the members, simulated) and on copies, and the generator checked where it enters."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from helpers import small_records, small_schema

import synthrisk
from synthrisk.cli import main
from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError
from synthrisk.generators.run import run_generator
from synthrisk.measures.base import GeneratorInHand
from synthrisk.measures.policy import Policy
from synthrisk.shadow_mia.attack import release_p_value
from synthrisk.shadow_mia.features import FeatureMap
from synthrisk.shadow_mia.release import Budget, attack_release, permutation_auc, release_targets

SMALL = {"n_outliers": 10, "n_random": 10, "shadow_datasets": 20, "eval_datasets": 20, "n_trees": 20}


@pytest.fixture(scope="module")
def schema():
    return small_schema()




def test_query_features_are_the_shares_matching_the_target_on_each_column_and_pair(schema):
    population = small_records(schema, 50, 0)
    features = FeatureMap.fit(schema, population, bins=10)
    synthetic = schema.conform(pd.DataFrame({"x": [0.5, 0.7, 9.5, 0.2], "k": [1, 1, 1, 3], "c": ["a", "b", "a", "a"]}))
    target = schema.conform(pd.DataFrame({"x": [0.1], "k": [1], "c": ["a"]}))
    got = dict(zip(features.query_feature_names(), features.query_features(synthetic, target)[0], strict=True))
    # x in the first of 10 bins of [0, 10]: rows 0, 1, 3; k = 1: rows 0-2; c = a: rows 0, 2, 3
    assert got == pytest.approx({"match:x": 0.75, "match:k": 0.75, "match:c": 0.75, "match:x&k": 0.5,
                                 "match:x&c": 0.5, "match:k&c": 0.5})


def test_the_release_p_value_counts_the_out_releases_scoring_at_least_as_high():
    assert release_p_value(0.9, [0.1, 0.9, 0.95, 0.2]) == pytest.approx(3 / 5)
    assert release_p_value(1.0, [0.1, 0.2]) == pytest.approx(1 / 3)


def test_the_budget_says_what_it_can_tell_from_chance():
    # 100 "in" evaluation datasets: 4 of 100 detected has its Clopper-Pearson lower end above 0.01, 3 not
    assert Budget(200, 200, 1000, "aux").smallest_tpr(0.01) == pytest.approx(0.04)
    assert Budget(200, 200, 1000, "aux").fits == 400
    assert Budget(50, 50, 1000, "aux").smallest_tpr(0.01) is None  # 25 "out" datasets cannot set FPR 0.01


def test_copies_of_the_members_are_found(schema):
    members, holdout = small_records(schema, 300, 1), small_records(schema, 300, 2, 1000)
    result = attack_release(members, members, holdout, schema=schema, spec={"backend": "identity"}, **SMALL)
    assert result.auc > 0.9 and result.auc_p_value < 1e-3
    assert result.budget.fits == 40 and result.fits_failed == 0
    summary = result.to_json()
    assert summary["refitted"] == "identity" and len(summary["targets"]) == 20
    assert "n_identified" not in summary  # nobody is named: the resolution is not there (module doc)
    json.dumps(summary, allow_nan=False)


def test_the_permutation_test_is_exact_with_few_targets_and_ties():
    auc, p = permutation_auc([1.0], [0.0], 9999, seed=0)
    assert auc == 1.0 and p == pytest.approx(0.5, abs=0.02)  # one of two labellings is as extreme
    auc, p = permutation_auc([3.0, 3.0, 2.0], [1.0, 1.0, 0.0], 9999, seed=0)
    assert auc == 1.0 and p == pytest.approx(1 / 20, abs=0.01)  # one of C(6, 3) = 20
    auc, _ = permutation_auc([1.0, 0.0], [1.0, 0.0], 99, seed=0)
    assert auc == 0.5  # ties count 1/2


def test_targets_are_chosen_blind_to_who_is_a_member():
    """Categorical records tie on their vulnerability; the tie at the cut must not be broken by the
    file a record came from (members used to come first, and made 66 % of them): over 15 draws the
    members' share of the outlier targets is about a half (its standard error about 0.02)."""
    cats = DatasetSchema.from_dict({
        "name": "cats", "source": {"path": "unused.csv"},
        "columns": {f"c{i}": {"type": "categorical", "levels": ["a", "b", "c"]} for i in range(6)},
        "quasi_identifiers": ["c0", "c1"], "sensitive": ["c5"]})

    def frame(rng, first):
        values = {f"c{i}": rng.choice(["a", "b", "c"], 200, p=[0.7, 0.2, 0.1]) for i in range(6)}
        return cats.conform(pd.DataFrame(values)).assign(row_id=np.arange(first, first + 200))

    shares = []
    for draw in range(15):
        rng = np.random.default_rng(draw)
        members, holdout = frame(rng, 0), frame(rng, 1000)
        chosen = release_targets(members, holdout, cats, None, draw, n_outliers=40, n_random=0, neighbours=5)
        shares.append(chosen.label[chosen.targets].mean())
    assert 0.42 <= float(np.mean(shares)) <= 0.58, np.mean(shares)


@pytest.mark.slow  # a null study of refitting releases: `make test-all` and CI run it
def test_releases_that_never_saw_the_members_hold_the_tests_level(schema):
    """The null, simulated as it is used: 20 releases of other records; the release-level test at
    0.05 fires in a share its level allows (binomial 99.9 % bound: 5 of 20). The test is exact at
    any budget (a permutation of the targets), so a small one checks it: 8 + 8 refits, 10 trees."""
    fired = 0
    for replicate in range(20):
        members, holdout = small_records(schema, 120, 100 + replicate), small_records(schema, 120, 200 + replicate, 1000)
        unseen = small_records(schema, 120, 300 + replicate, 5000)
        result = attack_release(members, unseen, holdout, schema=schema, spec={"backend": "identity"}, seed=replicate,
                                **{**SMALL, "shadow_datasets": 8, "eval_datasets": 8, "n_trees": 10})
        fired += result.auc_p_value <= 0.05
    assert fired <= 5, fired


@pytest.fixture(scope="module")
def adult_frames(adult, adult_schema):
    sample = adult.sample(900, random_state=41).reset_index(drop=True)
    train, holdout = sample.iloc[:300].reset_index(drop=True), sample.iloc[300:600].reset_index(drop=True)
    release, status = run_generator("cart", {"backend": "cart"}, train, adult_schema, n=300, seed=3)
    assert status["status"] == "ok"
    return train, holdout, release


def test_the_audit_refits_the_generator_in_hand(adult_frames, adult_schema, cheap_audit, monkeypatch):
    from synthrisk.release_audit import run as audit_run

    # the attacks' sizes are their own tests' (above; tests/unit/test_ensemble.py): smaller here
    monkeypatch.setattr(audit_run, "AUDIT_SETTINGS", {**audit_run.AUDIT_SETTINGS, "ensemble": {"refits": 4},
                                                      "shadow_models": {"n_outliers": 10, "n_random": 10,
                                                                        "n_trees": 20}})
    train, holdout, release = adult_frames
    found = synthrisk.audit(train, release, holdout, schema=adult_schema, generator="cart", shadow_fits=16)
    status = found.measures.set_index("measure")
    assert status.loc["shadow_models", "status"] == "ok"
    document = found.to_dict()
    assert document["inputs"]["generator"] == {"backend": "cart"}
    assert "generator in hand (cart)" in document["release"]["calibration"]
    assert "Shadow-model membership inference" in document["release"]["calibration"]
    assert "shadow models (generator in hand)" in set(found.evidence["attack"])
    shadow = found.tables["shadow_models"]
    assert shadow["fits_mean"].iloc[0] == 16
    assert "Budget: 16 refits of cart" in found.html
    without = synthrisk.audit(train, release, holdout, schema=adult_schema)
    assert without.measures.set_index("measure").loc["shadow_models", "status"] == "skipped"
    assert "--generator" in without.measures.set_index("measure").loc["shadow_models", "reason"]
    assert "generator in hand" not in (without.to_dict()["release"]["calibration"] or "")


def test_the_attacks_that_refit_the_generator_name_only_behind_the_exposure_evidence():
    """Each naming attack names at the policy's rate (a share would cost exposure its power: the
    conformal p-values' resolution), and one that refits the generator is heard only once exposure
    has named someone: under the null anyone is named as often as by exposure alone, and the audit
    with the generator names everyone the audit without it names."""
    from synthrisk.release_audit.named import GATED, gated
    from synthrisk.release_audit.run import audit_measures

    policy = Policy()
    alone = audit_measures(policy)
    cart = audit_measures(policy, 40, GeneratorInHand("cart", {"backend": "cart"}))
    mst = audit_measures(policy, None, GeneratorInHand("mst", {"backend": "mst", "params": {"epsilon": 1.0}}))
    assert alone["exposure"][1].fdr == pytest.approx(policy.naming_fdr)
    assert [cart[name][1].fdr for name in ("exposure", "ensemble")] == pytest.approx([policy.naming_fdr] * 2)
    assert [mst[name][1].fdr for name in ("exposure", "mama_mia", "ensemble")] == pytest.approx([policy.naming_fdr] * 3)
    assert (cart["shadow_models"][1].shadow_datasets, cart["shadow_models"][1].eval_datasets) == (20, 20)

    def evidence(exposure_named, ensemble_named):
        return pd.DataFrame([
            {"measure": "exposure", "risk": "membership", "n_identified": exposure_named, "named_by": "", "detail": ""},
            {"measure": "ensemble", "risk": "membership", "n_identified": ensemble_named, "named_by": "",
             "detail": "AUC"},
            {"measure": "dcr", "risk": "membership", "n_identified": 0, "named_by": "", "detail": ""}])

    shut = gated(evidence(0, 7), cart)
    assert shut["n_identified"].tolist() == [0, 0, 0] and shut.loc[1, "detail"] == f"AUC; {GATED}"
    opened = gated(evidence(3, 7), cart)
    assert opened["n_identified"].tolist() == [3, 7, 0] and opened.loc[1, "detail"] == "AUC"


@pytest.mark.parametrize("args, message", [
    (["--generator", "carrt"], r"unknown generator backend 'carrt'"),
    (["--generator", "synthcity"], r"--generator synthcity \(--generator-config\): .*set `plugin`"),
    (["--generator-config", "CONFIG"], r"--generator-config: given without --generator"),
    (["--generator", "mst", "--generator-config", "CONFIG"], r"names backend 'cart', but --generator is 'mst'"),
    (["--generator", "cart", "--shadow-fits", "7"], r"--shadow-fits: give an even number of refits of at least 8"),
    (["--shadow-fits", "40"], r"--shadow-fits: given without --generator"),
    (["--generator", "mst"], r"--generator mst \(--generator-config\): .*params.epsilon is required"),
])
def test_a_bad_generator_is_refused_before_anything_runs(adult_frames, tmp_path, capsys, args, message):
    train, holdout, release = adult_frames
    for name, frame in (("train", train), ("holdout", holdout), ("release", release)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "generator.yaml").write_text("backend: cart\nparams: {}\n")
    args = [str(tmp_path / "generator.yaml") if a == "CONFIG" else a for a in args]
    code = main(["audit", "--train", str(tmp_path / "train.csv"), "--synthetic", str(tmp_path / "release.csv"),
                 "--holdout", str(tmp_path / "holdout.csv"), "--sensitive", "income", "--out", str(tmp_path / "out"),
                 *args])
    assert code != 0
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert not (tmp_path / "out" / "audit.html").exists()


def test_the_generator_entry_is_read_from_a_mapping_or_a_file(tmp_path):
    from synthrisk.release_audit.generator import generator_in_hand

    hand = generator_in_hand({"backend": "mst", "params": {"epsilon": 1.0}})
    assert (hand.name, hand.spec) == ("mst", {"backend": "mst", "params": {"epsilon": 1.0}})
    (tmp_path / "g.yaml").write_text("params: {epsilon: 2.0}\n")
    assert generator_in_hand("mst", tmp_path / "g.yaml").spec == {"backend": "mst", "params": {"epsilon": 2.0}}
    (tmp_path / "bad.yaml").write_text("epsilon: 2.0\n")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['epsilon'\].*params:"):
        generator_in_hand("mst", tmp_path / "bad.yaml")
    assert generator_in_hand(None) is None
