"""The empirical epsilon audit (synthrisk.epsilon_audit): bounds on known counts, the canary, the
neighbour relations, the statistic, the under-noised MST control, the run-level (Bonferroni) level;
the slow test runs the audit on MST and its control (the stage through Snakemake:
tests/workflow/test_epsilon_audit_workflow.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from synthrisk.data import load_schema
from synthrisk.data.schema import DatasetSchema
from synthrisk.epsilon_audit import (
    ADD_REMOVE,
    CONFIDENCE,
    REPLACE_ONE,
    audit_statistics,
    audited_relation,
    canary_cell_count,
    canary_counts,
    canary_matches,
    choose_threshold,
    clopper_pearson_upper,
    epsilon_lower_bound,
    family_confidence,
    per_audit_confidence,
    with_canary,
    worst_case_canary,
)
from synthrisk.epsilon_audit.experiment import WITH, WITHOUT, nominal_privacy
from synthrisk.epsilon_audit.statistic import CANARY_CELLS, MAMA_MIA, marginal_counts, marginals, statistic_values
from synthrisk.errors import ConfigError, DataError
from synthrisk.generators.base import Generator, make_generator, register
from synthrisk.generators.mst import NOT_DP_NOISE

ALPHA = 1 - CONFIDENCE
DELTA = 1e-6


# -- Clopper-Pearson and epsilon_lower on known counts ------------------------------------------

@pytest.mark.parametrize("errors,trials", [(0, 10), (0, 100), (3, 50), (17, 40), (40, 40)])
def test_clopper_pearson_upper_is_the_beta_quantile(errors, trials):
    # the exact upper bound: the 1 - alpha/2 quantile of Beta(k + 1, n - k); 1 when every run erred
    expected = 1.0 if errors == trials else beta.ppf(1 - ALPHA / 2, errors + 1, trials - errors)
    assert clopper_pearson_upper(errors, trials) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [10, 50, 100])
def test_perfect_separation_gives_the_largest_bound_n_runs_can_show(n):
    upper = 1 - (ALPHA / 2) ** (1 / n)  # Clopper-Pearson with no error at all
    bound = epsilon_lower_bound(0, n, 0, n, DELTA)
    assert bound.fpr_upper == pytest.approx(upper) and bound.fnr_upper == pytest.approx(upper)
    assert bound.epsilon_lower == pytest.approx(np.log((1 - DELTA - upper) / upper))
    # e.g. 50 runs per side can never show more than epsilon 2.5696 at 95 % (u = 0.07112)
    if n == 50:
        assert bound.epsilon_lower == pytest.approx(2.5696, abs=1e-4)


def test_epsilon_lower_on_known_counts_takes_the_stronger_direction():
    fpr_u = beta.ppf(1 - ALPHA / 2, 2 + 1, 100 - 2)
    fnr_u = beta.ppf(1 - ALPHA / 2, 30 + 1, 100 - 30)
    expected = max(np.log((1 - DELTA - fnr_u) / fpr_u), np.log((1 - DELTA - fpr_u) / fnr_u))
    assert expected == pytest.approx(np.log((1 - DELTA - fnr_u) / fpr_u))  # few false positives: this side
    assert epsilon_lower_bound(2, 100, 30, 100, DELTA).epsilon_lower == pytest.approx(expected)
    # swapping the error kinds gives the same bound through the other direction
    assert epsilon_lower_bound(30, 100, 2, 100, DELTA).epsilon_lower == pytest.approx(expected)


def test_a_test_no_better_than_chance_bounds_epsilon_by_zero():
    assert epsilon_lower_bound(50, 100, 50, 100, DELTA).epsilon_lower == 0.0
    assert epsilon_lower_bound(100, 100, 0, 100, DELTA).epsilon_lower == 0.0  # always guessing "in"


@pytest.mark.parametrize("args", [(-1, 10, 0, 10, DELTA), (11, 10, 0, 10, DELTA), (0, 0, 0, 10, DELTA),
                                  (0, 10, 0, 10, 1.0)])
def test_bad_counts_or_delta_are_refused(args):
    with pytest.raises(ConfigError):
        epsilon_lower_bound(*args)


def test_threshold_separates_separable_calibration_runs():
    without, with_ = np.array([0, 1, 2, 2, 3]), np.array([7, 8, 9, 10, 12])
    threshold = choose_threshold(without, with_, DELTA)
    assert threshold == 5.0  # the middle of the gap, not the edge of either world
    assert ((without >= threshold).sum(), (with_ < threshold).sum()) == (0, 0)


def test_worlds_apart_are_audited_without_errors_at_the_most_a_budget_can_show():
    # AIM's case: two worlds whose counts never overlap, 24 runs each (12 choose, 12 evaluate). A
    # threshold on either world's most extreme selection run errs on about 1 in 13 evaluation
    # runs of that world; the middle of the gap on none, so epsilon_lower is the budget's maximum.
    rng = np.random.default_rng(3)
    best = epsilon_lower_bound(0, 12, 0, 12, 1e-9).epsilon_lower
    audits = [audit_statistics(rng.normal(1086, 13, 24).round(), rng.normal(1584, 13, 24).round(), nominal_epsilon=1.0,
                               delta=1e-9, neighbours=ADD_REMOVE) for _ in range(100)]
    assert all(a.false_positives == a.false_negatives == 0 for a in audits)
    assert all(a.epsilon_lower == pytest.approx(best) for a in audits)
    # the edge rule it replaced (the smallest 'with' selection run), on the same kind of runs: on
    # average 12/13 false negatives per audit
    edge_errors = []
    for _ in range(200):
        with_ = rng.normal(1584, 13, 24).round()
        edge_errors.append(int((with_[12:] < with_[:12].min()).sum()))
    assert np.mean(edge_errors) > 0.5


def test_audit_splits_runs_and_flags_only_beyond_nominal():
    rng = np.random.default_rng(0)
    separated = audit_statistics(rng.poisson(2, 100), 50 + rng.poisson(2, 100), nominal_epsilon=1.0, delta=DELTA,
                                 neighbours=REPLACE_ONE)
    assert separated.n_evaluation == 50 and (separated.false_positives, separated.false_negatives) == (0, 0)
    assert separated.epsilon_lower == pytest.approx(epsilon_lower_bound(0, 50, 0, 50, DELTA).epsilon_lower)
    assert separated.flagged and separated.neighbours == REPLACE_ONE
    same = audit_statistics(rng.poisson(5, 100), rng.poisson(5, 100), nominal_epsilon=1.0, delta=DELTA,
                            neighbours=ADD_REMOVE)
    assert same.epsilon_lower < 1.0 and not same.flagged
    with pytest.raises(ConfigError, match="same number"):
        audit_statistics(np.zeros(10), np.zeros(12), 1.0, DELTA, neighbours=REPLACE_ONE)
    with pytest.raises(ConfigError, match="neighbours must be one of"):
        audit_statistics(np.zeros(10), np.zeros(10), 1.0, DELTA, neighbours="replace one record")


def test_bonferroni_level_per_audit_and_for_the_family():
    assert per_audit_confidence(0.95, 1) == 0.95
    assert per_audit_confidence(0.95, 6) == pytest.approx(1 - 0.05 / 6)
    assert per_audit_confidence(0.95, 6, family_wise=False) == 0.95
    assert family_confidence(per_audit_confidence(0.95, 9), 9) == pytest.approx(0.95)
    assert family_confidence(0.95, 6) == pytest.approx(0.70) and family_confidence(0.95, 40) == 0.0
    # a stricter level per audit shows less: 100 error-free evaluation runs per world, k = 6
    assert epsilon_lower_bound(0, 100, 0, 100, DELTA, per_audit_confidence(0.95, 6)).epsilon_lower == pytest.approx(
        2.8764, abs=1e-4)
    with pytest.raises(ConfigError, match="number of audits"):
        per_audit_confidence(0.95, 0)


# -- the canary and the statistic ---------------------------------------------------------------

@pytest.fixture()
def small_schema():
    return DatasetSchema.from_dict({
        "name": "small", "source": {"path": "unused.csv"},
        "columns": {"num": {"type": "continuous", "bounds": [-4, 4]}, "cnt": {"type": "integer", "bounds": [0, 8]},
                    "cat": {"type": "categorical", "levels": ["a", "b", "c", "d"]}},
        "quasi_identifiers": ["num", "cnt"], "sensitive": ["cat"]})


@pytest.fixture()
def small(small_schema):
    rng = np.random.default_rng(3)
    n = 200
    return small_schema.conform(pd.DataFrame({
        "num": rng.normal(size=n), "cnt": rng.integers(2, 9, n),  # 0 and 1 never occur; 8 does
        "cat": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])}))  # "d" is public but never occurs


def test_canary_is_the_rarest_public_record_and_absent_from_the_data(small, small_schema):
    canary = worst_case_canary(small, small_schema, bins=16)
    record = canary.record
    assert record["cat"] == "d"                                  # a declared level the data never use
    assert record["cnt"] == 0                                    # the empty edge bin, at the bound
    assert record["num"] in (-4.0, 4.0)                          # an extreme bin
    assert not canary_matches(small, canary, small_schema).any()  # absent, cell by cell
    # inside the public domain: the schema accepts it as a record
    small_schema.conform(pd.DataFrame([record]), what="canary")


def test_with_canary_replaces_one_record_sharing_no_cell(small, small_schema):
    canary = worst_case_canary(small, small_schema, bins=16)
    neighbour = with_canary(small, canary, small_schema, REPLACE_ONE)
    changed = ~(neighbour == small).all(axis=1)
    assert len(neighbour) == len(small) and changed.sum() == 1
    assert canary_matches(neighbour, canary, small_schema).sum() == 1
    # the record it replaced shared no cell with the canary
    assert canary_cell_count(small.loc[changed], canary, small_schema) == 0
    with pytest.raises(DataError, match="already occur"):
        with_canary(neighbour, canary, small_schema, REPLACE_ONE)


def test_with_canary_add_remove_adds_the_canary_and_changes_nothing_else(small, small_schema):
    canary = worst_case_canary(small, small_schema, bins=16)
    neighbour = with_canary(small, canary, small_schema, ADD_REMOVE)
    assert len(neighbour) == len(small) + 1
    pd.testing.assert_frame_equal(neighbour.iloc[:-1], small)          # every record of the data, unchanged
    assert canary_matches(neighbour, canary, small_schema).tolist() == [False] * len(small) + [True]
    assert neighbour.iloc[-1].to_dict() == canary.record
    assert (neighbour.dtypes == small.dtypes).all()
    small_schema.conform(neighbour, what="add-remove neighbour")
    with pytest.raises(DataError, match="already occur"):
        with_canary(neighbour, canary, small_schema, ADD_REMOVE)
    with pytest.raises(ConfigError, match="neighbours must be one of"):
        with_canary(small, canary, small_schema, "bounded")


def test_no_canary_when_every_rare_combination_occurs():
    schema = DatasetSchema.from_dict({
        "name": "full", "source": {"path": "unused.csv"},
        "columns": {"a": {"type": "categorical", "levels": ["x", "y"]},
                    "b": {"type": "categorical", "levels": ["u", "v"]}},
        "quasi_identifiers": ["a"], "sensitive": ["b"]})
    data = schema.conform(pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]}))
    with pytest.raises(DataError, match="no worst-case canary"):
        worst_case_canary(data, schema, bins=16)


def test_statistic_counts_the_canarys_one_and_two_way_cells(small, small_schema):
    canary = worst_case_canary(small, small_schema, bins=16)
    num, cnt, cat = canary.record["num"], canary.record["cnt"], canary.record["cat"]
    other_num = -num  # the opposite extreme bin
    table = small_schema.conform(pd.DataFrame({
        "num": [num, num, num, other_num, other_num],
        "cnt": [cnt, cnt, 5, 5, cnt],
        "cat": [cat, "a", "a", "a", "b"]}))
    # matches 3, 2, 1, 0, 1 columns: m + m (m - 1) / 2 = 6 + 3 + 1 + 0 + 1
    assert canary_cell_count(table, canary, small_schema) == 11
    counts = marginal_counts(table, canary, small_schema)
    # a pair is named by its columns sorted, whatever the data's order (num, cnt, cat), as MAMA-MIA's
    # focal points name theirs
    assert counts == {"num": 3, "cnt": 3, "cat": 1, "cnt&num": 2, "cat&num": 1, "cat&cnt": 1}
    frame = pd.DataFrame([{"run": 0, **counts}])
    assert statistic_values(frame, CANARY_CELLS) == pytest.approx([11])
    # after MAMA-MIA: the weighted log counts of the marginals it weighs only (here one column, one pair)
    weights = {"num": 50, "cnt&num": 30}
    assert statistic_values(frame, MAMA_MIA, weights) == pytest.approx([50 * np.log(4) + 30 * np.log(3)])
    # a run that lacks a count is refused, not read as no error at every threshold
    with pytest.raises(ConfigError, match="lack a marginal's count"):
        statistic_values(pd.concat([frame, pd.DataFrame([{"run": 1, "num": 1}])]), CANARY_CELLS)
    with pytest.raises(ConfigError, match="not a finite number"):
        audit_statistics(np.array([0.0, np.nan]), np.array([1.0, 2.0]), 1.0, DELTA, neighbours=REPLACE_ONE)
    with pytest.raises(ConfigError, match="needs the focal points"):
        statistic_values(frame, MAMA_MIA)
    with pytest.raises(ConfigError, match=r"lack the marginals \['num&x'\]"):
        statistic_values(frame, MAMA_MIA, {"num&x": 1})
    with pytest.raises(ConfigError, match="statistic must be one of"):
        statistic_values(frame, "focal")


def test_mama_mias_weights_are_every_one_way_marginal_and_the_focal_pairs(small, small_schema):
    from synthrisk.epsilon_audit.statistic import focal_weights

    spec = {"backend": "mst", "params": {"epsilon": 1000.0}}
    weights = focal_weights(spec, small, small_schema, runs=4)
    assert {c: weights[c] for c in small.columns} == {c: 4 for c in small.columns}  # MST measures every column
    pairs = {name: w for name, w in weights.items() if "&" in name}
    assert pairs and all(0 < w <= 4 for w in pairs.values()) and len(pairs) <= 3
    assert set(pairs) <= set(marginals(list(small.columns)))  # the counts' names, in any column order
    assert focal_weights(spec, small, small_schema, runs=4) == weights  # seeded: the same data, the same points


# -- the experiment's plumbing, on a generator with a known answer ------------------------------

def test_identity_generator_shows_exactly_the_canarys_cells(small, small_schema):
    # identity releases its input: the world with the canary adds its 3 one-way and 3 two-way cells
    # and loses nothing (the replaced record shared no cell)
    canary = worst_case_canary(small, small_schema, bins=16)
    spec = {"backend": "identity"}
    without = canary_counts(spec, small, small_schema, canary, WITHOUT, range(2), neighbours=REPLACE_ONE)
    with_ = canary_counts(spec, small, small_schema, canary, WITH, range(2), neighbours=REPLACE_ONE)
    assert list(with_["run"]) == [0, 1]
    assert (with_.drop(columns="run") - without.drop(columns="run") == 1).all().all()  # +1 in each of the 6 cells
    with pytest.raises(ConfigError, match="needs a DP generator"):
        nominal_privacy(spec)
    with pytest.raises(ConfigError, match="states no neighbour relation"):  # no claim, no relation to default to
        canary_counts(spec, small, small_schema, canary, WITH, range(1))


@register("audit_recorder")
class RecordingGenerator(Generator):
    """A test generator that claims (1, 1e-6)-DP under the relation `neighbours` (None: states none),
    records the size of every dataset it is fitted on and releases that dataset."""

    fitted_sizes: list[int] = []

    def __init__(self, seed: int = 0, epsilon: float = 1.0, neighbours: str | None = REPLACE_ONE):
        super().__init__(seed)
        self.epsilon, self.neighbours = float(epsilon), neighbours

    def privacy(self):
        return {"epsilon": self.epsilon, "delta": DELTA, "guarantee": "test",
                **({"neighbours": self.neighbours} if self.neighbours else {})}

    def fit(self, train, schema):
        RecordingGenerator.fitted_sizes.append(len(train))
        self.train_ = train.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        return self.train_


@pytest.mark.parametrize("relation, extra", [(REPLACE_ONE, 0), (ADD_REMOVE, 1)])
def test_the_audit_fits_on_the_neighbours_of_the_generators_own_relation(small, small_schema, relation, extra):
    canary = worst_case_canary(small, small_schema, bins=16)
    spec = {"backend": "audit_recorder", "params": {"neighbours": relation}}
    assert nominal_privacy(spec)["neighbours"] == audited_relation(spec) == relation
    RecordingGenerator.fitted_sizes.clear()
    without = canary_counts(spec, small, small_schema, canary, WITHOUT, range(2))
    with_ = canary_counts(spec, small, small_schema, canary, WITH, range(2))
    assert RecordingGenerator.fitted_sizes == [len(small)] * 2 + [len(small) + extra] * 2
    # the canary's 3 one-way and 3 two-way cells, nothing taken away
    assert (statistic_values(with_, CANARY_CELLS) - statistic_values(without, CANARY_CELLS) == 6).all()
    other = ADD_REMOVE if relation == REPLACE_ONE else REPLACE_ONE
    with pytest.raises(ConfigError, match=f"assumes {relation} neighbours; an audit under {other}"):
        canary_counts(spec, small, small_schema, canary, WITH, range(1), neighbours=other)


def test_a_dp_generator_that_states_no_relation_is_not_audited():
    with pytest.raises(ConfigError, match="must state 'neighbours'"):
        nominal_privacy({"backend": "audit_recorder", "params": {"neighbours": None}}, "mine")
    with pytest.raises(ConfigError, match="must state 'neighbours'"):
        nominal_privacy({"backend": "audit_recorder", "params": {"neighbours": "replace one record"}}, "mine")


def test_each_dp_generator_states_the_relation_of_its_accounting():
    assert make_generator({"backend": "mst", "params": {"epsilon": 1.0}}).privacy()["neighbours"] == REPLACE_ONE
    plugins = {"privbayes": REPLACE_ONE, "aim": ADD_REMOVE, "dpgan": ADD_REMOVE}
    for plugin, relation in plugins.items():
        spec = {"backend": "synthcity", "plugin": plugin, "params": {"delta": 1e-5} if plugin == "dpgan" else {}}
        assert nominal_privacy(spec, plugin)["neighbours"] == audited_relation(spec, plugin) == relation


# -- the under-noised MST control ---------------------------------------------------------------

def test_mst_noise_scale_shrinks_the_noise_and_says_not_dp():
    correct = make_generator({"backend": "mst", "params": {"epsilon": 1.0}})
    control = make_generator({"backend": "mst", "params": {"epsilon": 1.0, "noise_multiplier_scale": 0.25}})
    assert control.noise_multiplier() == pytest.approx(0.25 * correct.noise_multiplier())
    assert correct.privacy()["guarantee"] == "(epsilon, delta)-DP"
    assert control.privacy()["guarantee"].startswith(f"{NOT_DP_NOISE} 0.25")
    from_data = make_generator({"backend": "mst", "params": {"epsilon": 1.0, "domain": "from_data",
                                                             "noise_multiplier_scale": 0.5}})
    assert from_data.privacy()["guarantee"].count("not DP") == 2


@pytest.mark.parametrize("scale", [0, -0.5, 1.5, float("nan")])
def test_mst_noise_scale_outside_zero_one_is_refused(scale):
    with pytest.raises(ConfigError, match="noise_multiplier_scale"):
        make_generator({"backend": "mst", "params": {"epsilon": 1.0, "noise_multiplier_scale": scale}})


# -- the audit of MST and its under-noised control (slow: about a minute on 2 loaded cores) ------

@pytest.mark.slow
def test_audit_flags_under_noised_mst_and_not_mst_as_configured():
    from synthrisk.epsilon_audit.validation import (
        CONTROL_SCALE,
        N_RUNS,
        actual_epsilon,
        audit_mst,
        mst_spec,
        validation_data,
    )

    # Fixed noise seeds: the control's epsilon_lower (about 1.2 against 1) moves with the noise drawn.
    # Both statistics read the same fits; neither flags MST, both flag the control (measured with
    # these seeds: the canary's cells 1.632, MAMA-MIA's 2.062).
    both = (CANARY_CELLS, MAMA_MIA)
    correct_by, control_by = (audit_mst(scale, N_RUNS, noise_seed=2026, statistics=both) for scale in (1.0, CONTROL_SCALE))
    for statistic in both:
        correct, control = correct_by[statistic], control_by[statistic]
        assert correct.nominal_epsilon == control.nominal_epsilon == 1.0
        assert correct.epsilon_lower <= correct.nominal_epsilon and not correct.flagged, statistic
        assert control.epsilon_lower > control.nominal_epsilon and control.flagged, statistic
    # the control really spends far more than it claims; the configured MST spends what it claims
    assert actual_epsilon(mst_spec(CONTROL_SCALE)) > 10 * control.nominal_epsilon
    assert actual_epsilon(mst_spec(1.0)) == pytest.approx(1.0, rel=0.02)

    # the same seeds and noise seed give the same counts
    data, schema = validation_data()
    canary = worst_case_canary(data, schema, bins=16)
    first, again = (canary_counts(mst_spec(CONTROL_SCALE, noise_seed=7), data, schema, canary, WITH, range(3))
                    for _ in "ab")
    pd.testing.assert_frame_equal(first, again)


# -- the workflow stage -------------------------------------------------------------------------

def _stage_settings(**block):
    from synthrisk.epsilon_audit import stage

    generators = {"mst_eps1": {"backend": "mst", "params": {"epsilon": 1.0}}, "cart": {"backend": "cart"}}
    return stage.settings_from_config(block, generators, {"simulation": {}})


@pytest.mark.parametrize("block, message", [
    ({"generators": ["nope"]}, "epsilon_audit.generators: 'nope'"),
    ({"dataset": "adult"}, "epsilon_audit.dataset"),
    ({"generators": ["cart"]}, "generators.cart: the privacy audit needs a DP generator"),
    # synthcity's DPGAN takes delta = 1 / n from the data when none is given: no nominal delta to test
    ({"generators": ["dpgan"], "controls": {"dpgan": {"backend": "synthcity", "plugin": "dpgan"}}}, "params.delta"),
    # PrivBayes claims pure epsilon-DP; a delta would be reported, then fail every fit inside synthcity
    ({"generators": ["pb"], "controls": {"pb": {"backend": "synthcity", "plugin": "privbayes",
                                                "params": {"delta": 1e-5}}}}, "privbayes takes no `delta`"),
    ({"generators": ["mst_eps1"], "family_wise": "yes"}, "epsilon_audit.family_wise"),
])
def test_stage_config_errors_name_the_key(block, message):
    with pytest.raises(ConfigError, match=message):
        _stage_settings(**block)


def test_stage_overrides_epsilon_and_splits_runs_into_blocks():
    from synthrisk.epsilon_audit import stage

    settings = _stage_settings(generators=["mst_eps1"], runs=250, block=100)
    assert stage.audited_spec(settings, "mst_eps1", 0.5)["params"]["epsilon"] == 0.5
    assert settings["specs"]["mst_eps1"]["params"]["epsilon"] == 1.0  # the config entry is left alone
    assert stage.n_blocks(settings) == 3
    assert [list(stage.block_runs(settings, b))[::49] for b in range(3)] == [[0, 49, 98], [100, 149, 198], [200, 249]]


def test_a_blocks_settings_change_only_with_what_it_reads():
    """Snakemake reruns a job whose params change: listing another generator or epsilon, or changing
    the table's confidence, must not redo a generator's blocks of fits."""
    from synthrisk.epsilon_audit import stage

    before = _stage_settings(generators=["mst_eps1"])
    after = _stage_settings(generators=["mst_eps1", "mst_eps10"], epsilons=[0.5, 1.0], confidence=0.9,
                            controls={"mst_eps10": {"backend": "mst", "params": {"epsilon": 10.0}}})
    assert stage.block_settings(after, "mst_eps1") == stage.block_settings(before, "mst_eps1")
    assert list(stage.block_settings(after, "mst_eps10")["specs"]) == ["mst_eps10"]
    assert stage.block_settings(_stage_settings(generators=["mst_eps1"], n_records=100),
                                "mst_eps1") != stage.block_settings(before, "mst_eps1")
    # the family-wise level is the table's, not the fits'
    assert stage.block_settings(_stage_settings(generators=["mst_eps1"], family_wise=False),
                                "mst_eps1") == stage.block_settings(before, "mst_eps1")
    # the relation the blocks are fitted under is the generator's own, and part of what reruns them
    aim = {"aim": {"backend": "synthcity", "plugin": "aim"}}
    assert stage.block_settings(before, "mst_eps1")["neighbours"] == REPLACE_ONE
    assert stage.block_settings(_stage_settings(generators=["aim"], controls=aim), "aim")["neighbours"] == ADD_REMOVE


def _blocks(settings, separated):
    """Blocks of 20 runs per world for every (generator, epsilon), the canary's counts in two columns
    and their pair: the generators in `separated` always 0 without the canary and 100 with it, the
    others drawn alike in both worlds; and MAMA-MIA's weights of every MST generator."""
    rng = np.random.default_rng(1)
    blocks, weights = {}, {}
    for generator in settings["generators"]:
        for epsilon in settings["epsilons"]:
            weights[generator, epsilon] = {"x1": 50, "x2": 50, "x1&x2": 40}
            for world in ("without", "with"):
                counts = {name: (np.full(20, 100 if world == "with" else 0) if generator in separated
                                 else rng.poisson(3, 20)) for name in ("x1", "x2", "x1&x2")}
                blocks[generator, epsilon, world] = [pd.DataFrame({"run": range(20), **counts})]
    return blocks, weights


