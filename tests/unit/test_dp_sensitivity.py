"""Every DP release in the package against its accounting (issue #13 §3).

For each release (the clipped sufficient statistics, and each of MST's three rounds) we build
neighbouring datasets (replace one record), including adversarial ones: the most extreme record the
public domain allows, a record that creates a cell no other record occupies, a missing value. The
release is computed before noise on both, and its l2 change must never exceed the sensitivity the
accountant is charged with: the noise standard deviation actually used divided by the noise
multiplier. A second group checks with dp-accounting's PLD accountant that the composed guarantee
is the configured (epsilon, delta).
"""

from __future__ import annotations

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting import pld

from synthrisk.data import load_dataset
from synthrisk.data.schema import DatasetSchema
from synthrisk.dp.families import Design, GaussianFamily, GLMFamily
from synthrisk.dp.mechanism import clip_rows, gaussian_sigma, release_statistics
from synthrisk.errors import DomainError
from synthrisk.generators.base import make_generator
from synthrisk.generators.mst import NOT_DP, one_way_release, round_sensitivities, score_release, tree_release

EPSILON, DELTA = 1.0, 1e-6


def _composed_epsilon(noise_multipliers: list[float], delta: float) -> float:
    accountant = pld.PLDAccountant()
    for z in noise_multipliers:
        accountant.compose(dp_accounting.GaussianDpEvent(z))
    return accountant.get_epsilon(delta)


# -- MST ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim_small(sim_schema):
    return load_dataset(sim_schema).iloc[:300].reset_index(drop=True)


@pytest.fixture(scope="module")
def mst_fitted(sim_small, sim_schema):
    return make_generator({"backend": "mst", "params": {"epsilon": EPSILON, "delta": DELTA, "iters": 5}},
                          seed=0).fit(sim_small, sim_schema)


def _extreme_records(schema: DatasetSchema, data: pd.DataFrame) -> list[dict]:
    """Records the public domain allows that move the release most: every column at a bound or a
    rare level (a new cell for almost every marginal), beyond the bounds, and all missing."""
    high, low, missing = {}, {}, {}
    for column in data.columns:
        if schema.is_categorical(column):
            counts = data[column].value_counts()
            unseen = [v for v in schema.public_levels(column) if v not in counts.index]
            high[column] = unseen[0] if unseen else counts.index[-1]
            low[column] = schema.public_levels(column)[0]
        else:
            lo, hi = schema.public_bounds(column)
            high[column], low[column] = hi * 10 if hi > 0 else hi + 100, lo
        missing[column] = None
    return [high, low, missing]


def _neighbours(schema, data, rng, n_random=20):
    for record in _extreme_records(schema, data):
        for index in (0, len(data) - 1):
            yield index, record
    for _ in range(n_random):
        yield int(rng.integers(len(data))), data.iloc[int(rng.integers(len(data)))].to_dict()


def _replace(data: pd.DataFrame, schema, index: int, record: dict) -> pd.DataFrame:
    out = data.copy()
    for column, value in record.items():
        if not schema.is_categorical(column) and value is not None:
            value = min(value, np.iinfo(np.int64).max) if pd.api.types.is_integer_dtype(out[column].dtype) else value
        out.loc[index, column] = value
    return out


def test_mst_round_releases_move_no_more_than_their_charged_sensitivity(mst_fitted, sim_small, sim_schema):
    gen = mst_fitted
    columns = gen.columns_
    charged = {name: sigma / gen.noise_multiplier() for name, sigma in gen.noise_.items()}
    sizes = {c: col.size for c, col in gen.domain_cols_.items()}
    pairs = [(a, b) for i, a in enumerate(columns) for b in columns[i + 1:]]
    rng = np.random.default_rng(0)
    shares = {c: rng.dirichlet(np.ones(sizes[c])) for c in columns}  # any public shares
    chain = list(zip(columns[:-1], columns[1:]))  # any tree with p - 1 edges

    def releases(frame):
        codes = {c: col.encode(frame[c]) for c, col in gen.domain_cols_.items()}
        return {"one_way": np.concatenate(one_way_release(codes, sizes)),
                "scores": score_release(codes, sizes, pairs, shares),
                "tree": np.concatenate(tree_release(codes, sizes, chain))}

    base = releases(sim_small)
    largest = dict.fromkeys(base, 0.0)
    for index, record in _neighbours(sim_schema, sim_small, rng):
        moved = releases(_replace(sim_small, sim_schema, index, record))
        for name in base:
            change = float(np.linalg.norm(moved[name] - base[name]))
            assert change <= charged[name] + 1e-9, (name, record, change, charged[name])
            largest[name] = max(largest[name], change)
    # The bound is attained by a record that differs in every column: the whole round moves by
    # sqrt(2) per vector, not sqrt(2) in all (the accounting error of issue #13 §1).
    p = len(columns)
    assert largest["one_way"] == pytest.approx(np.sqrt(2 * p))
    assert largest["tree"] == pytest.approx(np.sqrt(2 * (p - 1)))
    assert charged == pytest.approx(round_sensitivities(p))


