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

The search is exact brute force compiled with numba, parallel over query records, with early
abandoning: categorical mismatches are counted first (integer compares), then numeric terms are
added and the candidate is dropped as soon as its partial sum reaches the best distance so far.
Partial sums only grow, so pruning never changes the result; ties go to the lowest synthetic
index. Only O(n_query + n_synthetic) memory is used: no query x synthetic matrix is built.
Why not a library: Gower is an L1 distance after scaling (numeric by 1/(range p), one-hot
categoricals by 1/(2p)), so cKDTree(p=1) and faiss' flat L1 index are exact too; the benchmark
(benchmarks/gower_nn.py) measures them against this kernel on the same data.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..errors import DataError


@dataclass(frozen=True)
class GowerSpace:
    """Column scaling learned from the real data; encodes any frame with the same columns."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    minimum: np.ndarray
    ranges: np.ndarray
    levels: tuple[dict, ...]

    @classmethod
    def fit(cls, real: pd.DataFrame, schema: DatasetSchema) -> "GowerSpace":
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


@numba.njit(parallel=True, cache=True, fastmath=False)
def _nearest_kernel(q_num, q_cat, s_num, s_cat, out_sum, out_index):
    n_query, n_syn = q_num.shape[0], s_num.shape[0]
    n_num, n_cat = q_num.shape[1], q_cat.shape[1]
    for i in numba.prange(n_query):
        best = np.inf
        best_j = -1
        for j in range(n_syn):
            total = 0.0
            for k in range(n_cat):
                if q_cat[i, k] != s_cat[j, k]:
                    total += 1.0
            if total >= best:
                continue
            for k in range(n_num):
                a = q_num[i, k]
                b = s_num[j, k]
                if np.isnan(a) or np.isnan(b):
                    term = 0.0 if (np.isnan(a) and np.isnan(b)) else 1.0
                else:
                    term = abs(a - b)
                    if term > 1.0:
                        term = 1.0
                total += term
                if total >= best:
                    break
            if total < best:
                best = total
                best_j = j
        out_sum[i] = best
        out_index[i] = best_j


def nearest_synthetic(query: pd.DataFrame, synthetic: pd.DataFrame, space: GowerSpace,
                      block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Gower distance to, and index of, each query record's nearest synthetic record.

    Queries are processed in blocks of `block_size` (memory: the block's outputs only); inside a
    block the work is spread over numba's threads (NUMBA_NUM_THREADS, default: all cores).
    """
    if len(synthetic) == 0:
        raise DataError("nearest_synthetic: the synthetic data has no records")
    q_num, q_cat = space.encode(query, "query data")
    s_num, s_cat = space.encode(synthetic, "synthetic data")
    distance = np.empty(len(query))
    index = np.empty(len(query), dtype=np.int64)
    for start in range(0, len(query), block_size):
        stop = min(start + block_size, len(query))
        _nearest_kernel(q_num[start:stop], q_cat[start:stop], s_num, s_cat,
                        distance[start:stop], index[start:stop])
    return distance / space.n_columns, index


def gower_matrix(a: pd.DataFrame, b: pd.DataFrame, space: GowerSpace) -> np.ndarray:
    """The full distance matrix, for tests and small inputs only (O(len(a) * len(b)) memory)."""
    a_num, a_cat = space.encode(a)
    b_num, b_cat = space.encode(b)
    diff = np.abs(a_num[:, None, :] - b_num[None, :, :])
    both = np.isnan(a_num)[:, None, :] & np.isnan(b_num)[None, :, :]
    one = np.isnan(a_num)[:, None, :] ^ np.isnan(b_num)[None, :, :]
    terms = np.where(both, 0.0, np.where(one, 1.0, np.minimum(diff, 1.0)))
    mismatch = (a_cat[:, None, :] != b_cat[None, :, :]).sum(axis=2)
    return (terms.sum(axis=2) + mismatch) / space.n_columns


@numba.njit(parallel=True, cache=True)
def _knn_kernel(q_num, q_cat, s_num, s_cat, out_sum, out_index):
    """The k = out_sum.shape[1] smallest Gower sums (not yet divided by the number of columns) of
    each query among the synthetic records, ascending; equal sums keep the lower synthetic index."""
    n_query, n_syn = q_num.shape[0], s_num.shape[0]
    n_num, n_cat = q_num.shape[1], q_cat.shape[1]
    k = out_sum.shape[1]
    for i in numba.prange(n_query):
        best = np.full(k, np.inf)
        best_j = np.full(k, -1, dtype=np.int64)
        for j in range(n_syn):
            worst = best[k - 1]
            total = 0.0
            for c in range(n_cat):
                if q_cat[i, c] != s_cat[j, c]:
                    total += 1.0
            if total >= worst:
                continue
            for c in range(n_num):
                a = q_num[i, c]
                b = s_num[j, c]
                if np.isnan(a) or np.isnan(b):
                    term = 0.0 if (np.isnan(a) and np.isnan(b)) else 1.0
                else:
                    term = abs(a - b)
                    term = min(term, 1.0)
                total += term
                if total >= worst:
                    break
            if total < worst:
                pos = k - 1
                while pos > 0 and best[pos - 1] > total:
                    best[pos] = best[pos - 1]
                    best_j[pos] = best_j[pos - 1]
                    pos -= 1
                best[pos] = total
                best_j[pos] = j
        for m in range(k):
            out_sum[i, m] = best[m]
            out_index[i, m] = best_j[m]


def k_nearest(query: pd.DataFrame, synthetic: pd.DataFrame, space: GowerSpace, k: int,
              block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Gower distances to, and indices of, the `k` nearest synthetic records of each query record,
    shape (len(query), k), nearest first, ties to the lower index. k = 1 is `nearest_synthetic`;
    larger k the kernel above, by blocks of `block_size` queries."""
    if k == 1:
        distance, index = nearest_synthetic(query, synthetic, space, block_size=block_size)
        return distance[:, None], index[:, None]
    q_num, q_cat = space.encode(query, "query data")
    s_num, s_cat = space.encode(synthetic, "synthetic data")
    return k_nearest_encoded(q_num, q_cat, s_num, s_cat, k, space.n_columns, block_size)


def k_nearest_encoded(q_num, q_cat, s_num, s_cat, k: int, n_columns: int,
                      block_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """`k_nearest` on frames already encoded by one GowerSpace (callers that search several
    subsets of the same records encode them once). Fewer than k records: the missing neighbours
    have distance inf and index -1."""
    distance = np.empty((len(q_num), k))
    index = np.empty((len(q_num), k), dtype=np.int64)
    for start in range(0, len(q_num), block_size):
        stop = min(start + block_size, len(q_num))
        _knn_kernel(q_num[start:stop], q_cat[start:stop], s_num, s_cat, distance[start:stop], index[start:stop])
    return distance / n_columns, index