@pytest.mark.parametrize("family_wise", [True, False])
def test_the_table_states_the_per_audit_and_the_family_wise_level(family_wise, tmp_path):
    from synthrisk.epsilon_audit import stage

    controls = {"control": {"backend": "mst", "params": {"epsilon": 1.0, "noise_multiplier_scale": 0.05}}}
    settings = _stage_settings(generators=["mst_eps1", "control"], controls=controls, epsilons=[0.5, 1.0, 2.0],
                               family_wise=family_wise)
    blocks, weights = _blocks(settings, {"control"})
    table = stage.gather(blocks, settings, weights)
    # both are MST: each (generator, epsilon) has the canary's cells and MAMA-MIA's bound
    assert len(table) == stage.n_bounds(settings) == 12 and (table["bounds"] == 12).all()
    assert list(table["statistic"][:2]) == ["canary cells", "after MAMA-MIA"]
    level = 1 - 0.05 / 12 if family_wise else 0.95
    assert table["confidence"].to_numpy() == pytest.approx([level] * 12)
    assert table["family_confidence"].to_numpy() == pytest.approx([0.95 if family_wise else 0.40] * 12)
    assert set(table["correction"]) == {"bonferroni" if family_wise else "none"}
    assert set(table["neighbours"]) == {REPLACE_ONE}
    # the separated control: no error among its 10 evaluation runs per world, bounded at the per-audit level
    control = table[table["generator"] == "control"]
    assert control["epsilon_lower"].to_numpy() == pytest.approx(
        [epsilon_lower_bound(0, 10, 0, 10, DELTA, level).epsilon_lower] * 6)
    assert (table.loc[table["generator"] == "mst_eps1", "epsilon_lower"] < 0.5).all()
    line = stage.summary_line(table)
    assert ("each of the 12 bounds at 99.58% (Bonferroni): all together at ≥ 95.0%" if family_wise
            else "each of the 12 bounds at 95.00% (no correction): all together at ≥ 40.0%") in line
    stage.write(table, tmp_path, tmp_path / "epsilon_audit.png")
    written = pd.read_csv(tmp_path / "epsilon_audit.csv")
    assert {"statistic", "neighbours", "confidence", "bounds", "family_confidence", "correction"} <= set(written.columns)
    # a block of another format among a world's blocks is refused, not read as NaN counts
    mixed = {**blocks, ("control", 1.0, "with"): [blocks["control", 1.0, "with"][0].rename(columns={"x1&x2": "statistic"})]}
    with pytest.raises(ConfigError, match="control at ε 1: its blocks count different marginals"):
        stage.gather(mixed, settings, weights)
    aim = {"aim": {"backend": "synthcity", "plugin": "aim"}}  # not MST: the canary's cells alone
    one_settings = _stage_settings(generators=["aim"], controls=aim)
    blocks, weights = _blocks(one_settings, {"aim"})
    one = stage.gather(blocks, one_settings, weights)
    assert list(one["statistic"]) == ["canary cells"]
    assert one.loc[0, "confidence"] == 0.95 and stage.level_text(one) == "one bound, at 95.0%"


