"""One-dimensional Gaussian kernel sums in O((n + m) log(n + m)), with a stated relative error.

`log_gauss_sum(sources, targets, h)` returns, for every target y,

    log S(y),   S(y) = sum_j exp(-(y - s_j)^2 / (2 h^2)),

for n sources and m targets, in time linear in n + m after sorting, whatever h. (scikit-learn's
exact `KernelDensity.score_samples` costs n x m kernel evaluations; the grid of spacing h/20 that
synthrisk evaluated it on before has range / h x 20 points, so its cost grew like n^1.2 x n.)

Method (a block Taylor expansion; in bandwidth units u = (y - c) / h, a = (s - c) / h):

- the sorted targets are cut into blocks of width 2h; in a block with centre c, |u| <= 1;
- the sources a block sees (those within R_B bandwidths of c, below) are cut into bins of width 2h
  with centres a0, so |b| <= 1 for b = a - a0. Exactly,
      exp(-(u - a)^2 / 2) = exp(-(u - a0)^2 / 2) * exp(-b^2 / 2 - a0 b) * exp(u b),
  and exp(u b) is replaced by its Taylor polynomial of degree TERMS - 1: the coefficients
  D_k = sum_{s in bin} exp(-b^2/2 - a0 b) b^k / k! are summed once per (block, bin), and each
  target of the block gets sum_bins exp(-(u - a0)^2 / 2) sum_k D_k u^k, summed in log space (with
  each bin's scale kept as a logarithm: no overflow or underflow, in the far tails too).

Error, relative to S(y), for every target (bounds, not estimates):
- series: with |u b| <= 1, each source's exp(u b) is replaced with relative error at most
  e^2 / TERMS! (3e-18 at TERMS = 20); every term of S is positive, so S keeps that bound;
- truncation: a block sees the sources within R_B = 1 + sqrt((r_B + 1)^2 + 2 log(n / TRUNCATION))
  bandwidths of its centre, r_B being the distance from the centre to the nearest source. For a
  target of the block the nearest source contributes at least exp(-(r_B + 1)^2 / 2), and each of
  the at most n sources left out at most exp(-(R_B - 1)^2 / 2): what is left out is at most
  TRUNCATION = 1e-10 of S(y). The window adapts: near the data it is about 10 bandwidths wide on
  each side, far from every source (a tail) a thin shell around the nearest sources;
- rounding: the polynomial's terms cancel by at most a factor e^2 per source, about 1e-14.
So |S_computed / S - 1| <= 1.0e-10 plus rounding: |log S_computed - log S| <= 1.1e-10 in exact
arithmetic, and the rounding of (y - s)^2 / h^2 itself (as in any evaluation of the kernel) where
log S is very negative.

Cost: each source enters at most about R_B + 1 blocks (11 near the data at n = 10^6), each entry
TERMS multiply-adds; each target is evaluated on the bins of its block (about 11 x TERMS
multiply-adds). Blocks whose every target has log S certainly below `skip_below` are not
evaluated (-inf): the caller's floor.
"""

from __future__ import annotations

import math

import numba
import numpy as np

TERMS = 20            # Taylor terms of exp(u b), |u b| <= 1
TRUNCATION = 1e-10    # bound on the share of S(y) left out by the window
BLOCK = 2.0           # width of a block of targets, in bandwidths (|u| <= 1)
BIN = 2.0             # width of a bin of sources, in bandwidths (|b| <= 1)
_INVERSE_FACTORIALS = np.array([1.0 / math.factorial(k) for k in range(TERMS)])


def relative_error_bound(terms: int = TERMS, truncation: float = TRUNCATION) -> float:
    """The bound on |S_computed / S - 1| before rounding (module docstring)."""
    return truncation + math.e ** 2 / math.factorial(terms)


@numba.njit(parallel=True, cache=True)
def _coefficients(s, centre, h, lo, hi, first_bin, key_start, inverse_factorials, shift, coef):
    """Per block and bin: shift (the log of the bin's largest exp(-b^2/2 - a0 b)) and D_k / that."""
    terms = coef.shape[1]
    for block in numba.prange(len(centre)):
        for j in range(lo[block], hi[block]):  # pass 1: each bin's largest exponent
            a = (s[j] - centre[block]) / h
            bin_ = np.rint(a / 2.0)
            b = a - 2.0 * bin_
            key = key_start[block] + int(bin_) - first_bin[block]
            value = -0.5 * b * b - 2.0 * bin_ * b
            if value > shift[key]:
                shift[key] = value
        for j in range(lo[block], hi[block]):  # pass 2: the coefficients, scaled
            a = (s[j] - centre[block]) / h
            bin_ = np.rint(a / 2.0)
            b = a - 2.0 * bin_
            key = key_start[block] + int(bin_) - first_bin[block]
            w = np.exp(-0.5 * b * b - 2.0 * bin_ * b - shift[key])
            for k in range(terms):
                coef[key, k] += w * inverse_factorials[k]
                w *= b


