"""Exact Gower nearest-neighbour search of query records among synthetic records.

Gower distance between records x and y over p columns:

    d(x, y) = (1/p) * [ sum_numeric min(|x_k - y_k| / range_k, 1) + sum_categorical [x_k != y_k] ]

with each numeric range taken from the *real* data (so all tables share one scale, unlike the
per-table min-max scaling of the MIA-KDE code). Per-column contributions are capped at 1 so that
synthetic values outside the real range keep d in [0, 1]. A numeric column with zero range in the
real data contributes [x_k != y_k] instead of dividing by zero.

Missing values (a documented alternative to Gower's rule of dropping the column from the mean,
which would make d a non-metric and forbid pruning): a categorical missing value is a level of its
own; a numeric pair contributes 0 when both are missing and 1 (the maximum) when one is.

The search (synthrisk.mia.gower_search) is exact and compiled with numba, parallel over query
records: the synthetic records are grouped by their categorical codes in a trie, and a group whose
mismatch count already exceeds the k-th best distance is skipped whole; inside a group, candidates
are dropped as soon as their partial sum exceeds it. Sums are accumulated in one fixed order, so
distances are bitwise those of a brute-force loop in that order; ties go to the lowest synthetic
index. Memory is O(n_query + n_synthetic): no query x synthetic matrix is built.
Why not a library: Gower is an L1 distance after scaling (numeric by 1/(range p), one-hot
categoricals by 1/(2p)), so cKDTree(p=1) and faiss' flat L1 index are exact too; the benchmark
(benchmarks/gower_nn.py) measures them against this search on the same data.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..errors import DataError
from .gower_search import SignatureTrie


@dataclass(frozen=True)
class GowerSpace:
    """Column scaling learned from the real data; encodes any frame with the same columns."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    minimum: np.ndarray
    ranges: np.ndarray
    levels: tuple[dict, ...]

    @classmethod
    def fit(cls, real: pd.DataFrame, schema: DatasetSchema) -> GowerSpace:
        numeric = tuple(schema.numeric)
        categorical = tuple(schema.categorical)
        values = numeric_values(real[list(numeric)]) if numeric else np.zeros((len(real), 0))
        with np.errstate(all="ignore"):
            minimum = np.nan_to_num(np.nanmin(values, axis=0)) if numeric else np.zeros(0)
            ranges = np.nan_to_num(np.nanmax(values, axis=0) - minimum) if numeric else np.zeros(0)
        levels = tuple({v: i for i, v in enumerate(dict.fromkeys(category_strings(real[c])))}
                       for c in categorical)
        return cls(numeric, categorical, minimum, ranges, levels)

    @property
    def n_columns(self) -> int:
        return len(self.numeric) + len(self.categorical)

    def encode(self, frame: pd.DataFrame, what: str = "data") -> tuple[np.ndarray, np.ndarray]:
        """(scaled numerics, categorical codes). Zero-range columns are encoded as 0 where equal to
        the constant and 2 elsewhere, so the capped difference is exactly the mismatch indicator."""
        missing = [c for c in self.numeric + self.categorical if c not in frame.columns]
        if missing:
            raise DataError(f"{what}: column(s) {missing} are missing")
        if self.numeric:
            raw = numeric_values(frame[list(self.numeric)])
            safe = np.where(self.ranges > 0, self.ranges, 1.0)
            scaled = (raw - self.minimum) / safe
            constant = self.ranges == 0
            scaled[:, constant] = np.where(raw[:, constant] == self.minimum[constant], 0.0, 2.0)
            scaled[np.isnan(raw)] = np.nan
        else:
            scaled = np.zeros((len(frame), 0))
        codes = np.empty((len(frame), len(self.categorical)), dtype=np.int32)
        for k, column in enumerate(self.categorical):
            index = self.levels[k]
            # Levels the real data never had get codes above the real ones, equal for equal
            # strings (stable crc32, so query and synthetic frames agree): they mismatch every
            # real level and match each other.
            unseen = len(index)
            codes[:, k] = [index[v] if v in index else unseen + zlib.crc32(v.encode()) % 1_000_003
                           for v in category_strings(frame[column])]
        return np.ascontiguousarray(scaled, dtype=np.float64), np.ascontiguousarray(codes)


