import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthrisk.data.schema import DatasetSchema
from synthrisk.data.simulate import simulate
from synthrisk.errors import ConfigError, DataError
from synthrisk.generators import make_generator
from synthrisk.mia import GowerSpace, gower_matrix, membership_attack, nearest_synthetic
from synthrisk.mia.kde import DistanceDensity, member_probability


def brute_force_gower(a: pd.DataFrame, b: pd.DataFrame, schema, ranges) -> np.ndarray:
    """Gower by its definition, one pair at a time (with this project's missing-value rule)."""
    out = np.zeros((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            total = 0.0
            for column in schema.columns:
                x, y = a[column].iloc[i], b[column].iloc[j]
                if schema.is_categorical(column):
                    total += float(not ((pd.isna(x) and pd.isna(y)) or x == y))
                elif pd.isna(x) or pd.isna(y):
                    total += 0.0 if (pd.isna(x) and pd.isna(y)) else 1.0
                else:
                    total += min(abs(float(x) - float(y)) / ranges[column], 1.0)
            out[i, j] = total / len(schema.columns)
    return out


def test_engine_matches_brute_force_with_missing_values(mixed, mixed_schema):
    a, b = mixed.iloc[:60].reset_index(drop=True), mixed.iloc[60:200].reset_index(drop=True)
    space = GowerSpace.fit(mixed, mixed_schema)
    ranges = {c: float(mixed[c].astype(float).max() - mixed[c].astype(float).min()) for c in mixed_schema.numeric}
    reference = brute_force_gower(a, b, mixed_schema, ranges)
    np.testing.assert_allclose(gower_matrix(a, b, space), reference, atol=1e-12)
    distance, index = nearest_synthetic(a, b, space, block_size=7)
    np.testing.assert_allclose(distance, reference.min(axis=1), atol=1e-12)
    np.testing.assert_array_equal(index, reference.argmin(axis=1))  # ties: lowest index, like argmin


def test_zero_range_column_counts_mismatches(mixed_schema, mixed):
    const = mixed.assign(num=1.0)
    space = GowerSpace.fit(const, mixed_schema)
    other = const.assign(num=2.0)
    d, _ = nearest_synthetic(const.iloc[:5], other, space)
    assert np.all(d >= 1 / 4 - 1e-12) and np.all(np.isfinite(d))


def test_kde_probabilities_bounded_and_monotone():
    rng = np.random.default_rng(0)
    near = np.concatenate([np.zeros(50), rng.beta(2, 30, 500)])
    far = rng.beta(4, 20, 500)
    grid = np.linspace(0.0, 0.4, 200)
    p = member_probability(grid, DistanceDensity().fit(near), DistanceDensity().fit(far), 0.5)
    assert np.all((p >= 0) & (p <= 1))
    assert p[0] > 0.9  # exact copies: point mass only the members have
    middle = (grid > 0.01) & (grid < 0.15)  # where both samples have data; the tails are sparse
    assert np.all(np.diff(p[middle]) <= 1e-9)
    density = DistanceDensity().fit(far)
    x = np.linspace(1e-6, 1, 20001)
    assert abs(density.density(x).sum() * (x[1] - x[0]) + density.pi0_ - 1) < 1e-2  # reflection keeps the mass


@pytest.fixture(scope="module")
def population(sim_schema):
    return sim_schema.conform(simulate(3000, strength=0.8, seed=9))


def attack(population, schema, backend, seed=0):
    members, non_members, aux = population.iloc[:1000], population.iloc[1000:2000], population.iloc[2000:]
    synthetic = make_generator({"backend": backend}, seed=seed).fit(members, schema).sample(1000, seed)
    return membership_attack(members, non_members, synthetic, schema, aux=aux, seed=seed)


def test_identity_is_attackable_and_independent_is_chance(population, sim_schema):
    identity = attack(population, sim_schema, "identity")
    assert identity.true_distribution["auc"] > 0.999 and identity.baseline["auc"] > 0.999
    assert identity.true_distribution["tpr_at_fpr"]["1e-03"] > 0.99
    independent = attack(population, sim_schema, "independent")
    se = np.sqrt((1000 + 1000 + 1) / (12 * 1000 * 1000))  # AUC's standard error under the null
    for metrics in (independent.true_distribution, independent.baseline, independent.realistic):
        assert abs(metrics["auc"] - 0.5) < 4 * se, metrics["auc"]


def test_deterministic_and_resolution_limit(population, sim_schema):
    a, b = attack(population, sim_schema, "cart", seed=2), attack(population, sim_schema, "cart", seed=2)
    assert a.to_json() == b.to_json()
    assert set(a.true_distribution["tpr_at_fpr"]) == {"1e-01", "1e-02", "1e-03"}  # 1000 non-members
    assert a.true_distribution["fpr_floor"] == 1e-3


def test_bad_inputs(population, sim_schema):
    m, nm = population.iloc[:100], population.iloc[100:200]
    with pytest.raises(DataError, match="synthetic and the schema have different columns"):
        membership_attack(m, nm, m.drop(columns="x1"), sim_schema, realistic=False)
    with pytest.raises(DataError, match="non-members is empty"):
        membership_attack(m, nm.iloc[:0], m, sim_schema, realistic=False)
    with pytest.raises(ConfigError, match="needs an auxiliary set"):
        membership_attack(m, nm, m, sim_schema)
    with pytest.raises(ConfigError, match=r"thresholds must lie in \[0, 1\]"):
        membership_attack(m, nm, m, sim_schema, realistic=False, thresholds=[0.1, 1.5])


def test_cli_prints_the_design_json(tmp_path, population):
    population.iloc[:300].to_parquet(tmp_path / "m.parquet")
    population.iloc[300:600].to_parquet(tmp_path / "nm.parquet")
    population.iloc[600:900].to_csv(tmp_path / "syn.csv", index=False)
    population.iloc[900:1200].to_parquet(tmp_path / "aux.parquet")
    done = subprocess.run([sys.executable, "-m", "synthrisk.cli", "mia", "--members", str(tmp_path / "m.parquet"),
                           "--non-members", str(tmp_path / "nm.parquet"), "--synthetic", str(tmp_path / "syn.csv"),
                           "--aux", str(tmp_path / "aux.parquet"), "--schema", "config/datasets/simulation.yaml",
                           "--json"], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    for block in (out, out["baseline"], out["realistic"]):
        assert {"auc", "f1", "precision", "tpr_at_fpr"} <= set(block)


def test_interpolated_density_matches_the_exact_kernel_sum():
    from synthrisk.mia.kde import DistanceDensity

    rng = np.random.default_rng(3)
    fitted = np.abs(rng.normal(0.05, 0.03, 3000))
    queries = np.concatenate([np.abs(rng.normal(0.05, 0.03, 20000)), [1e-6, 0.4, 0.999]])
    density = DistanceDensity().fit(fitted)
    approximate = density.density(queries)
    exact = (1 - density.pi0_) * density._reflected(queries)
    assert np.isfinite(approximate).all()
    body = exact > 1e-200
    assert np.max(np.abs(approximate[body] - exact[body]) / exact[body]) < 1e-3
    assert np.all(approximate[~body] < 1e-150)
