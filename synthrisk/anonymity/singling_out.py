"""Singling-out risk (Giomi et al. 2023, PoPETs; definitions as in anonymeter 1.1.0).

Why native: anonymeter 1.1.0 pins numpy < 2 and cannot be imported in synthrisk's environment;
this module re-implements its singling-out evaluator from the paper and the library's documented
behaviour, with the queries held as arrays (column, operator, value) and counted by one compiled
kernel instead of one polars expression per query.

A query is a conjunction of conditions `column op value`. It *singles out* in a table when exactly
one record of the table satisfies it. All tables are first reduced to their distinct records on
the attacker's columns (as anonymeter does), so a query that matches two identical records does not
single out. The attacker sees only the synthetic data and builds queries that single out there:

- univariate: one condition per query, from rare synthetic values: `column == v` for every value
  held by one distinct synthetic record, `column <= min` and `column >= max` for a numeric column
  (when that extreme is unique), `column is missing` when one record has it missing. The candidates
  are shuffled (seeded) and the first `n_attacks` that single out in the synthetic data are used.
- multivariate: pick a synthetic record and `n_cols` columns at random; each condition is
  `== value` for a categorical column, `is missing` for a missing value, and for a numeric column
  `>= value` when the value is above the column's synthetic median, `<= value` otherwise (the
  direction that makes the query rarer). Queries are drawn (in batches: 1,000 first, then sized
  from the success rate so far) until `n_attacks` distinct ones single out in the synthetic data,
  or `max_attempts` queries have been tried (`n_attempts`: the draws up to the last query kept).

Success on a table: the query singles out there. main = queries that single out among the
(distinct) members; control = the same queries on the (distinct) control records. The success
rates are taken over `n_attacks` (the requested number, even when fewer queries could be made: a
synthetic table that yields few singling-out queries gives the attacker few chances). The naive
baseline draws `n_attacks` random queries (random columns, a random synthetic value of each, a
random operator: == or != for categorical columns, one of == != < <= > >= for numeric ones; a
missing value gives `is missing` or `is not missing`) and counts those that single out a member.

Control-size correction: the chance that a query singles out depends on the size of the table
(a query of population weight w singles out among n records with probability n w (1 - w)^(n - 1),
Cohen and Nissim 2020). When the distinct control records are not as many as the distinct members,
the control count is rescaled, as anonymeter does, by f(n_members) / f(n_control), with
f(n) = a * integral_0^w_eff n w (1 - w)^(n - 1) dw = a * (1 - (n w_eff + 1)(1 - w_eff)^n) / (n + 1)
fitted (least squares, w_eff in (0, 1], a >= 0; a cancels in the ratio) to the number of queries that single out in random
subsets of the control set of 10 sizes from min(1000, n_control / 2) to n_control, 5 subsets each.
The factor used is reported (`control_correction`; null when the sizes are equal or no query
singles out a control record). Two cautions, measured on Adult (10,000 members, cart):
- anonymeter 1.1.0 fits this curve to the number of queries *evaluated* on each subset (the length
  of its per-query count tuple), a constant, not to the number that single out; its fit then lands
  on the curve's decreasing tail and its factor is about (n_control + 1) / (n_members + 1), which
  scales the control count *down* when the control set is smaller. Here the count of queries that
  single out is fitted, as the method describes; with members and control of equal size (after
  removing duplicates: within a few records) both factors are 1 to within 0.1%.
- the model (query weights uniform on [0, w_eff]) peaks and then falls, while the measured counts
  keep rising slowly, so extrapolating from a much smaller control set under-corrects: from 3,000
  control records the corrected count was 173 where a 10,000-record control set gave 230 (1,500
  records: 128). Use a control set about as large as the members when the singling-out risk
  matters; the raw count is reported as `control_success_raw`.

Test (`p_value`, one-sided: queries single out members more often than control records): a
permutation test of the member/control labels over the pooled records (members and control as
given, before removing duplicates). A query succeeds or fails on a whole table, and one rare record
can decide many queries at once, so the queries are not independent trials and a binomial or
Fisher test over them has the wrong null. Under "the synthetic data do not depend on which of the
pooled records were the members" every labelling of the pooled records with n_members members is
equally likely; the statistic (queries singling out among the members minus among the control
records, as counted above) is recomputed under `permutations` relabellings (seeded) and
p = (1 + #{relabelled >= observed}) / (1 + permutations). Only the pooled records some query matches
matter: the number of members among them is drawn from its hypergeometric law, then which of them
they are, uniformly (a full relabelling seen on those records). The test is made on the raw counts,
so it holds for unequal sizes too (the relabellings keep both sizes). With more than
MAX_TEST_MATCHES (query, pooled record) matches no test is made (`p_value` None; the verdict then
reads the risk's interval).

Comparisons follow SQL/polars semantics for missing values: a missing value satisfies only
`is missing`; `!=` is false on it. Output per query holds no values: the query's number, whether
it singled out a member / a control record, and that record's `row_id`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from ..data.encoding import numeric_values
from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError
from ._inputs import (
    DEFAULT_N_ATTACKS,
    DEFAULT_PERMUTATIONS,
    check_columns,
    check_confidence,
    check_positive_int,
    prepare_all,
    streams,
)
from .risk import ControlRisk, control_risk

EQ, NE, LT, LE, GT, GE, ISNULL, NOTNULL = range(8)
MODES = ("univariate", "multivariate")
BATCH = 1000
DEFAULT_MAX_ATTEMPTS = 10_000_000
MAX_LISTED_MATCHES = 20_000_000  # (query, record) pairs held at once by the control-size correction
MAX_TEST_MATCHES = 20_000_000    # (query, pooled record) pairs the permutation test relabels
SINGLING_OUT_TEST = "permutation of the member/control labels over the pooled records"


@dataclass
class _Queries:
    cols: np.ndarray   # (q, m) int64 column positions, ascending within a query
    ops: np.ndarray    # (q, m) int64 operators
    vals: np.ndarray   # (q, m) float64 values (codes for categorical columns; 0 for is [not] missing)

    def __len__(self) -> int:
        return self.cols.shape[0]

    def take(self, index) -> _Queries:
        return _Queries(self.cols[index], self.ops[index], self.vals[index])

    def keys(self) -> list[bytes]:
        return [self.cols[q].tobytes() + self.ops[q].tobytes() + self.vals[q].tobytes() for q in range(len(self))]


@numba.njit(inline="always")
def _satisfies(data, i, cols, ops, vals, q):
    """Whether record i (column i of `data`, columns x records) meets every condition of query q."""
    for j in range(cols.shape[1]):
        x = data[cols[q, j], i]
        v = vals[q, j]
        op = ops[q, j]
        if op == 0:
            ok = x == v
        elif op == 1:
            ok = (not np.isnan(x)) and x != v
        elif op == 2:
            ok = x < v
        elif op == 3:
            ok = x <= v
        elif op == 4:
            ok = x > v
        elif op == 5:
            ok = x >= v
        elif op == 6:
            ok = np.isnan(x)
        else:
            ok = not np.isnan(x)
        if not ok:
            return False
    return True


@numba.njit(parallel=True, cache=True)
def _match_kernel(data, cols, ops, vals, cap, out_count, out_first):
    """For each query, the number of records matching it (counting stops at `cap`) and the first."""
    for q in numba.prange(cols.shape[0]):
        count = 0
        first = -1
        for i in range(data.shape[1]):
            if _satisfies(data, i, cols, ops, vals, q):
                count += 1
                if first < 0:
                    first = i
                if count >= cap:
                    break
        out_count[q] = count
        out_first[q] = first


@numba.njit(parallel=True, cache=True)
def _fill_kernel(data, cols, ops, vals, offsets, out):
    """The records matching query q, ascending, into out[offsets[q]:offsets[q + 1]]."""
    for q in numba.prange(cols.shape[0]):
        at = offsets[q]
        for i in range(data.shape[1]):
            if at == offsets[q + 1]:
                break
            if _satisfies(data, i, cols, ops, vals, q):
                out[at] = i
                at += 1


def _match(data: np.ndarray, queries: _Queries, cap: int = 2) -> tuple[np.ndarray, np.ndarray]:
    count = np.zeros(len(queries), dtype=np.int64)
    first = np.full(len(queries), -1, dtype=np.int64)
    if len(queries):
        _match_kernel(data, queries.cols, queries.ops, queries.vals, cap, count, first)
    return count, first


def _matches(data: np.ndarray, queries: _Queries, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, records): the records matching query q are records[offsets[q]:offsets[q + 1]];
    `count`: the number of records matching each query (`_match` with no cap)."""
    offsets = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum(count, out=offsets[1:])
    out = np.empty(offsets[-1], dtype=np.int32)
    if len(queries):
        _fill_kernel(data, queries.cols, queries.ops, queries.vals, offsets, out)
    return offsets, out


