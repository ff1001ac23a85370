"""Holm's step-down correction, the one multiple-testing rule of synthrisk: over the attacks of a
risk, the attackers of one RAPID replicate, every membership attack x statistic run on one
synthetic dataset, and DOMIAS's two statistics; and the one rule that merges a test's p-values over
seeds (`merged_p_value`).

Written here rather than called from statsmodels: `statsmodels.stats.multitest.multipletests`
runs `gc.collect()` on every Holm call, which costs about 0.4 s in a process that holds torch and
jax, several times per audit and per calibration split. `tests/unit/test_multiple_testing.py`
checks this against statsmodels on random p-values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def holm_adjusted(p_values) -> np.ndarray:
    """Holm's adjusted p-values, in the input's order: the k-th smallest p times (m - k + 1), made
    monotone and capped at 1. NaN p-values are not allowed (drop untested hypotheses first)."""
    p = np.asarray(p_values, dtype=float)
    if np.isnan(p).any():
        raise ValueError("Holm's correction got a NaN p-value; drop the hypotheses that were not tested")
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return adjusted


def holm_rejects(p_values, alpha: float) -> np.ndarray:
    """Which hypotheses Holm's procedure rejects at family-wise level `alpha`."""
    return holm_adjusted(p_values) <= alpha


def merged_p_value(p_values) -> float:
    """One valid p-value from the p-values of one test on several seeds (runs of the same data with
    other random draws, so dependent in an unknown way): twice their median, capped at 1 (the
    quantile merging of Rüschendorf 1982 and Meng 1994, valid under any dependence; the median
    alone is not). A single p-value is itself; none gives NaN."""
    p = np.asarray(pd.to_numeric(pd.Series(p_values), errors="coerce").dropna(), dtype=float)
    if not len(p):
        return float("nan")
    return float(p[0]) if len(p) == 1 else float(min(1.0, 2.0 * np.median(p)))


def benjamini_hochberg(p_values, q: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Hochberg step-up procedure rejects at false-discovery rate `q`:
    the k smallest p-values, for the largest k with p_(k) <= k q / m. Valid for independent or
    positively dependent (PRDS) p-values, such as conformal p-values against one calibration set
    (Bates, Candès, Lei, Romano & Sesia 2023)."""
    p = np.asarray(p_values, dtype=float)
    if np.isnan(p).any():
        raise ValueError("Benjamini-Hochberg got a NaN p-value; drop the hypotheses that were not tested")
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    if not m:
        return rejected
    order = np.argsort(p, kind="stable")
    below = np.flatnonzero(p[order] <= q * np.arange(1, m + 1) / m)
    if len(below):
        rejected[order[: below[-1] + 1]] = True
    return rejected
