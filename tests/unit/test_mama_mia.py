"""MAMA-MIA on MST (synthrisk.mia.mama_mia, the `mama_mia` measure): the authors' threshold, the
score by hand, the focal points from MST's own selection, and the measure as the audit runs it with
the generator in hand: exact under its null (one release that never saw the members, many member /
holdout splits: the argument holds given the release), and finding the members of a release MST
fitted on them at a large ε."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthrisk
from synthrisk.data.schema import DatasetSchema
from synthrisk.errors import ConfigError
from synthrisk.generators.mst import MSTGenerator
from synthrisk.generators.run import run_generator
from synthrisk.measures.base import GeneratorInHand
from synthrisk.mia import mama_mia

MST = {"backend": "mst", "params": {"epsilon": 1000.0, "noise_seed": 7}}


@pytest.fixture(scope="module")
def schema():
    return DatasetSchema.from_dict({
        "name": "small", "source": {"path": "unused.csv"},
        "columns": {"x": {"type": "integer", "bounds": [0, 15]}, "k": {"type": "integer", "bounds": [0, 4]},
                    "c": {"type": "categorical", "levels": ["a", "b", "c", "d"]}},
        "quasi_identifiers": ["x", "k"], "sensitive": ["c"]})


def _records(schema, n, seed, first_row_id=0):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 5, n)
    frame = pd.DataFrame({"x": np.clip(3 * k + rng.integers(0, 4, n), 0, 15), "k": k,
                          "c": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.15, 0.05])})
    return schema.conform(frame).assign(row_id=np.arange(first_row_id, first_row_id + n))


@pytest.mark.parametrize("epsilon, share", [(0.5, 0.5), (1.0, 0.6), (9.99, 0.6), (10.0, 0.7), (100.0, 0.8),
                                            (1000.0, 0.85), (0.001, 0.5)])
def test_the_threshold_is_the_authors_table(epsilon, share):
    assert mama_mia.threshold_share(epsilon) == share


def test_focal_points_keep_the_pairs_selected_often_enough():
    weights = Counter({("a", "b"): 50, ("b", "c"): 36, ("a", "c"): 34})
    assert mama_mia.kept(weights, 10.0) == {("a", "b"): 50, ("b", "c"): 36}  # at least 0.7 x 50 = 35
    assert len(mama_mia.kept(weights, 1.0)) == 3  # at least 30
    assert mama_mia.kept(Counter(), 1.0) == {}


def test_the_score_is_the_weighted_mean_of_the_release_over_reference_shares(schema):
    columns = MSTGenerator(epsilon=1.0).domain_columns(_records(schema, 5, 0).drop(columns="row_id"), schema)
    reference = schema.conform(pd.DataFrame({"x": [0, 0, 5, 5], "k": [0, 0, 1, 2], "c": ["a", "b", "a", "a"]}))
    release = schema.conform(pd.DataFrame({"x": [0, 0, 0, 5], "k": [0, 0, 1, 2], "c": ["a", "a", "a", "c"]}))
    record = reference.iloc[[0]]
    # pair (x, k): the record's cell (0, 0) is 2/4 of the release and 2/4 of the reference: ratio 1;
    # pair (k, c): its cell (0, a) is 2/4 of the release and 1/4 of the reference: ratio 2
    def codes(frame):
        return mama_mia.mst_codes(frame, columns)

    got = mama_mia.scores(codes(record), codes(release), codes(reference), {("x", "k"): 3, ("k", "c"): 1})
    assert got == pytest.approx([(3 * 1.0 + 1 * 2.0) / 2])
    # a cell the release lacks counts 1e-10 of it
    lone = reference.iloc[[1]]
    assert mama_mia.scores(codes(lone), codes(release), codes(reference), {("k", "c"): 1}) == \
        pytest.approx([1e-10 / 0.25])
    # a set of any size: the record's cell (0, 0, a) of (x, k, c) is 2/4 of the release, 1/4 of the reference
    assert mama_mia.scores(codes(record), codes(release), codes(reference), {("x", "k", "c"): 2}) == \
        pytest.approx([2 * 2.0])


def test_focal_points_come_from_msts_own_selection(schema):
    records = _records(schema, 400, 1).drop(columns="row_id")
    weights = mama_mia.focal_points(MST, records, schema, 200, runs=5, seed=0)
    assert sum(weights.values()) == 5 * 2  # a tree on 3 columns has 2 edges, each run
    # at a large epsilon the selection is the noiseless tree: x and k are tied, c is independent of both
    assert weights[("k", "x")] == 5
    # the selections are the auditor's simulations: their noise is seeded, so the same call gives the same
    # focal points even when the entry leaves MST's noise to the operating system
    unseeded = {"backend": "mst", "params": {"epsilon": 1.0}}
    assert mama_mia.focal_points(unseeded, records, schema, 200, 8, 3) == \
        mama_mia.focal_points(unseeded, records, schema, 200, 8, 3)
    with pytest.raises(ConfigError, match="knows MST only"):
        mama_mia.mst_of({"backend": "cart"}, seed=0)
    assert mama_mia.is_mst(MST) and not mama_mia.is_mst({"backend": "cart"}) and not mama_mia.is_mst({"backend": "x"})


@pytest.fixture(scope="module")
def population(schema):
    return _records(schema, 3000, 11)


@pytest.mark.slow  # a null study of MST refits: `make test-all` and CI run it
def test_a_release_that_never_saw_the_members_holds_the_level(schema, population):
    """One MST release fitted on other records; 30 random member / holdout splits of the rest: the test
    at 0.05 and the naming at 0.045 fire in a share their level allows (99.9 % binomial bound: 6 of 30)."""
    other = population.iloc[:300].drop(columns="row_id")
    release, status = run_generator("mst", MST, other, schema, n=300, seed=0)
    assert status["status"] == "ok"
    rest = population.iloc[300:].reset_index(drop=True)
    fired = named = 0
    for split in range(30):
        order = np.random.default_rng(split).permutation(len(rest))
        members, holdout = rest.iloc[order[:300]], rest.iloc[order[300:600]]
        found = synthrisk.measure("mama_mia", members, release, holdout, schema=schema, generator=MST, runs=5,
                                  seed=split)
        fired += found.p_value <= 0.05
        named += found.details["n_identified"] > 0
    assert fired <= 6 and named <= 6, (fired, named)


def test_members_of_an_mst_release_at_a_large_epsilon_are_found(schema, population):
    members, holdout = population.iloc[:300], population.iloc[300:600]
    release, status = run_generator("mst", MST, members.drop(columns="row_id"), schema, n=300, seed=0)
    assert status["status"] == "ok"
    found = synthrisk.measure("mama_mia", members, release, holdout, schema=schema, generator=MST, runs=5)
    assert found.value > 0.55 and found.p_value < 0.01, found.verdict
    kept = [f for f in found.details["focal_points"] if f["kept"]]
    assert kept and all(len(f["columns"]) == 2 for f in kept) and found.details["knows"] == "MST"


def test_it_is_skipped_without_mst_in_hand(schema, population):
    members, holdout = population.iloc[:100], population.iloc[100:200]
    with pytest.raises(ConfigError, match="needs the generator in hand, and that generator MST or synthcity's"):
        synthrisk.measure("mama_mia", members, members, holdout, schema=schema, generator="cart")


# MAMA-MIA on synthcity's PrivBayes: what runs here without synthcity's environment (its network
# searches run there: tests/workflow/test_synthcity.py's slow test).

PRIVBAYES = {"backend": "synthcity", "plugin": "privbayes", "params": {"epsilon": 10.0}}


def test_privbayes_cells_are_exact_values_numbered_over_the_frames(schema):
    from synthrisk.mia.mama_mia_privbayes import value_codes

    first = schema.conform(pd.DataFrame({"x": [0, 7, 7], "k": [1, 1, 2], "c": ["a", None, "b"]}))
    second = schema.conform(pd.DataFrame({"x": [7, 3], "k": [2, 1], "c": [None, "a"]}))
    one, two = value_codes([first, second], schema)
    assert one["x"][1] == one["x"][2] == two["x"][0] and two["x"][1] not in one["x"]
    assert one["c"][1] == two["c"][0] and len({*one["c"], *two["c"]}) == 3  # a missing category is a level
    assert one["c"][0] == two["c"][1]
    # on those codes the score reads a child-and-parents set as any other set
    got = mama_mia.scores(one, two, one, {("c", "k", "x"): 1})
    assert got[0] == pytest.approx(1e-10 / (1 / 3)) and got[2] == pytest.approx(1e-10 / (1 / 3))


def test_the_audit_takes_a_synthcity_generator_only_with_its_environment_and_checks_it_there(monkeypatch, tmp_path):
    """Refused while .venv-synthcity is not built; once it is, the entry is checked by the environment's
    own library (here this interpreter stands for it: without synthcity, the check is refused, naming
    why) and the generator is refitted there (`refit_in_environment`), with any number of shadow fits."""
    import sys

    from synthrisk.generators import environments
    from synthrisk.release_audit.generator import check_shadow_fits, generator_in_hand

    monkeypatch.setattr(environments, "built_python", lambda spec, repo: None)
    with pytest.raises(ConfigError, match=r"'synthcity' runs in its own environment .*which is not built in"):
        generator_in_hand(PRIVBAYES)
    monkeypatch.setattr(environments, "built_python", lambda spec, repo: Path(sys.executable))
    with pytest.raises(ConfigError, match=r"--generator synthcity \(--generator-config\): .*No module named 'synthcity'"):
        generator_in_hand({"backend": "synthcity", "plugin": "adsgan"})
    with pytest.raises(ConfigError, match="compress_dataset"):
        generator_in_hand({**PRIVBAYES, "params": {"epsilon": 1.0, "compress_dataset": True}})
    hand = GeneratorInHand("pb", PRIVBAYES, python=sys.executable, refit_in_environment=True)
    assert hand.refittable and check_shadow_fits(40, hand) == 40


@pytest.mark.parametrize("name, settings", [("shadow_models", {}), ("ensemble", {"mode": "shadow"})])
def test_the_workflow_does_not_refit_a_generator_of_another_environment(name, settings, schema, population):
    """In a workflow's measure job the generator's environment runs MAMA-MIA's search only: its hundreds
    of refits there are the steward's audit's (`refit_in_environment`)."""
    from synthrisk.measures.base import MeasureInput, NotApplicable
    from synthrisk.measures.registry import measure

    members, holdout = population.iloc[:100], population.iloc[100:200]
    data = MeasureInput(members=members, holdout=holdout, aux=holdout.iloc[:0], synthetic=members, schema=schema,
                        population_size=3000, seed=0, generator=GeneratorInHand("pb", PRIVBAYES, python="/x/python"))
    attack = measure(name)
    with pytest.raises(NotApplicable, match="runs in an environment of its own .*the workflow does not refit it"):
        attack.run(data, attack.settings(settings), None)
    assert not attack.names_members(data.generator)
