"""Exact k-nearest Gower search over a trie of the synthetic records' categorical codes.

A record's Gower sum is its number of categorical mismatches m plus its numeric terms, each in
[0, 1]. The synthetic records are sorted by their categorical codes (columns with more distinct
codes first), which makes the distinct code prefixes a trie whose leaves are the groups of
records sharing one categorical signature. A query walks the trie in passes b = 0, 1, 2, ...: pass
b visits only the leaves with exactly b mismatches, and a subtree whose mismatch count already
exceeds the k-th best sum is skipped whole. Once b exceeds the k-th best sum, no unvisited leaf can
improve it and the search stops. On real data most queries share their signature with a synthetic
record at a numeric distance below 1, so pass 0 (one leaf) is the whole search; on high-cardinality
random data the passes still touch only the few leaves within the best mismatch count.

Inside a leaf the records are scanned in synthetic order with early abandoning (the partial sum
only grows). Sums are accumulated in one fixed order (mismatch count, then numeric terms in column
order) in float64, so every candidate's sum is bitwise the one a brute-force loop computes in that
order; since leaves are not visited in index order, the tie rule is explicit: (sum, index) is
compared lexicographically, so equal sums keep the lower synthetic index. The pruning is exact in
floating point: rounding is monotone, so a sum computed from m plus non-negative terms is >= m.

Memory: the sorted copy of the synthetic records and the trie (at most n_synthetic nodes per
categorical column); per query, O(number of categorical columns + k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True)
class SignatureTrie:
    """The synthetic records sorted by categorical signature, and the trie of their code prefixes.

    Nodes of all depths are numbered in one sequence, depth by depth; `depth_start[d]` is the first
    node of depth d. A node of depth d < last has children `child_lo[node]:child_hi[node]` (node
    numbers); a leaf (last depth) has records `child_lo[leaf]:child_hi[leaf]` (sorted positions)."""

    column_order: np.ndarray  # categorical column visited at each depth
    depth_start: np.ndarray
    node_value: np.ndarray
    child_lo: np.ndarray
    child_hi: np.ndarray
    node_min_index: np.ndarray  # lowest synthetic index in the node's subtree (for the tie rule)
    sorted_num: np.ndarray
    sorted_index: np.ndarray  # synthetic index of each sorted position

    @classmethod
    def build(cls, s_num: np.ndarray, s_cat: np.ndarray) -> SignatureTrie:
        n, n_cat = s_cat.shape
        if n_cat == 0:  # one constant column: every record in one leaf, mismatch count 0
            s_cat = np.zeros((n, 1), dtype=np.int32)
            n_cat = 1
        # Columns with many distinct codes first: mismatches then accumulate near the root, where
        # a pruned subtree is largest.
        distinct = [len(np.unique(s_cat[:, c])) for c in range(n_cat)]
        order = np.argsort(-np.asarray(distinct), kind="stable")
        codes = s_cat[:, order]
        # lexsort's last key is the primary one; being stable, it keeps synthetic order in a leaf.
        perm = np.lexsort(codes.T[::-1]) if n else np.zeros(0, dtype=np.int64)
        codes = codes[perm]
        starts = []
        changed = np.zeros(max(n - 1, 0), dtype=bool)
        for d in range(n_cat):
            changed |= codes[1:, d] != codes[:-1, d]
            starts.append(np.concatenate([[0], np.flatnonzero(changed) + 1]).astype(np.int64) if n
                          else np.zeros(0, dtype=np.int64))
        counts = [len(s) for s in starts]
        depth_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        values, lo, hi, min_index = [], [], [], []
        for d in range(n_cat):
            start = starts[d]
            end = np.append(start[1:], n)
            values.append(codes[start, d] if n else np.zeros(0, dtype=np.int32))
            min_index.append(np.minimum.reduceat(perm, start) if n else np.zeros(0, dtype=np.int64))
            if d + 1 < n_cat:
                lo.append(depth_start[d + 1] + np.searchsorted(starts[d + 1], start))
                hi.append(depth_start[d + 1] + np.searchsorted(starts[d + 1], end))
            else:
                lo.append(start)
                hi.append(end)
        return cls(
            column_order=order.astype(np.int64), depth_start=depth_start,
            node_value=np.concatenate(values).astype(np.int32),
            child_lo=np.concatenate(lo).astype(np.int64), child_hi=np.concatenate(hi).astype(np.int64),
            node_min_index=np.concatenate(min_index).astype(np.int64),
            sorted_num=np.ascontiguousarray(s_num[perm], dtype=np.float64),
            sorted_index=perm.astype(np.int64))

    def query_codes(self, q_cat: np.ndarray) -> np.ndarray:
        """Query codes in the trie's column order (a constant column when there are none)."""
        if q_cat.shape[1] == 0:
            return np.zeros((len(q_cat), 1), dtype=np.int32)
        return np.ascontiguousarray(q_cat[:, self.column_order])

    def search(self, q_num: np.ndarray, q_cat_ordered: np.ndarray, out_sum: np.ndarray,
               out_index: np.ndarray) -> None:
        """Fill out_sum / out_index (shape (n_query, k)) with each query's k smallest Gower sums
        (not divided by the number of columns) and their synthetic indices, ascending by (sum,
        index). Fewer than k records: the missing neighbours have sum inf and index -1."""
        _search_kernel(q_num, q_cat_ordered, self.depth_start, self.node_value, self.child_lo,
                       self.child_hi, self.node_min_index, self.sorted_num, self.sorted_index,
                       out_sum, out_index)


