"""Exact intervals for a proportion, shared by every count of hits out of trials that the package
reports with an exact interval (the shadow attack's TPR and FPR, the epsilon audit's error rates),
and the exact test of two groups' success rates shared by every attack scored on members and on
holdout records one record at a time (RAPID's member excess, the control-set inference and
linkability attacks).

Clopper-Pearson: the two-sided exact interval at `confidence` from scipy's
`binomtest(k, n).proportion_ci(method="exact")`; each end is a one-sided (1 + confidence) / 2
bound.

Member excess: an attack fixed before the records are scored (fitted on, or reading, the synthetic
data only) gives every scored record a fixed success flag. Under "the release says no more about
members than about holdout records" the two groups are exchangeable, so permuting the member/holdout
labels over the scored records is the null; the members' success count is then hypergeometric, and
the one-sided exact p-value needs no drawn permutation (it is Fisher's exact test, one-sided). It is
exact whatever the records' success probabilities are and however many records share one nearest
synthetic record, where a normal approximation with the standard error taken at the estimate
(a Wald test) is too lenient when the member rate is above the holdout's.
"""

from __future__ import annotations

from scipy.stats import binomtest, hypergeom

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


#: the test `member_excess_p_value` makes, as reported beside its p-value
MEMBER_EXCESS_TEST = "exact permutation of the member/holdout labels over the scored records (hypergeometric)"


def member_excess_p_value(hits_members: int, n_members: int, hits_holdout: int, n_holdout: int) -> float:
    """One-sided exact p-value of "members succeed more often than holdout records" (module
    docstring): P(at least `hits_members` member successes) when the `hits_members + hits_holdout`
    successes fall on the `n_members + n_holdout` scored records at random."""
    for name, hits, n in (("members", hits_members, n_members), ("holdout", hits_holdout, n_holdout)):
        if int(hits) != hits or int(n) != n or n < 1 or not 0 <= hits <= n:
            raise ConfigError(f"{name}: {hits!r} successes out of {n!r} records is not a count of successes")
    p = hypergeom.sf(int(hits_members) - 1, int(n_members + n_holdout), int(hits_members + hits_holdout),
                     int(n_members))
    return float(min(max(p, 0.0), 1.0))