@numba.njit(cache=True)
def _group_counts(offsets, matched, present):
    """Per query: how many of its matching distinct records (matched[offsets[q]:offsets[q + 1]],
    compact record ids) are `present` in a group, counting stops at 2, and the first of them (-1)."""
    n = offsets.shape[0] - 1
    count = np.zeros(n, dtype=np.int64)
    first = np.full(n, -1, dtype=np.int64)
    for q in range(n):
        for t in range(offsets[q], offsets[q + 1]):
            if present[matched[t]]:
                if count[q] == 0:
                    first[q] = matched[t]
                count[q] += 1
                if count[q] == 2:
                    break
    return count, first


@numba.njit(cache=True)
def _singled_out_difference(offsets, matched, in_members, in_control):
    """Queries singling out among the members minus among the control records, when distinct
    record r is among the members iff in_members[r] (and likewise for the control records)."""
    difference = 0
    for q in range(offsets.shape[0] - 1):
        members = 0
        control = 0
        for t in range(offsets[q], offsets[q + 1]):
            members += in_members[matched[t]]
            control += in_control[matched[t]]
        difference += int(members == 1) - int(control == 1)
    return difference


@dataclass
class _PooledMatches:
    """Every query's matching records among the pooled members and control records (duplicates
    kept; a record is its distinct value, `key`): query q matches the distinct records
    matched[offsets[q]:offsets[q + 1]], numbered 0..n_matched - 1 over those some query matches;
    row r of the pooled records (members first) is distinct record `row_record[r]` (-1: matched by
    no query)."""

    offsets: np.ndarray
    matched: np.ndarray
    row_record: np.ndarray
    n_matched: int
    n_members: int

    def present(self, rows: np.ndarray) -> np.ndarray:
        """Which matched distinct records have a copy among the pooled `rows`."""
        out = np.zeros(self.n_matched, dtype=np.bool_)
        record = self.row_record[rows]
        out[record[record >= 0]] = True
        return out

    def observed(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int]:
        """((count, first row) among the members, the same among the control records, members minus
        control singled out): count stops at 2, first row is the pooled row of the first occurrence
        of the first matching distinct record (-1: none)."""
        rows = np.arange(len(self.row_record))
        out = []
        for group in (rows[:self.n_members], rows[self.n_members:]):
            count, first = _group_counts(self.offsets, self.matched, self.present(group))
            # the first occurrence in the group of each matched distinct record
            first_row = np.full(self.n_matched, -1, dtype=np.int64)
            record = self.row_record[group]
            keep = record >= 0
            seen, at = np.unique(record[keep], return_index=True)  # group ascends: its first row
            first_row[seen] = group[keep][at]
            if self.n_matched:
                first = np.where(first >= 0, first_row[np.maximum(first, 0)], -1)
            out.append((count, first))  # without a match anywhere, first is -1 throughout
        difference = int((out[0][0] == 1).sum() - (out[1][0] == 1).sum())
        return out[0], out[1], difference

    def p_value(self, observed: int, permutations: int, rng: np.random.Generator) -> float:
        """The module docstring's test of `observed` (members minus control singled out)."""
        relevant = np.flatnonzero(self.row_record >= 0)
        n_pooled = len(self.row_record)
        exceed = 0
        for _ in range(permutations):
            k = int(rng.hypergeometric(self.n_members, n_pooled - self.n_members, len(relevant))) if len(relevant) else 0
            order = relevant[rng.permutation(len(relevant))]
            exceed += _singled_out_difference(self.offsets, self.matched, self.present(order[:k]),
                                              self.present(order[k:])) >= observed
        return (1 + exceed) / (1 + permutations)