def test_synthcity_dp_plugins_are_audited_in_their_environment_on_the_public_cells():
    """A synthcity DP plugin states its (epsilon, delta) and that its domain comes from the data; the
    audit accepts it and draws the canary's cells from MST's public discretisation (it has none)."""
    from synthrisk.epsilon_audit import stage
    from synthrisk.generators.mst import DEFAULT_BINS

    controls = {"privbayes": {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 1.0}},
                "dpgan": {"backend": "synthcity", "plugin": "dpgan", "params": {"delta": 1e-5}}}
    settings = _stage_settings(generators=["privbayes", "dpgan"], controls=controls, epsilons=[0.5, 2.0])
    privacy = nominal_privacy(stage.audited_spec(settings, "privbayes", 0.5), "privbayes")
    assert (privacy["epsilon"], privacy["delta"], privacy["domain"]) == (0.5, 0.0, "from_data")
    assert privacy["guarantee"].startswith("not DP: domain read from the data")
    assert "n times too small" in privacy["guarantee"]  # synthcity's PrivBayes's own fault, stated
    assert nominal_privacy(stage.audited_spec(settings, "dpgan", 2.0), "dpgan")["delta"] == 1e-5
    assert stage.canary_bins(settings["specs"]["privbayes"], "privbayes") == DEFAULT_BINS
    assert stage.canary_bins({"backend": "mst", "params": {"epsilon": 1.0, "bins": 8}}, "mst") == 8
    assert make_generator({"backend": "synthcity", "plugin": "adsgan"}).privacy() is None  # not a DP plugin








