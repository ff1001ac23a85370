"""Per-record risk scores of RAPID (Templ, Thees & Müller 2026, arXiv:2602.09235).

Categorical sensitive attribute, with g_i the attacker's probability of record i's true class:
- `rcs_marginal` (the paper's default): r_i = (g_i - b_i) / (1 - b_i), b_i the true class's share
  in the real data; 0 = no better than guessing by prevalence, 1 = certain. At risk if r_i > tau.
- `rcs_conditional`: g_i / max_{k != y_i} p_ik, the true class's probability relative to the
  attacker's best alternative for that same record (a baseline conditional on the record's
  quasi-identifiers rather than on prevalence). Reported on the scale ratio - 1 so that 0 means
  "tied with the best alternative"; at risk if ratio - 1 > tau.
- `nce` (normalised cross-entropy gain): 1 - log(g_i) / log(b_i); 0 at the prevalence baseline,
  1 when g_i = 1, negative when worse than the baseline. At risk if > tau.

Continuous sensitive attribute, error e_i between y_i and the prediction, at risk if e_i < epsilon:
- `relative`: |y - yhat| / (|y| + delta)   (the paper's algorithm)
- `symmetric`: 2 |y - yhat| / (|y| + |yhat| + 2 delta)   (the R package's default)
- `absolute`: |y - yhat|   (for attributes near zero)
Both inequalities are strict, as in the paper.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError, DataError

CATEGORICAL_METHODS = ("rcs_marginal", "rcs_conditional", "nce")
CONTINUOUS_ERRORS = ("relative", "symmetric", "absolute")
TINY = 1e-12


def class_shares(y_real: np.ndarray, sensitive: str = "sensitive") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(classes, each record's class code, each class's share in the real data); b_i is
    shares[codes[i]]. Codes let a permutation test re-index instead of re-encoding labels."""
    classes, codes, counts = np.unique(y_real, return_inverse=True, return_counts=True)
    if len(classes) < 2:
        raise DataError(
            f"sensitive attribute '{sensitive}' has a single level ({classes[0]!r}) in the real data: "
            "b_i = 1, so no gain over guessing is possible and RAPID is undefined"
        )
    return classes, codes, counts / counts.sum()


def categorical_scores(g: np.ndarray, b: np.ndarray, method: str = "rcs_marginal",
                       proba: np.ndarray | None = None, true_index: np.ndarray | None = None) -> np.ndarray:
    if method == "rcs_marginal":
        return (g - b) / (1.0 - b)
    if method == "nce":
        return 1.0 - np.log(np.maximum(g, TINY)) / np.log(b)
    if method == "rcs_conditional":
        if proba is None or true_index is None:
            raise ValueError("rcs_conditional needs the full probability matrix and true class index")
        others = proba.copy()
        valid = true_index >= 0
        others[np.flatnonzero(valid), true_index[valid]] = -np.inf
        best_other = others.max(axis=1) if others.shape[1] > 1 else np.zeros(len(g))
        return g / np.maximum(best_other, TINY) - 1.0
    raise ConfigError(f"categorical method {method!r} unknown; choose one of {list(CATEGORICAL_METHODS)}")


def continuous_errors(y: np.ndarray, yhat: np.ndarray, error: str = "relative", delta: float = 0.01) -> np.ndarray:
    if error == "relative":
        return np.abs(y - yhat) / (np.abs(y) + delta)
    if error == "symmetric":
        return 2.0 * np.abs(y - yhat) / (np.abs(y) + np.abs(yhat) + 2.0 * delta)
    if error == "absolute":
        return np.abs(y - yhat)
    raise ConfigError(f"continuous error {error!r} unknown; choose one of {list(CONTINUOUS_ERRORS)}")


def at_risk(scores: np.ndarray, threshold: float, categorical: bool) -> np.ndarray:
    """Strict inequalities: gain > tau, error < epsilon."""
    return scores > threshold if categorical else scores < threshold