def _pooled_matches(pooled: np.ndarray, n_members: int, queries: _Queries) -> _PooledMatches | None:
    """The queries' matches among the `pooled` records (columns x records, members first), one
    scan over their distinct records; None when more than MAX_TEST_MATCHES (query, record) pairs."""
    # Identical records (missing equal to missing) are one distinct record: a query matching two
    # copies of one record singles it out.
    keys = pd.DataFrame(pooled.T).groupby(list(range(pooled.shape[0])), dropna=False, sort=False).ngroup().to_numpy()
    _, representative = np.unique(keys, return_index=True)
    distinct = np.ascontiguousarray(pooled[:, representative])
    total, _ = _match(distinct, queries, cap=distinct.shape[1] + 1)
    if total.sum() > MAX_TEST_MATCHES:
        return None
    offsets, matched = _matches(distinct, queries, total)
    # compact numbering of the distinct records some query matches
    used, matched = np.unique(matched, return_inverse=True)
    compact = np.full(distinct.shape[1], -1, dtype=np.int64)
    compact[used] = np.arange(len(used))
    return _PooledMatches(offsets, matched.astype(np.int64), compact[keys], len(used), n_members)


def _encode(frames: list[pd.DataFrame], schema: DatasetSchema, columns: list[str]) -> list[np.ndarray]:
    """Each frame as a float64 (columns x records) array: numbers as they are, categories as codes
    shared by all frames, NaN for missing."""
    out = [np.empty((len(columns), len(f))) for f in frames]
    for k, column in enumerate(columns):
        if schema.is_categorical(column):
            levels = sorted(set().union(*(set(f[column].dropna().astype(str)) for f in frames)))
            for array, frame in zip(out, frames):
                codes = pd.Categorical(frame[column].astype(object), categories=levels).codes
                array[k] = np.where(codes < 0, np.nan, codes)
        else:
            for array, frame in zip(out, frames):
                array[k] = numeric_values(frame[[column]])[:, 0]
    return [np.ascontiguousarray(a) for a in out]


