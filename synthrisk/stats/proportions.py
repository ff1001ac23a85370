"""Exact intervals for a proportion, shared by every count of hits out of trials that the package
reports with an exact interval (the shadow attack's TPR and FPR, the epsilon audit's error
rates), the score interval for a ratio of two proportions (the control-set risks' interval), and
the exact test of two groups' success rates shared by every attack scored on members and on
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

Ratio: Miettinen & Nurminen's (1985) score interval for p1 / p2, the set of ratios r that the score
test of "p1 = r p2" does not reject at `confidence` (two-sided). Its statistic's variance is taken
at the rates fitted under that r, not at the estimate, so its ends agree with a test at each r
where a Wald interval (standard error at the estimate) is too narrow towards a small excess.
"""

from __future__ import annotations

import math
import warnings

from scipy.optimize import brentq
from scipy.stats import binomtest, hypergeom, norm

from ..errors import ConfigError


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


def ratio_score_interval(count1: float, n1: int, count2: float, n2: int, confidence: float = 0.95) -> tuple[float, float]:
    """(low, high) of the score interval for p1 / p2 from `count1` of `n1` and `count2` of `n2`
    (module docstring); low may be 0 and high infinite (count2 = 0). Counts may be fractional.

    statsmodels' `score_test_proportions_2indep` gives the statistic; it is inverted here by root
    finding because statsmodels' own interval (`confint_proportions_2indep(method="score",
    compare="ratio")`, 0.15) fails when a count is 0 or n: [0.5, 0.5] for 0 of 100 against 100
    of 100, complex ends for n of n against n of n, and division by zero in its inversion."""
    from statsmodels.stats.proportion import score_test_proportions_2indep

    for name, count, n in (("first", count1, n1), ("second", count2, n2)):
        if not (n >= 1 and 0 <= count <= n):
            raise ConfigError(f"{name} group: {count!r} out of {n!r} is not a count of successes")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}")
    if count1 == 0 and count2 == 0:  # both rates 0: the data say nothing about their ratio
        return 0.0, math.inf
    z = float(norm.ppf(0.5 + confidence / 2))

    def statistic(log_ratio: float) -> float:
        # decreasing in the ratio: positive where the hypothesised ratio is below the data's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value = score_test_proportions_2indep(count1, n1, count2, n2, value=math.exp(log_ratio),
                                                  compare="ratio", correction=True, return_results=True).statistic
        return float(value)

    lo_end, hi_end = -30.0, 30.0  # ratios e^-30 .. e^30: beyond them the bound is 0 or infinite
    # The statistic is 0 at the estimate's log ratio; each bound is searched between it and one end.
    # Brackets stop 1e-6 beyond the estimate: at two rates of 1 the statistic is 0 / 0 within ~1e-8
    # of a ratio of 1 and noise there.
    estimate = math.log((count1 / n1) / (count2 / n2)) if count1 and count2 else None
    low = 0.0 if count1 == 0 or statistic(lo_end) <= z else math.exp(
        brentq(lambda r: statistic(r) - z, lo_end, hi_end if estimate is None else estimate + 1e-6, xtol=1e-10))
    high = math.inf if count2 == 0 or statistic(hi_end) >= -z else math.exp(
        brentq(lambda r: statistic(r) + z, lo_end if estimate is None else estimate - 1e-6, hi_end, xtol=1e-10))
    return low, high


MEMBER_EXCESS_CI = "newcombe"  # Newcombe's hybrid score interval (his method 10) for p1 - p2


def member_excess_test(n_at_risk: int, n: int, n_at_risk_holdout: int, n_holdout: int) -> dict:
    """Member excess (the share of members an attack succeeds on minus its share of holdout records:
    RAPID's, synthpop's repU and DiSCO), its 95% interval and the one-sided p-value of excess > 0.

    Interval: Newcombe's hybrid score interval for a difference of two independent proportions
    (Newcombe 1998, method 10; statsmodels' `newcomb`). Test: the attacker is fitted once, so every
    scored record's at-risk flag is fixed; under "no member-specific inference" members and holdout
    records are exchangeable, and permuting the member/holdout labels over the scored records gives
    the null. Its distribution of the members' at-risk count is hypergeometric, so the test is exact
    without drawing permutations (it is the one-sided Fisher exact test)."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    excess = n_at_risk / n - n_at_risk_holdout / n_holdout
    low, high = confint_proportions_2indep(n_at_risk, n, n_at_risk_holdout, n_holdout, method=MEMBER_EXCESS_CI,
                                           compare="diff", alpha=0.05)
    # The score bounds at 0 or n can miss the point estimate by rounding: keep it inside.
    low, high = min(float(low), excess), max(float(high), excess)
    return {"member_excess": float(excess), "member_excess_ci_low": low, "member_excess_ci_high": high,
            "member_excess_p_value": member_excess_p_value(n_at_risk, n, n_at_risk_holdout, n_holdout)}