def test_mst_rounds_compose_to_the_configured_guarantee(mst_fitted):
    gen = mst_fitted
    multipliers = [gen.noise_[name] / s for name, s in round_sensitivities(len(gen.columns_)).items()]
    assert len(multipliers) == 3
    assert _composed_epsilon(multipliers, DELTA) == pytest.approx(EPSILON, rel=0.02)
    # And the whole budget is used: the same rounds with 10 % less noise would exceed epsilon.
    assert _composed_epsilon([0.9 * z for z in multipliers], DELTA) > EPSILON * 1.05


def test_mst_domain_is_the_public_metadata_only(sim_small, sim_schema):
    gen = make_generator({"backend": "mst", "params": {"epsilon": EPSILON, "iters": 5}}, seed=0)
    moved = sim_small.copy()
    moved.loc[0, "x1"], moved.loc[1, "age"] = 3.9, 18  # other extremes, same domain
    a = gen.domain_columns(sim_small, sim_schema)
    b = gen.domain_columns(moved, sim_schema)
    for column in sim_small.columns:
        if sim_schema.is_categorical(column):
            assert a[column].levels == b[column].levels
            assert a[column].levels[:-1] == sim_schema.public_levels(column)
        else:
            assert np.array_equal(a[column].edges, b[column].edges)
            assert (a[column].edges[0], a[column].edges[-1]) == sim_schema.public_bounds(column)
    assert gen.privacy()["guarantee"] == "(epsilon, delta)-DP"


def test_mst_without_public_domain_names_the_column_unless_opted_in(sim_small, sim_schema):
    raw = sim_schema.to_dict()
    raw["columns"]["x2"].pop("bounds")
    bare = DatasetSchema.from_dict(raw)
    gen = make_generator({"backend": "mst", "params": {"epsilon": EPSILON, "iters": 5}}, seed=0)
    with pytest.raises(DomainError, match="'x2'.*bounds"):
        gen.fit(sim_small, bare)
    opted = make_generator({"backend": "mst", "params": {"epsilon": EPSILON, "iters": 5, "domain": "from_data"}},
                           seed=0)
    opted.fit(sim_small, bare)
    assert opted.privacy()["guarantee"] == NOT_DP
    assert len(opted.sample(50, 0)) == 50


# -- the sufficient-statistic release ----------------------------------------------------------

def _glm_records(rng, n):
    design = Design.from_levels({"x1": ["0", "1", "2"], "x2": ["0", "1"]})
    family = GLMFamily("poisson", design.cells, design.names)
    return family, {"cell": rng.integers(0, 5, n), "y": rng.poisson(2.0, n).astype(float)}


@pytest.mark.parametrize("clip", [0.5, 3.0, 50.0])
def test_sufficient_statistic_release_moves_no_more_than_2B_over_n(clip):
    rng = np.random.default_rng(1)
    n = 400
    cases = [(GaussianFamily(), {"y": rng.normal(0, 1, n)}, [{"y": 1e6}, {"y": -1e6}, {"y": 0.0}]),
             (*_glm_records(rng, n), [{"cell": 5, "y": 1e4}, {"cell": 0, "y": 0.0}])]  # cell 5: empty
    for family, data, extremes in cases:
        base = clip_rows(family.statistic(data), clip).mean(axis=0)
        charged = release_statistics(family.statistic(data), EPSILON, DELTA, clip, rng, family.name).sensitivity
        assert charged == pytest.approx(2 * clip / n)
        worst = 0.0
        for record in extremes + [{k: v[j] for k, v in data.items()} for j in rng.integers(0, n, 10)]:
            for index in (0, n - 1):
                moved = {k: v.copy() for k, v in data.items()}
                for k, value in record.items():
                    moved[k][index] = value
                change = np.linalg.norm(clip_rows(family.statistic(moved), clip).mean(axis=0) - base)
                assert change <= charged * (1 + 1e-12), (family.name, record, change, charged)
                worst = max(worst, change)
        assert worst > 0.45 * charged  # adversarial records reach the bound's order (B/n of 2B/n)


def test_sufficient_statistic_release_spends_exactly_its_budget():
    rng = np.random.default_rng(2)
    release = release_statistics(np.ones((1000, 2)), EPSILON, DELTA, 1.0, rng, "gaussian")
    assert release.sigma == pytest.approx(gaussian_sigma(EPSILON, DELTA, release.sensitivity))
    assert _composed_epsilon([release.sigma / release.sensitivity], DELTA) == pytest.approx(EPSILON, rel=0.02)
