"""From a distinguishing test's errors to a statistical lower bound on epsilon.

A guess "the canary was in" made from a mechanism's output has, under (epsilon, delta)-DP
(Kairouz et al. 2015; Jagielski et al. 2020, Nasr et al. 2021), false positive rate FPR and false
negative rate FNR with

    FPR + e^epsilon FNR >= 1 - delta   and   FNR + e^epsilon FPR >= 1 - delta,

so any observed test gives

    epsilon >= max( log((1 - delta - FNR) / FPR),  log((1 - delta - FPR) / FNR) ).

The rates are estimated from finitely many runs, so each is replaced by its Clopper-Pearson upper
bound: the upper end of the exact two-sided interval at `confidence` (scipy's
`binomtest(k, n).proportion_ci(method="exact")`), i.e. a one-sided (1 + confidence) / 2 bound per
rate. Both hold together with probability at least `confidence` (union bound), and then

    epsilon_lower = max(0, log((1 - delta - FNR_upper) / FPR_upper), log((1 - delta - FPR_upper) / FNR_upper))

is a lower bound on the mechanism's true epsilon with that probability (a term whose numerator is
not positive counts as 0). With no error at all among n runs per side, FPR_upper = FNR_upper =
1 - ((1 - confidence) / 2)^(1 / n): the largest epsilon n runs can ever show.

Multiplicity. Each bound holds with probability `confidence` on its own; a run that audits k
(generator, epsilon) pairs and flags those above their nominal epsilon makes k such statements, and
at 95 % each, about one in twenty correct generators would be flagged by chance. With the run-level
(Bonferroni) correction every audit's bound is taken at 1 - (1 - confidence) / k, and then all k
hold together with probability at least `confidence` (union bound): the flags a steward reads are
family-wise. Without it, the k bounds hold together with probability at least 1 - k (1 - confidence).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ConfigError
from ..stats.proportions import clopper_pearson

#: the confidence level of every Clopper-Pearson bound in the audit, unless a caller says otherwise
CONFIDENCE = 0.95


def clopper_pearson_upper(errors: int, trials: int, confidence: float = CONFIDENCE) -> float:
    """Upper end of the exact (Clopper-Pearson) two-sided interval for an error rate."""
    try:
        return clopper_pearson(errors, trials, confidence)[1]
    except ConfigError as error:
        raise ConfigError(f"privacy audit: error rate: {error}") from None


def _check(delta: float, confidence: float) -> None:
    if not 0 <= delta < 1:
        raise ConfigError(f"privacy audit: delta must be in [0, 1), got {delta}")
    if not 0 < confidence < 1:
        raise ConfigError(f"privacy audit: confidence must be in (0, 1), got {confidence}")


def epsilon_from_bounds(fpr_upper: float, fnr_upper: float, delta: float) -> float:
    """The module's formula, for error rates already bounded."""
    terms = [0.0]
    for a, b in ((fnr_upper, fpr_upper), (fpr_upper, fnr_upper)):
        if 1.0 - delta - a > 0:
            terms.append(float(np.log((1.0 - delta - a) / b)))
    return max(terms)


@dataclass(frozen=True)
class Bound:
    """epsilon_lower from a test's error counts, with what went into it."""

    false_positives: int
    n_without: int
    false_negatives: int
    n_with: int
    fpr_upper: float
    fnr_upper: float
    delta: float
    confidence: float
    epsilon_lower: float

    def to_dict(self) -> dict:
        return asdict(self)


def epsilon_lower_bound(false_positives: int, n_without: int, false_negatives: int, n_with: int,
                        delta: float, confidence: float = CONFIDENCE) -> Bound:
    """epsilon_lower (module doc) from false positives among the runs without the canary and false
    negatives among the runs with it."""
    _check(delta, confidence)
    fpr_u = clopper_pearson_upper(false_positives, n_without, confidence)
    fnr_u = clopper_pearson_upper(false_negatives, n_with, confidence)
    return Bound(int(false_positives), int(n_without), int(false_negatives), int(n_with), fpr_u, fnr_u,
                 float(delta), float(confidence), epsilon_from_bounds(fpr_u, fnr_u, delta))


def errors_at(threshold: float, without: np.ndarray, with_: np.ndarray) -> tuple[int, int]:
    """(false positives, false negatives) of the guess "the canary was in" when statistic >= threshold."""
    return int(np.sum(np.asarray(without) >= threshold)), int(np.sum(np.asarray(with_) < threshold))


def choose_threshold(without: np.ndarray, with_: np.ndarray, delta: float, confidence: float = CONFIDENCE) -> float:
    """The threshold, among the midpoints between consecutive distinct observed values (and one
    below and one above them all), whose epsilon_lower on these runs is largest; among equals (with
    few runs every threshold may give 0) the one that separates best (largest true minus false
    positive rate), then the smallest. Choose it on runs kept apart from those that evaluate it: a
    threshold chosen and judged on the same runs overstates epsilon.

    Midpoints, not the observed values: every threshold in a gap between two observed values
    makes the same errors on these runs, and the gap's lower or upper end sits on one world's most
    extreme run, so that about 1 in (m + 1) of the other m runs of that world falls beyond it. With
    the worlds apart (synthcity's AIM: counts 1,056-1,104 without the canary, 1,560-1,609 with),
    the smallest 'with' run of 12 as the threshold made one of the 12 evaluation runs a false
    negative and cut epsilon_lower from 1.02 to 0.84; the middle of the gap made none."""
    without, with_ = np.asarray(without, dtype=float), np.asarray(with_, dtype=float)
    if not len(without) or not len(with_):
        raise ConfigError("privacy audit: choosing a threshold needs runs with and without the canary")
    values = np.unique(np.concatenate([without, with_]))
    candidates = np.concatenate([[values[0] - 1.0], (values[:-1] + values[1:]) / 2.0, [values[-1] + 1.0]])
    best, best_key = candidates[0], None
    for threshold in candidates:  # ascending, and only a strictly better key replaces: ties keep the smallest
        false_positives, false_negatives = errors_at(threshold, without, with_)
        bound = epsilon_lower_bound(false_positives, len(without), false_negatives, len(with_), delta, confidence)
        key = (bound.epsilon_lower, 1.0 - false_negatives / len(with_) - false_positives / len(without))
        if best_key is None or key > best_key:
            best, best_key = threshold, key
    return float(best)


def per_audit_confidence(confidence: float, audits: int, family_wise: bool = True) -> float:
    """The level of each of `audits` bounds: 1 - (1 - confidence) / audits with the Bonferroni
    correction (module doc), `confidence` without it."""
    if not 0 < confidence < 1:
        raise ConfigError(f"privacy audit: confidence must be in (0, 1), got {confidence}")
    if int(audits) < 1:
        raise ConfigError(f"privacy audit: the number of audits must be >= 1, got {audits}")
    return 1.0 - (1.0 - confidence) / int(audits) if family_wise else float(confidence)


def family_confidence(per_audit: float, audits: int) -> float:
    """The probability (at least) with which `audits` bounds, each at `per_audit`, hold together
    (Bonferroni): 1 - audits (1 - per_audit), and 0 when that is negative."""
    return max(0.0, 1.0 - int(audits) * (1.0 - per_audit))