def test_report_shows_flagged_audits_in_red():
    from synthrisk.report.html import frame_html

    table = pd.DataFrame({"generator": ["mst", "<control>"], "epsilon_lower": [0.0, 1.5953], "flagged": [False, True]})
    page = frame_html(table)
    assert "color: #c00" in page and "row1" in page.split("color: #c00")[0]  # the flagged row, not the other
    assert "&lt;control&gt;" in page and "1.6" in page                      # escaped, numbers as elsewhere
    assert "color" not in frame_html(table.assign(flagged=False))           # nothing flagged: the plain table


@pytest.mark.parametrize("overlays", [["config/audit.yaml"], ["config/audit.yaml", "config/audit_synthcity.yaml"],
                                      ["config/audit_aim.yaml"]])
def test_shipped_audit_overlays_give_valid_settings_on_the_quick_config(overlays):
    """The overlays the README tells users to layer on config/config.yaml, merged as Snakemake merges
    config files, give settings the stage accepts, and each audited generator states its (epsilon, delta)."""
    import yaml
    from helpers import ROOT
    from snakemake.utils import update_config

    from synthrisk.epsilon_audit import stage

    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    for overlay in overlays:
        update_config(config, yaml.safe_load((ROOT / overlay).read_text()))
    settings = stage.settings_from_config(config["epsilon_audit"], config["generators"], config["datasets"])
    assert settings["generators"] and stage.n_blocks(settings) >= 1
    schema = load_schema(ROOT / config["datasets"][settings["dataset"]]["schema"])
    assert list(schema.restricted(settings["columns"], what="epsilon_audit.columns").columns) == settings["columns"]
    for generator in settings["generators"]:
        assert nominal_privacy(stage.audited_spec(settings, generator, settings["epsilons"][0]), generator)["epsilon"]