def _distinct(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Positions of the first occurrence of each distinct record on `columns` (missing = missing)."""
    return np.flatnonzero(~frame[columns].duplicated(keep="first").to_numpy())


def _univariate_queries(syn: np.ndarray, numeric: np.ndarray, n_queries: int,
                        rng: np.random.Generator) -> _Queries:
    candidates = []  # (column, operator, value, singles out in the synthetic data)
    for k in range(syn.shape[0]):
        x = syn[k]
        missing = np.isnan(x)
        present = x[~missing]
        if missing.sum() == 1:
            candidates.append((k, ISNULL, 0.0, True))
        if numeric[k] and len(present):
            low, high = present.min(), present.max()
            candidates.append((k, LE, low, (present == low).sum() == 1))
            candidates.append((k, GE, high, (present == high).sum() == 1))
        values, counts = np.unique(present, return_counts=True)
        candidates.extend((k, EQ, v, True) for v in values[counts == 1])
    order = rng.permutation(len(candidates))
    chosen = [candidates[i] for i in order if candidates[i][3]][:n_queries]
    cols, ops, vals = (np.array([c[i] for c in chosen], dtype=t).reshape(-1, 1)
                       for i, t in ((0, np.int64), (1, np.int64), (2, np.float64)))
    return _Queries(cols, ops, vals)


def _random_columns(rng: np.random.Generator, n: int, n_columns: int, n_cols: int) -> np.ndarray:
    """`n` sets of `n_cols` distinct column positions, ascending (in chunks of at most 4M keys)."""
    step = max(1, 4_000_000 // n_columns)
    parts = [np.argsort(rng.random((min(step, n - start), n_columns)), axis=1)[:, :n_cols]
             for start in range(0, n, step)]
    return np.sort(np.concatenate(parts) if parts else np.zeros((0, n_cols), np.int64), axis=1).astype(np.int64)


def _multivariate_queries(syn: np.ndarray, numeric: np.ndarray, n_queries: int, n_cols: int,
                          max_attempts: int, rng: np.random.Generator) -> tuple[_Queries, int]:
    """Queries from random synthetic records until `n_queries` distinct ones single out there or
    `max_attempts` have been drawn; also the number drawn up to the last one kept."""
    with np.errstate(all="ignore"):
        medians = np.array([np.nanmedian(x) if numeric[k] and (~np.isnan(x)).any() else np.nan
                            for k, x in enumerate(syn)])
    found: list[_Queries] = []
    seen: set[bytes] = set()
    n_found = drawn = used = 0
    size = BATCH
    while n_found < n_queries and drawn < max_attempts:
        size = min(size, max_attempts - drawn)
        rows = rng.integers(0, syn.shape[1], size)
        cols = _random_columns(rng, size, syn.shape[0], n_cols)
        vals = syn[cols, rows[:, None]]
        missing = np.isnan(vals)
        ops = np.where(numeric[cols], np.where(vals > medians[cols], GE, LE), EQ)
        ops = np.where(missing, ISNULL, ops).astype(np.int64)
        batch = _Queries(cols, ops, np.where(missing, 0.0, vals))
        count, _ = _match(syn, batch)
        good = np.flatnonzero(count == 1)  # >= 1 always: the query matches the record it came from
        picked = []
        for q, key in zip(good, batch.take(good).keys()):
            if key not in seen:
                seen.add(key)
                picked.append(q)
                n_found += 1
                if n_found == n_queries:
                    used = drawn + int(q) + 1
                    break
        found.append(batch.take(np.asarray(picked, dtype=np.int64)))
        drawn += size
        # One kernel call per batch: size the next batch for the queries still missing at the
        # success rate so far (x1.5), between 1,000 and 50,000 draws.
        rate = n_found / drawn
        size = int(min(max(1.5 * (n_queries - n_found) / max(rate, 1e-9), BATCH), 50 * BATCH))
    queries = _Queries(*(np.concatenate([getattr(f, a) for f in found]) for a in ("cols", "ops", "vals")))
    return queries, (used if n_found == n_queries else drawn)


def _baseline_queries(syn: np.ndarray, numeric: np.ndarray, n_queries: int, n_cols: int,
                      rng: np.random.Generator) -> _Queries:
    """Random queries: random columns, a random synthetic value of each (missing included), a random
    operator among those that make sense for the column's type."""
    cols = _random_columns(rng, n_queries, syn.shape[0], n_cols)
    uniques = [np.unique(x) for x in syn]  # one NaN at the end when there are missing values
    vals = np.empty(cols.shape)
    for k, values in enumerate(uniques):
        where = cols == k
        vals[where] = values[rng.integers(0, len(values), where.sum())]
    draw = rng.random(cols.shape)
    ops = np.where(numeric[cols], (draw * 6).astype(np.int64), (draw * 2).astype(np.int64))  # EQ..GE / EQ, NE
    missing = np.isnan(vals)
    ops = np.where(missing, np.where(ops == EQ, ISNULL, NOTNULL), ops).astype(np.int64)
    return _Queries(cols, ops, np.where(missing, 0.0, vals))


def _integral(n, w):
    """integral_0^w n t (1 - t)^(n - 1) dt = (1 - (n w + 1)(1 - w)^n) / (n + 1), computed without
    cancelling 1 - ... where w is small."""
    power = np.exp(n * np.log1p(-np.minimum(w, 1.0 - 1e-16)))
    return (-np.expm1(n * np.log1p(-np.minimum(w, 1.0 - 1e-16))) - n * w * power) / (n + 1.0)


def _control_correction(control: np.ndarray, queries: _Queries, n_members: int,
                        rng: np.random.Generator) -> float | None:
    n_control = control.shape[1]
    # Each query's matching control records, listed once, make a subset's counts a lookup; when
    # the lists would be too long (queries matching much of the table), each subset is scanned.
    total, _ = _match(control, queries, cap=n_control + 1)
    listed = total.sum() <= MAX_LISTED_MATCHES
    if listed:
        offsets, records = _matches(control, queries, total)
        owner = np.repeat(np.arange(len(queries)), np.diff(offsets))
    low = min(1000, n_control // 2)
    sizes, successes = [], []
    for size in np.linspace(max(low, 1), n_control, 10).astype(int):
        for _ in range(5):
            chosen = np.sort(rng.choice(n_control, size, replace=False))
            if listed:
                inside = np.zeros(n_control, dtype=bool)
                inside[chosen] = True
                count = np.bincount(owner, weights=inside[records], minlength=len(queries))
            else:
                count, _ = _match(np.ascontiguousarray(control[:, chosen]), queries)
            sizes.append(size)
            successes.append(int((count == 1).sum()))
    sizes, successes = np.asarray(sizes, dtype=float), np.asarray(successes, dtype=float)
    if not successes.any():
        return None
    w = _fit_weight(sizes, successes)
    if w is None:
        return None
    # The best a for w is the same in numerator and denominator: it cancels.
    return float(_integral(n_members, w) / _integral(n_control, w))


def _fit_weight(sizes: np.ndarray, successes: np.ndarray) -> float | None:
    """Least-squares w_eff of successes ~ a * _integral(sizes, w_eff), a >= 0, w_eff in (0, 1].

    The model is linear in a, so a is solved in closed form for each w (variable projection) and
    w is searched on a log grid, then refined by a bounded scalar minimisation around the best grid
    point. (A joint curve_fit from anonymeter's starting point can stall far from the optimum:
    the two parameters differ by ten orders of magnitude.)"""

    def loss(log_w: float) -> float:
        g = _integral(sizes, 10.0 ** log_w)
        gg = float(g @ g)
        a = max(float(g @ successes) / gg, 0.0) if gg > 0 else 0.0
        return float(((successes - a * g) ** 2).sum())

    # Below n w = 1e-3 the curve is a * n w^2 / 2 for every w: one shape, so the grid stops there.
    grid = np.linspace(np.log10(1e-3 / sizes.max()), 0.0, 241)
    losses = np.array([loss(x) for x in grid])
    best = int(np.argmin(losses))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    refined = minimize_scalar(loss, bounds=(low, high), method="bounded", options={"xatol": 1e-6})
    log_w = refined.x if refined.success and refined.fun <= losses[best] else grid[best]
    w = 10.0 ** log_w
    return w if _integral(float(sizes.max()), w) > 0 else None


@dataclass(frozen=True)
class SinglingOutResult:
    risk: ControlRisk
    mode: str
    n_attacks: int
    n_queries: int
    n_cols: int
    columns: tuple[str, ...]
    seed: int
    max_attempts: int
    n_attempts: int
    n_members: int
    n_control: int
    n_synthetic: int
    control_success_raw: int
    control_correction: float | None
    #: one row per query and table: query (its number), member (True: members, False: control),
    #: singled_out, row_id (of the record singled out, <NA> if none); no data values
    records: pd.DataFrame = field(repr=False, compare=False)

    def to_json(self) -> dict:
        return {"attack": "singling_out", **self.risk.to_json(), "mode": self.mode,
                "n_attacks": self.n_attacks, "n_queries": self.n_queries, "n_cols": self.n_cols,
                "columns": list(self.columns), "seed": self.seed, "max_attempts": self.max_attempts,
                "n_attempts": self.n_attempts, "n_members": self.n_members, "n_control": self.n_control,
                "n_synthetic": self.n_synthetic, "control_success_raw": self.control_success_raw,
                "control_correction": self.control_correction}


def check_singling_out(schema: DatasetSchema, n_attacks: int, mode: str, n_cols: int,
                       columns, max_attempts: int, confidence: float) -> list[str]:
    """The settings' problems as a ConfigError naming the argument; the attacker's columns."""
    check_positive_int(n_attacks, "n_attacks")
    check_positive_int(max_attempts, "max_attempts")
    check_confidence(confidence)
    if mode not in MODES:
        raise ConfigError(f"mode: must be one of {list(MODES)}, got {mode!r}")
    columns = check_columns(list(schema.columns) if columns is None else columns, schema, "columns")
    check_positive_int(n_cols, "n_cols")
    if mode == "multivariate" and n_cols > len(columns):
        raise ConfigError(f"n_cols: {n_cols} columns per query, but the attacker has only {len(columns)} "
                          f"column(s) {columns}")
    return columns


def singling_out(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *,
                 schema: DatasetSchema, n_attacks: int = DEFAULT_N_ATTACKS, mode: str = "univariate",
                 n_cols: int = 3, seed: int = 0, columns: list[str] | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS, confidence: float = 0.95,
                 permutations: int = DEFAULT_PERMUTATIONS) -> SinglingOutResult:
    """Singling-out risk of `synthetic` for `members`, measured against the `holdout` records as the
    control set (module docstring).

    `columns`: the attacker's columns (default: all of the schema's). `n_cols` is used by the
    multivariate mode only (univariate queries have one condition). `permutations`: relabellings of
    the test (p >= 1 / (permutations + 1))."""
    columns = check_singling_out(schema, n_attacks, mode, n_cols, columns, max_attempts, confidence)
    check_positive_int(permutations, "permutations")
    members, member_ids, synthetic, holdout, control_ids = prepare_all(members, synthetic, holdout, schema)
    rng_queries, rng_baseline, rng_correction, rng_test = streams(seed, 4)
    m_keep, s_keep, c_keep = (_distinct(f, columns) for f in (members, synthetic, holdout))
    # The pooled records (members, then control, duplicates kept) are counted on and relabelled by the
    # test; the distinct members and control records are columns of them (codes shared with the
    # synthetic records: one encoding).
    syn, pooled = _encode([synthetic.iloc[s_keep], pd.concat([members[columns], holdout[columns]],
                                                             ignore_index=True)], schema, columns)
    mem = np.ascontiguousarray(pooled[:, m_keep])
    ctl = np.ascontiguousarray(pooled[:, len(members) + c_keep])
    numeric = np.array([not schema.is_categorical(c) for c in columns])
    width = 1 if mode == "univariate" else n_cols

    if mode == "univariate":
        queries, attempts = _univariate_queries(syn, numeric, n_attacks, rng_queries), 0
    else:
        queries, attempts = _multivariate_queries(syn, numeric, n_attacks, n_cols, max_attempts, rng_queries)
    matches = _pooled_matches(pooled, len(members), queries)
    if matches is not None:
        # One scan of the pooled distinct records gives the counts and the test's relabellings.
        (main_count, main_row), (control_count, control_row), difference = matches.observed()
        main_first = np.where(main_row >= 0, np.searchsorted(m_keep, main_row), -1)
        control_first = np.where(control_row >= 0, np.searchsorted(c_keep, control_row - len(members)), -1)
    else:
        main_count, main_first = _match(mem, queries)
        control_count, control_first = _match(ctl, queries)
    baseline_count, _ = _match(mem, _baseline_queries(syn, numeric, n_attacks, width, rng_baseline))

    n_main, n_control_raw = int((main_count == 1).sum()), int((control_count == 1).sum())
    correction = None
    if n_control_raw and len(c_keep) != len(m_keep):
        correction = _control_correction(ctl, queries, len(m_keep), rng_correction)
    n_control = min(n_control_raw * correction, n_attacks) if correction is not None else n_control_raw
    p_value = None if matches is None else matches.p_value(difference, permutations, rng_test)
    risk = control_risk(n_main, n_attacks, n_control, n_attacks, confidence, p_value=p_value,
                        test=None if p_value is None else f"{SINGLING_OUT_TEST} ({permutations} relabellings)",
                        n_baseline_success=int((baseline_count == 1).sum()), n_baseline=n_attacks)

    def rows(count, first, ids, keep, member):
        hit = count == 1
        row_id = pd.array(np.where(hit, ids[keep][np.maximum(first, 0)], 0), dtype="Int64")
        row_id[~hit] = pd.NA
        return pd.DataFrame({"query": np.arange(len(count)), "member": member, "singled_out": hit, ROW_ID: row_id})

    records = pd.concat([rows(main_count, main_first, member_ids, m_keep, True),
                         rows(control_count, control_first, control_ids, c_keep, False)], ignore_index=True)
    return SinglingOutResult(risk=risk, mode=mode, n_attacks=int(n_attacks), n_queries=len(queries),
                             n_cols=width, columns=tuple(columns), seed=int(seed), max_attempts=int(max_attempts),
                             n_attempts=int(attempts), n_members=len(m_keep), n_control=len(c_keep),
                             n_synthetic=len(s_keep), control_success_raw=n_control_raw,
                             control_correction=correction, records=records)