def nearest_synthetic(query: pd.DataFrame, synthetic: pd.DataFrame, space: GowerSpace,
                      block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Gower distance to, and index of, each query record's nearest synthetic record.

    Queries are processed in blocks of `block_size` (memory: the block's outputs only); inside a
    block the work is spread over numba's threads (NUMBA_NUM_THREADS, default: all cores).
    """
    if len(synthetic) == 0:
        raise DataError("nearest_synthetic: the synthetic data has no records")
    distance, index = k_nearest(query, synthetic, space, 1, block_size=block_size)
    return distance[:, 0], index[:, 0]


def gower_matrix(a: pd.DataFrame, b: pd.DataFrame, space: GowerSpace) -> np.ndarray:
    """The full distance matrix, for tests and small inputs only (O(len(a) * len(b)) memory).
    Sums are accumulated in the search's order (mismatch count, then numeric terms in column
    order), so its entries are bitwise the distances `k_nearest` returns."""
    a_num, a_cat = space.encode(a)
    b_num, b_cat = space.encode(b)
    diff = np.abs(a_num[:, None, :] - b_num[None, :, :])
    both = np.isnan(a_num)[:, None, :] & np.isnan(b_num)[None, :, :]
    one = np.isnan(a_num)[:, None, :] ^ np.isnan(b_num)[None, :, :]
    terms = np.where(both, 0.0, np.where(one, 1.0, np.minimum(diff, 1.0)))
    total = (a_cat[:, None, :] != b_cat[None, :, :]).sum(axis=2).astype(np.float64)
    for c in range(terms.shape[2]):
        total = total + terms[:, :, c]
    return total / space.n_columns


def k_nearest(query: pd.DataFrame, synthetic: pd.DataFrame, space: GowerSpace, k: int,
              block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Gower distances to, and indices of, the `k` nearest synthetic records of each query record,
    shape (len(query), k), nearest first, ties to the lower index."""
    q_num, q_cat = space.encode(query, "query data")
    s_num, s_cat = space.encode(synthetic, "synthetic data")
    return k_nearest_encoded(q_num, q_cat, s_num, s_cat, k, space.n_columns, block_size)


def nearest_others(records: pd.DataFrame, space: GowerSpace, k: int = 1) -> np.ndarray:
    """Gower distances from each record to its `k` nearest *other* records of `records`, shape
    (len(records), k), nearest first: how isolated a record is (Meeus et al.'s vulnerability with
    k > 1; the exposure score's and the rare-record rules' reference with k = 1). With exact
    duplicates the search may list a twin (lower index) before the record itself, both at distance
    0: the record's own entry is dropped, or the last one when it is not listed."""
    numeric, codes = space.encode(records, "records")
    distance, index = k_nearest_encoded(numeric, codes, numeric, codes, k + 1, space.n_columns)
    own = index == np.arange(len(records))[:, None]
    own[~own.any(axis=1), -1] = True
    return distance[~own].reshape(len(records), k)


def k_nearest_encoded(q_num, q_cat, s_num, s_cat, k: int, n_columns: int,
                      block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """`k_nearest` on frames already encoded by one GowerSpace (callers that search several
    subsets of the same records encode them once). Fewer than k records: the missing neighbours
    have distance inf and index -1."""
    trie = SignatureTrie.build(s_num, s_cat)
    q_codes = trie.query_codes(q_cat)
    distance = np.empty((len(q_num), k))
    index = np.empty((len(q_num), k), dtype=np.int64)
    for start in range(0, len(q_num), block_size):
        stop = min(start + block_size, len(q_num))
        trie.search(q_num[start:stop], q_codes[start:stop], distance[start:stop], index[start:stop])
    return distance / n_columns, index
