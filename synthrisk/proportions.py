"""Exact intervals for a proportion, shared by every count of hits out of trials that the package
reports with an exact interval (the shadow attack's TPR and FPR, the epsilon audit's error rates).

Clopper-Pearson: the two-sided exact interval at `confidence` from scipy's
`binomtest(k, n).proportion_ci(method="exact")`; each end is a one-sided (1 + confidence) / 2
bound.
"""

from __future__ import annotations

from scipy.stats import binomtest

from .errors import ConfigError


def clopper_pearson(hits: int, trials: int, confidence: float) -> tuple[float, float]:
    """(low, high) of the exact interval for `hits` successes in `trials`; an error naming the
    counts when they are not a count out of at least one trial."""
    if trials < 1:
        raise ConfigError(f"a proportion needs at least one trial, got {trials}")
    if not 0 <= hits <= trials:
        raise ConfigError(f"{hits} out of {trials} is not a count of successes")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    interval = binomtest(int(hits), int(trials)).proportion_ci(confidence, method="exact")
    return float(interval.low), float(interval.high)