@numba.njit(parallel=True, cache=True, fastmath=False)
def _search_kernel(q_num, q_cat, depth_start, node_value, child_lo, child_hi, node_min_index,
                   s_num, s_index, out_sum, out_index):
    n_query = q_num.shape[0]
    n_num = q_num.shape[1]
    n_cat = q_cat.shape[1]
    k = out_sum.shape[1]
    last = n_cat - 1
    for i in numba.prange(n_query):
        best = np.full(k, np.inf)
        best_j = np.full(k, -1, dtype=np.int64)
        cursor = np.empty(n_cat, dtype=np.int64)
        stop = np.empty(n_cat, dtype=np.int64)
        above = np.zeros(n_cat, dtype=np.int64)  # mismatches above each depth
        for b in range(n_cat + 1):
            if b > best[k - 1]:
                break  # every leaf left has at least b mismatches: none beats the k-th best
            d = 0
            cursor[0] = depth_start[0]
            stop[0] = depth_start[1]
            above[0] = 0
            while d >= 0:
                if cursor[d] >= stop[d]:
                    d -= 1
                    continue
                node = cursor[d]
                cursor[d] += 1
                m = above[d]
                if node_value[node] != q_cat[i, d]:
                    m += 1
                # this pass wants exactly b mismatches at the leaf
                if m > b or m + (last - d) < b:
                    continue
                worst = best[k - 1]
                if m > worst or (m == worst and node_min_index[node] > best_j[k - 1]):
                    continue
                if d < last:
                    d += 1
                    cursor[d] = child_lo[node]
                    stop[d] = child_hi[node]
                    above[d] = m
                    continue
                for r in range(child_lo[node], child_hi[node]):
                    j = s_index[r]
                    worst = best[k - 1]
                    total = float(m)
                    abandoned = False
                    for c in range(n_num):
                        a = q_num[i, c]
                        v = s_num[r, c]
                        if np.isnan(a) or np.isnan(v):
                            term = 0.0 if (np.isnan(a) and np.isnan(v)) else 1.0
                        else:
                            term = min(abs(a - v), 1.0)
                        total += term
                        if total > worst:
                            abandoned = True
                            break
                    if abandoned or (total == worst and j > best_j[k - 1]):
                        continue
                    pos = k - 1
                    while pos > 0 and (best[pos - 1] > total or (best[pos - 1] == total and best_j[pos - 1] > j)):
                        best[pos] = best[pos - 1]
                        best_j[pos] = best_j[pos - 1]
                        pos -= 1
                    best[pos] = total
                    best_j[pos] = j
        for t in range(k):
            out_sum[i, t] = best[t]
            out_index[i, t] = best_j[t]
