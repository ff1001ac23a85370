"""The Gower search (trie of categorical signatures, pruned passes) against a brute-force reference:
identical distances, bit for bit, and identical tie-broken indices, on data built to tie."""

import numpy as np
import pandas as pd
import pytest

from synthrisk.anonymity._inputs import sub_schema
from synthrisk.data.schema import DatasetSchema
from synthrisk.mia import GowerSpace, gower_matrix, nearest_synthetic
from synthrisk.mia.gower import k_nearest

CATEGORICAL = {f"c{k}": ["a", "b", "c"][: 2 + k % 2] for k in range(6)}
NUMERIC = ["n0", "n1", "flat"]

SCHEMA = DatasetSchema.from_dict({
    "name": "ties", "source": {"path": "unused.csv"},
    "columns": {**{c: {"type": "integer"} for c in NUMERIC},
                **{c: {"type": "categorical"} for c in CATEGORICAL}},
    "quasi_identifiers": NUMERIC + list(CATEGORICAL)[:-1], "sensitive": [list(CATEGORICAL)[-1]],
})


def tied_records(n: int, seed: int) -> pd.DataFrame:
    """Few levels, few integer values, missing values everywhere, a constant column: most
    distances are shared by many records."""
    rng = np.random.default_rng(seed)
    frame = {c: np.where(rng.random(n) < 0.1, None, rng.choice(levels, n)) for c, levels in CATEGORICAL.items()}
    for c in ("n0", "n1"):
        frame[c] = pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 4, n)), dtype="Int64")
    frame["flat"] = pd.array(np.full(n, 7), dtype="Int64")
    return SCHEMA.conform(pd.DataFrame(frame))


@pytest.fixture(scope="module")
def query_and_synthetic():
    query = tied_records(70, 1)
    synthetic = tied_records(300, 2)
    # exact copies of queries, a level the real data never had, and values off the constant
    synthetic = pd.concat([synthetic, query.iloc[::3]], ignore_index=True)
    synthetic.loc[::17, "c0"] = "z"
    synthetic.loc[::13, "flat"] = 8
    return query, synthetic


def brute_force_sums(query: pd.DataFrame, synthetic: pd.DataFrame, space: GowerSpace) -> np.ndarray:
    """Every pair's Gower sum, one query at a time, accumulated in the documented order: the
    categorical mismatch count, then each numeric term (capped at 1; missing: 0 with missing,
    1 with a value) in column order."""
    q_num, q_cat = space.encode(query)
    s_num, s_cat = space.encode(synthetic)
    sums = np.empty((len(query), len(synthetic)))
    for i in range(len(query)):
        total = (q_cat[i] != s_cat).sum(axis=1).astype(np.float64)
        for c in range(q_num.shape[1]):
            a, b = q_num[i, c], s_num[:, c]
            term = np.where(np.isnan(a) & np.isnan(b), 0.0,
                            np.where(np.isnan(a) | np.isnan(b), 1.0, np.minimum(np.abs(a - b), 1.0)))
            total = total + term
        sums[i] = total
    return sums


@pytest.mark.parametrize("columns", [NUMERIC + list(CATEGORICAL), list(CATEGORICAL), NUMERIC, ["n0", "c0"]])
def test_search_is_the_brute_force_bit_for_bit(query_and_synthetic, columns):
    query, synthetic = (frame[columns] for frame in query_and_synthetic)
    space = GowerSpace.fit(query, sub_schema(SCHEMA, columns))
    sums = brute_force_sums(query, synthetic, space)
    order = np.argsort(sums, axis=1, kind="stable")  # equal sums: the lower synthetic index first
    assert (np.diff(np.sort(sums, axis=1)[:, :5], axis=1) == 0).mean() > 0.3  # the data do tie
    for k in (1, 2, 5):
        distance, index = k_nearest(query, synthetic, space, k, block_size=16)
        np.testing.assert_array_equal(index, order[:, :k])
        np.testing.assert_array_equal(distance, np.take_along_axis(sums, order[:, :k], axis=1) / space.n_columns)
    d1, i1 = nearest_synthetic(query, synthetic, space, block_size=16)
    np.testing.assert_array_equal(i1, order[:, 0])
    np.testing.assert_array_equal(d1, sums[np.arange(len(sums)), order[:, 0]] / space.n_columns)
    np.testing.assert_array_equal(gower_matrix(query, synthetic, space), sums / space.n_columns)


def test_more_neighbours_than_records(query_and_synthetic):
    query, synthetic = query_and_synthetic
    space = GowerSpace.fit(query, SCHEMA)
    distance, index = k_nearest(query.iloc[:5], synthetic.iloc[:3], space, 4)
    assert np.all(index[:, 3] == -1) and np.all(np.isinf(distance[:, 3]))
    assert sorted(index[0, :3]) == [0, 1, 2]