@numba.njit(parallel=True, cache=True)
def _evaluate(ys, centre, h, starts, ends, first_bin, key_start, shift, coef, out):
    """log sum over the block's bins of exp(shift - (u - a0)^2 / 2) * sum_k D_k u^k, per target."""
    terms = coef.shape[1]
    for block in numba.prange(len(centre)):
        k0, k1 = key_start[block], key_start[block + 1]
        for i in range(starts[block], ends[block]):
            u = (ys[i] - centre[block]) / h
            top = -np.inf
            total = 0.0
            for key in range(k0, k1):
                if shift[key] == -np.inf:
                    continue  # an empty bin
                acc = coef[key, terms - 1]
                for k in range(terms - 2, -1, -1):
                    acc = acc * u + coef[key, k]
                a0 = 2.0 * (first_bin[block] + key - k0)
                term = np.log(acc) + shift[key] - 0.5 * (u - a0) * (u - a0)
                if term > top:
                    total = total * np.exp(top - term) + 1.0
                    top = term
                else:
                    total += np.exp(term - top)
            out[i] = top + np.log(total) if total > 0 else -np.inf


def log_gauss_sum(sources: np.ndarray, targets: np.ndarray, h: float, skip_below: float = -np.inf,
                  presorted: bool = False) -> np.ndarray:
    """log sum_j exp(-(y - s_j)^2 / (2 h^2)) for every target y (-inf where there is no source, or
    where the value is certainly below `skip_below`). `sources` must be sorted when `presorted`.
    The result does not depend on the number of threads (each block is summed by one)."""
    s = np.asarray(sources, dtype=float) if presorted else np.sort(np.asarray(sources, dtype=float))
    y = np.asarray(targets, dtype=float)
    out = np.full(len(y), -np.inf)
    if len(s) == 0 or len(y) == 0:
        return out
    if not (h > 0 and np.isfinite(h)):
        raise ValueError(f"bandwidth must be positive and finite, got {h}")
    if not (np.isfinite(s).all() and np.isfinite(y).all()):
        raise ValueError("sources and targets must be finite")
    n = len(s)
    order = np.argsort(y, kind="stable")
    ys = np.ascontiguousarray(y[order])
    block_of = np.floor((ys - ys[0]) / (BLOCK * h)).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, block_of[1:] != block_of[:-1]])
    ends = np.r_[starts[1:], len(ys)]
    centre = ys[0] + (block_of[starts] + 0.5) * BLOCK * h
    half = BLOCK / 2
    at = np.searchsorted(s, centre)
    nearest = np.minimum(np.abs(centre - s[np.maximum(at - 1, 0)]), np.abs(s[np.minimum(at, n - 1)] - centre)) / h
    reach = half + np.sqrt((nearest + half) ** 2 + 2.0 * math.log(n / TRUNCATION))
    live = math.log(n) - np.maximum(nearest - half, 0.0) ** 2 / 2 >= skip_below
    lo = np.searchsorted(s, centre - reach * h, side="left")
    hi = np.where(live, np.searchsorted(s, centre + reach * h, side="right"), lo)
    # bins of each block: from the bin of its first source to that of its last
    has = hi > lo
    first_bin = np.where(has, np.rint((s[np.minimum(lo, n - 1)] - centre) / h / BIN), 0).astype(np.int64)
    last_bin = np.where(has, np.rint((s[np.maximum(hi - 1, 0)] - centre) / h / BIN), -1).astype(np.int64)
    n_bins = np.where(has, last_bin - first_bin + 1, 0)
    key_start = np.concatenate([[0], np.cumsum(n_bins)])
    shift = np.full(int(key_start[-1]), -np.inf)
    coef = np.zeros((int(key_start[-1]), TERMS))
    _coefficients(s, centre, float(h), lo, hi, first_bin, key_start, _INVERSE_FACTORIALS, shift, coef)
    result = np.empty(len(ys))
    _evaluate(ys, centre, float(h), starts, ends, first_bin, key_start, shift, coef, result)
    out[order] = result
    return out
