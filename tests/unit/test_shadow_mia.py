"""Per-target shadow-model membership inference (synthrisk.shadow_mia): targets and pools, the
membership design, the feature map, the AUC and TPR intervals, the stage's settings and failure
handling; the slow test runs the attack on identity and independent (the stage through Snakemake:
tests/workflow/test_shadow_mia_workflow.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError
from synthrisk.generators.base import Generator, register
from synthrisk.mia.gower import GowerSpace, gower_matrix
from synthrisk.shadow_mia import (
    FeatureMap,
    dataset_rows,
    delong_auc,
    generator_seed,
    membership_matrix,
    plan,
    stage,
    tpr_at_fpr,
    vulnerability_scores,
)
from synthrisk.shadow_mia.targets import EVALUATION, OUTLIER, RANDOM, SHADOW, TARGET


@pytest.fixture()
def schema():
    return DatasetSchema.from_dict({
        "name": "small", "source": {"path": "unused.csv"},
        "columns": {"x": {"type": "continuous", "bounds": [-5, 5]}, "k": {"type": "integer"},
                    "c": {"type": "categorical", "levels": ["a", "b", "c", "rare"]}},
        "quasi_identifiers": ["x", "k"], "sensitive": ["c"]})


def _frame(schema, n, seed, first_row_id):
    rng = np.random.default_rng(seed)
    frame = schema.conform(pd.DataFrame({"x": rng.normal(size=n), "k": rng.integers(0, 5, n),
                                         "c": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])}))
    return frame.assign(row_id=np.arange(first_row_id, first_row_id + n))


@pytest.fixture()
def frames(schema):
    holdout, aux = _frame(schema, 300, 1, 1000), _frame(schema, 200, 2, 5000)
    # one record no other resembles: the outlier every vulnerability score must find first
    holdout.loc[17, ["x", "k", "c"]] = [4.9, 4, "rare"]
    return {"holdout": holdout, "aux": aux}


# -- targets and pools ---------------------------------------------------------------------------

def test_vulnerability_is_the_mean_distance_to_the_k_nearest_others(frames, schema):
    records = pd.concat([f.drop(columns="row_id") for f in frames.values()], ignore_index=True)
    records.loc[3] = records.loc[4]  # an exact twin: the record itself must be dropped, not its twin
    scores = vulnerability_scores(records, schema, k=5)
    distances = gower_matrix(records, records, GowerSpace.fit(records, schema))
    np.fill_diagonal(distances, np.inf)
    brute = np.sort(distances, axis=1)[:, :5].mean(axis=1)
    np.testing.assert_allclose(scores, brute, rtol=0, atol=1e-12)


def test_plan_targets_outliers_first_and_keeps_them_out_of_disjoint_pools(frames, schema):
    first = plan(frames, schema, n_outliers=3, n_random=4, k=5, seed=7)
    pd.testing.assert_frame_equal(first, plan(frames, schema, n_outliers=3, n_random=4, k=5, seed=7))
    targets = first[first["pool"] == TARGET].sort_values("target")
    assert list(targets["kind"]) == [OUTLIER] * 3 + [RANDOM] * 4
    assert (targets.iloc[0]["file"], targets.iloc[0]["row"], targets.iloc[0]["row_id"]) == ("holdout", 17, 1017)
    outliers = targets[targets["kind"] == OUTLIER]["vulnerability"]
    assert outliers.min() >= first[first["pool"] != TARGET]["vulnerability"].max()
    # every record in exactly one place; pools of equal size; no values in the plan
    assert first["pool"].value_counts().to_dict() == {SHADOW: 246, EVALUATION: 247, TARGET: 7}
    assert set(first.columns) == {"file", "row", "row_id", "vulnerability", "pool", "target", "kind"}
    assert first["row_id"].is_unique
    other_seed = plan(frames, schema, n_outliers=3, n_random=4, k=5, seed=8)
    assert not other_seed[first.columns.drop("vulnerability")].equals(first[first.columns.drop("vulnerability")])


# -- the membership design -----------------------------------------------------------------------

def test_membership_is_balanced_per_target_deterministic_and_differs_between_targets():
    matrix = membership_matrix(100, 12, seed=0, role="train")
    assert matrix.shape == (100, 12) and (matrix.sum(axis=0) == 50).all()
    assert (matrix == membership_matrix(100, 12, seed=0, role="train")).all()
    assert not (matrix == membership_matrix(100, 12, seed=0, role="eval")[:100]).all()
    assert len({tuple(column) for column in matrix.T}) == 12
    # independent targets: pairs agree about half the time, not always
    agreement = [(matrix[:, a] == matrix[:, b]).mean() for a in range(12) for b in range(a + 1, 12)]
    assert 0.35 < np.mean(agreement) < 0.65
    assert (membership_matrix(61, 3, seed=0, role="eval").sum(axis=0) == 30).all()


def test_dataset_rows_insert_exactly_the_member_targets():
    pool, targets = np.arange(100, 400), np.array([1, 2, 3, 4])
    membership = np.array([1, 0, 1, 0])
    rows = dataset_rows(pool, targets, membership, 50, seed=0, role="train", index=5)
    assert len(rows) == len(set(rows)) == 50
    assert {1, 3} <= set(rows) and not {2, 4} & set(rows)
    assert set(rows) - {1, 3} <= set(pool)
    assert (rows == dataset_rows(pool, targets, membership, 50, seed=0, role="train", index=5)).all()
    assert not (rows == dataset_rows(pool, targets, membership, 50, seed=0, role="train", index=6)).all()
    with pytest.raises(ConfigError, match="n_shadow_records"):
        dataset_rows(pool, targets, membership, 301, seed=0, role="train", index=0)
    assert generator_seed("cart", "train", 3) == generator_seed("cart", "train", 3) != generator_seed("cart", "eval", 3)


# -- the feature map -----------------------------------------------------------------------------

def test_feature_map_shape_values_and_determinism(frames, schema):
    population = frames["holdout"].drop(columns="row_id")
    features = FeatureMap.fit(schema, population, bins=4, radii=(0.0, 0.1))
    synthetic = population.iloc[20:70].reset_index(drop=True)  # without the planted outlier (row 17)
    values = features.set_features(synthetic)
    names = features.set_feature_names()
    assert values.shape == (len(names),) and np.isfinite(values).all()
    assert (values == features.set_features(synthetic.copy())).all()
    by_name = dict(zip(names, values, strict=True))
    assert by_name["naive:x:mean"] == pytest.approx(synthetic["x"].mean())
    # histogram shares of each column sum to 1; "rare" is a declared level absent from these rows
    for column in ("x", "k", "c"):
        assert sum(v for n, v in by_name.items() if n.startswith(f"hist:{column}")) == pytest.approx(1.0)
    assert by_name["hist:c=rare"] == 0 and by_name["naive:c:distinct"] == synthetic["c"].nunique()
    # 2 numeric + 4 one-hot columns: 15 correlations
    assert sum(n.startswith("corr:") for n in names) == 15
    # the target's neighbourhood: a record of the synthetic data is its own exact copy
    target = synthetic.iloc[[0]]
    near = features.target_features(synthetic, target)
    assert features.target_feature_names() == ["closest", "within:0", "within:0.1"]
    assert near.shape == (1, 3) and near[0, 0] == 0 and near[0, 1] >= 1 and near[0, 2] >= near[0, 1]
    absent = features.target_features(synthetic.iloc[1:], target)
    assert absent[0, 1] == near[0, 1] - 1


# -- AUC and TPR intervals -----------------------------------------------------------------------

def test_delong_auc_matches_sklearn_and_the_bootstrap_spread():
    rng = np.random.default_rng(0)
    ins, outs = rng.normal(0.8, 1, 40), rng.normal(0, 1, 50)
    result = delong_auc(ins, outs)
    labels = np.r_[np.ones(40), np.zeros(50)]
    assert result.auc == pytest.approx(roc_auc_score(labels, np.r_[ins, outs]))
    # cross-check of DeLong's variance: the bootstrap over cases (stratified) agrees within 15 %
    boot = [roc_auc_score(labels, np.r_[rng.choice(ins, 40), rng.choice(outs, 50)]) for _ in range(800)]
    assert np.sqrt(result.variance) == pytest.approx(np.std(boot), rel=0.15)
    assert result.low < result.auc < result.high
    perfect = delong_auc([3, 4, 5], [0, 1, 2])
    assert (perfect.auc, perfect.low, perfect.high) == (1.0, 1.0, 1.0)
    assert delong_auc([1, 1, 1], [1, 1, 1]).auc == 0.5  # ties count a half


def test_tpr_at_fpr_takes_its_threshold_from_other_scores_and_measures_the_fpr_it_reaches():
    chooser = np.arange(30) / 30               # the training datasets' out-of-bag "out" scores
    outs = np.r_[np.full(6, 0.95), np.zeros(24)]  # fresh "out" datasets: 6 of 30 score above 0.9
    ins = np.r_[np.full(10, 2.0), np.full(20, 26 / 30)]  # ties with the threshold do not pass
    at_10 = tpr_at_fpr(chooser, ins, outs, 0.1)  # 3 false positives allowed: threshold = 4th highest
    assert at_10.resolvable and at_10.threshold == pytest.approx(26 / 30)
    assert at_10.tpr == pytest.approx(10 / 30) and at_10.tpr_low < 1 / 3 < at_10.tpr_high
    # the FPR is counted on the fresh datasets, not taken from the chooser: 6 / 30, interval above 0.1
    assert at_10.fpr_reached == pytest.approx(0.2) and at_10.fpr_high > 0.2
    assert not tpr_at_fpr(chooser, ins, outs, 0.01).resolvable           # 30 chooser scores: FPR 0.01 is 0
    wide = np.arange(200) / 200
    assert tpr_at_fpr(wide, ins, outs, 0.01).resolvable is False          # but only 30 fresh "out" datasets
    at_1 = tpr_at_fpr(wide, ins, np.zeros(100), 0.01)
    assert at_1.resolvable and not np.isnan(at_1.tpr) and at_1.fpr_reached == 0


def test_attack_scores_follow_the_labels_and_unmeasurable_targets_stay_unjudged():
    from synthrisk.shadow_mia.attack import attack_target

    rng = np.random.default_rng(0)
    train_y, eval_y = np.tile([0, 1], 100), np.tile([0, 1], 100)
    train_x = np.c_[train_y + rng.normal(0, 0.1, 200), rng.normal(size=200)]
    eval_x = np.c_[eval_y + rng.normal(0, 0.1, 200), rng.normal(size=200)]
    found = attack_target(train_x, train_y, eval_x, eval_y, n_trees=20)
    assert found["auc"] == 1 and found["above_chance"] and not found["below_chance"]
    assert found["tpr@0.1"] == 1 and found["tpr@0.01"] == 1 and found["fpr_reached@0.01"] <= 0.02
    flipped = attack_target(train_x, train_y, eval_x, 1 - eval_y, n_trees=20)  # labels against the features
    assert flipped["auc"] == 0 and flipped["below_chance"] and not flipped["above_chance"]
    unmeasured = attack_target(train_x[:3], [1, 1, 1], eval_x, eval_y, n_trees=20)
    assert np.isnan(unmeasured["auc"]) and unmeasured["above_chance"] is None


def test_a_count_above_chance_names_records_only_when_it_beats_chance():
    def targets(generator, aucs, lows, highs):
        return pd.DataFrame({"generator": generator, "target": range(len(aucs)), "kind": OUTLIER, "file": "holdout",
                             "row": range(len(aucs)), "n_out": 30, "auc": aucs,
                             "above_chance": [None if np.isnan(a) else lo > 0.5 for a, lo in zip(aucs, lows)],
                             "below_chance": [None if np.isnan(a) else hi < 0.5 for a, hi in zip(aucs, highs)]})

    fits = {"blind": {"fits_ok": 1}, "leaky": {"fits_ok": 1}, "failed": {"fits_ok": 0}}
    per_target = pd.concat([
        targets("blind", [0.7, 0.3] + [0.5] * 18, [0.55, 0.1] + [0.3] * 18, [0.9, 0.45] + [0.7] * 18),
        targets("leaky", [0.8] * 5 + [0.5] * 15, [0.6] * 5 + [0.3] * 15, [0.95] * 5 + [0.7] * 15),
        targets("failed", [np.nan] * 20, [np.nan] * 20, [np.nan] * 20)])
    table = stage.per_generator(per_target, fits, {"confidence": 0.95, "most_vulnerable": 2}).set_index("generator")
    assert table.loc["blind", "above_chance"] == 1 and table.loc["blind", "below_chance"] == 1
    assert table.loc["blind", "most_vulnerable"].startswith("none: 1 above chance")
    assert table.loc["leaky", "p_above_chance"] < 0.001 and table.loc["leaky", "most_vulnerable"].count("AUC") == 2
    assert table.loc["failed", "n_measured"] == 0 and np.isnan(table.loc["failed", "share_above_chance"])
    assert table.loc["failed", "most_vulnerable"] == "no target measured"


# -- the stage's settings and failures -----------------------------------------------------------

@register("shadow_mia_test_broken")
class Broken(Generator):
    """Fails every fit, as a generator that meets data it cannot handle."""

    def fit(self, train, schema):
        raise RuntimeError("this generator cannot fit")

    def sample(self, n, seed):
        raise AssertionError("never fitted")


GENERATORS = {"identity": {"backend": "identity"}, "independent": {"backend": "independent"},
              "broken": {"backend": "shadow_mia_test_broken"},
              "dpgan": {"backend": "synthcity", "plugin": "dpgan"}}


def _settings(**block):
    return stage.settings_from_config({"dataset": "small", "generators": ["identity"], **block}, GENERATORS,
                                      {"small": {}}, [3, 4])


@pytest.mark.parametrize("block, message", [
    ({"n_outlier": 3}, r"shadow_mia: unknown key\(s\) \['n_outlier'\]"),
    ({"dataset": "adult"}, "shadow_mia.dataset"),
    ({"generators": ["nope"]}, "shadow_mia.generators: 'nope'"),
    ({"generators": ["dpgan"]}, "own environment"),
    ({"n_shadow_records": 5, "n_outliers": 3, "n_random": 3}, "shadow_mia.n_shadow_records"),
    ({"eval_datasets": 2}, "shadow_mia.eval_datasets"),
    ({"block": 2.5}, "shadow_mia.block"),
    ({"fprs": [0.1, 1.0]}, "shadow_mia.fprs"),
])
def test_stage_config_errors_name_the_key(block, message):
    with pytest.raises(ConfigError, match=message):
        _settings(**block)


def test_stage_columns_must_be_the_datasets(schema):
    with pytest.raises(ConfigError, match=r"shadow_mia.columns: \['nope'\]"):
        stage.stage_schema(schema, _settings(columns=["x", "nope"]))
    assert list(stage.stage_schema(schema, _settings(columns=["c", "x"])).columns) == ["c", "x"]


def test_a_jobs_settings_change_only_with_what_it_reads():
    """Snakemake reruns a job whose params change: listing another generator or changing the
    gathered table's confidence must not redo a generator's shadow fits, or the plan."""
    before = _settings(generators=["identity"])
    after = _settings(generators=["identity", "broken"], confidence=0.9, n_trees=50, most_vulnerable=5)
    assert stage.block_settings(after, "identity") == stage.block_settings(before, "identity")
    assert stage.plan_settings(after) == stage.plan_settings(before)
    assert list(stage.block_settings(after, "broken")["specs"]) == ["broken"]
    more = _settings(generators=["identity"], n_shadow_records=500)
    assert stage.block_settings(more, "identity") != stage.block_settings(before, "identity")
    assert stage.plan_settings(_settings(generators=["identity"], n_outliers=3)) != stage.plan_settings(before)


def test_stage_blocks_record_failed_fits_and_gather_counts_them(frames, schema):
    settings = _settings(generators=["identity", "broken"], n_outliers=2, n_random=2, n_shadow_records=40,
                         shadow_datasets=6, eval_datasets=4, block=4, n_trees=10)
    assert settings["seed"] == 3  # the first config seed
    # each job is given only its part of the settings, as the rules give it
    plan_frame = stage.run_plan(frames, schema, stage.plan_settings(settings))
    blocks = {(g, role): [stage.run_block(frames, schema, plan_frame, stage.block_settings(settings, g), g, role, b)
                          for b in range(stage.n_blocks(settings, role))]
              for g in settings["generators"] for role in ("train", "eval")}
    assert [len(b) for b in blocks["identity", "train"]] == [4, 2]
    broken = pd.concat(blocks["broken", "train"])
    assert (broken["status"] == "failed").all() and broken["error"].str.contains("cannot fit").all()
    assert broken.filter(like="set:").isna().all().all()
    identity = pd.concat(blocks["identity", "train"])
    assert (identity["status"] == "ok").all() and identity.filter(like="set:").notna().all().all()
    assert not identity.filter(like="set:").empty and "t3:within:0" in identity.columns
    for frame in (identity, pd.concat(blocks["identity", "eval"])):
        # identity releases its training data: the planted outlier (target 0, unique) is in the
        # synthetic data exactly when the membership column says it was inserted
        assert ((frame["t0:within:0"] >= 1).astype(int) == frame["in:0"]).all()
    per_target, generators = stage.gather(blocks, plan_frame, settings)
    assert len(per_target) == 2 * 4
    row = generators.set_index("generator")
    assert row.loc["broken", "fits_failed"] == 10 and row.loc["broken", "fits_ok"] == 0
    assert per_target[per_target["generator"] == "broken"]["auc"].isna().all()
    assert row.loc["identity", "fits_failed"] == 0 and (per_target[per_target["generator"] == "identity"]["n_in"] == 2).all()
    # rerunning a block gives the same features (seeds from generator, role and dataset index)
    again = stage.run_block(frames, schema, plan_frame, stage.block_settings(settings, "identity"), "identity",
                            "train", 0)
    timings = ["fit_seconds", "sample_seconds"]
    pd.testing.assert_frame_equal(again.drop(columns=timings), blocks["identity", "train"][0].drop(columns=timings))


# -- the attack on the controls (slow: about a minute) -------------------------------------------

@pytest.mark.slow
def test_attack_finds_identitys_outliers_and_nothing_on_independents_random_targets():
    from helpers import ROOT

    from synthrisk.data import load_dataset, load_schema, split_real

    schema = load_schema(ROOT / "config/datasets/adult.yaml")
    frames = split_real(load_dataset(schema), 1000, 2000, 2000, seed=0, dataset="adult")
    settings = stage.settings_from_config(
        {"dataset": "adult", "generators": ["identity", "independent"],
         "columns": ["age", "workclass", "marital_status", "race"], "n_outliers": 5, "n_random": 8,
         "n_shadow_records": 500, "shadow_datasets": 80, "eval_datasets": 60, "block": 1000},
        GENERATORS, {"adult": {}}, [0])
    _, per_target, _ = stage.run_all(frames, schema, settings)
    identity = per_target[(per_target["generator"] == "identity") & (per_target["kind"] == OUTLIER)]
    assert (identity["auc_low"] > 0.9).all(), identity
    independent = per_target[(per_target["generator"] == "independent") & (per_target["kind"] == RANDOM)]
    includes_chance = (independent["auc_low"] <= 0.5) & (independent["auc_high"] >= 0.5)
    assert includes_chance.mean() >= 0.75, independent




def test_report_puts_both_figures_in_the_shadow_section_with_the_caption(tmp_path):
    from helpers import ROOT

    from synthrisk.figures import save, subplots
    from synthrisk.report.html import figure_sections

    paths = []
    for name in ("shadow_mia_auc", "shadow_mia_vulnerable", "epsilon_audit"):
        fig, _ = subplots(1)
        paths.append(save(fig, tmp_path / f"{name}.png"))
    sections = {s["title"]: s["figures"] for s in figure_sections(paths, ROOT / "workflow/report")}
    shadow = sections["Shadow-model membership inference"]
    assert [f["name"] for f in shadow] == ["shadow_mia_auc", "shadow_mia_vulnerable"]
    assert "DeLong" in shadow[0]["caption"]
    assert [f["name"] for f in sections["Empirical ε audit of DP generators"]] == ["epsilon_audit"]
