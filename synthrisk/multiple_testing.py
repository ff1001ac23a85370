"""Holm's step-down correction, the one multiple-testing rule of synthrisk: over the attacks of a
risk, the attackers of one RAPID replicate, every membership attack x statistic run on one
synthetic dataset, and DOMIAS's two statistics.

Written here rather than called from statsmodels: `statsmodels.stats.multitest.multipletests`
runs `gc.collect()` on every Holm call, which costs about 0.4 s in a process that holds torch and
jax, several times per audit and per calibration split. `tests/unit/test_multiple_testing.py`
checks this against statsmodels on random p-values.
"""

from __future__ import annotations

import numpy as np


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
