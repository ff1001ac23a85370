"""Attack success rates and the privacy risk measured against a control set (Giomi et al. 2023).

Success rate of an attack made `n` times with `k` successes, at confidence level c (Wilson 1927),
with z = Phi^-1((1 + c) / 2):

    rate  = (k + z^2 / 2) / (n + z^2)
    error = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)
    CI    = [rate - error, rate + error] clipped to [0, 1]

`rate` is the centre of the Wilson score interval (a shrinkage of k / n towards 1/2 that is
invisible at the sample sizes used here); anonymeter 1.1.0 reports the same centre.

Risk of the attack on the members (main rate r_m, error e_m) in excess of the same attack on the
control set (records never given to the generator; rate r_c, error e_c):

    risk  = (r_m - r_c) / (1 - r_c) = 1 - (1 - r_m) / (1 - r_c)
    CI    = 1 - [the score interval of the ratio of the failure rates (1 - r_m) / (1 - r_c)]
            (Miettinen & Nurminen 1985; `synthrisk.stats.proportions.ratio_score_interval`, from the counts)
    error = sqrt( (e_m / (1 - r_c))^2 + (e_c (r_m - 1) / (1 - r_c)^2)^2 )     (first-order propagation)

The reported risk and both ends of its interval are clipped to [0, 1]. The interval is the set of
risks that a score test does not reject: its variance is taken at the rates fitted under each risk.
The first-order `error` (anonymeter's interval is risk +- error) takes it at the estimate: where the
control rate is high, as inference's is, its lower end lies above the true risk about twice as often
as its level allows (`benchmarks/control_risk_interval.py`: 5.6 % against 2.5 % at a control rate
of 0.9; the score interval's 2.1-3.4 %). It is kept as `residual_error`, the spread the verdict
reads only for a run made before it had a p-value.

so 0 means the synthetic data helped the attacker no more on the members than on people who were
not in the training data, and 1 means every attack that fails on the control set succeeds on the
members. `residual` keeps the unclipped value (negative when the control set is attacked more
successfully). The naive baseline (random guesses) is reported as a rate with its own CI: an
attack no better than its baseline says that the attacker learnt nothing from the synthetic data.

Test: `p_value`, one-sided, of "the attack succeeds more often on the members than on the control
set", is the evaluator's own permutation test of the member/control labels. Inference and
linkability attack records one at a time, so the exact test is the hypergeometric one
(`synthrisk.stats.proportions.member_excess_p_value`); a singling-out query succeeds on a whole table, so
its test relabels the pooled records (`synthrisk.anonymity.singling_out`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import sqrt

import numpy as np
from scipy.stats import norm

from ..errors import ConfigError, DataError
from ..stats.proportions import MEMBER_EXCESS_TEST, member_excess_p_value, ratio_score_interval


def _z(confidence: float) -> float:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise ConfigError(f"confidence: must be a number strictly between 0 and 1, got {confidence!r}")
    return float(norm.ppf(0.5 * (1.0 + confidence)))


@dataclass(frozen=True)
class SuccessRate:
    """Wilson estimate of a success rate: `rate` is the interval's centre, `error` its half width."""

    n_success: float
    n: int
    rate: float
    error: float
    ci_low: float
    ci_high: float


def success_rate(n_success: float, n: int, confidence: float = 0.95) -> SuccessRate:
    """Wilson score estimate of a success rate (see the module docstring for the formula).

    `n_success` may be fractional (the singling-out control count after its size correction) and
    must lie in [0, n]."""
    z = _z(confidence)
    if int(n) != n or n < 1:
        raise DataError(f"n: the number of attacks must be a positive integer, got {n!r}")
    if not (0.0 <= n_success <= n):
        raise DataError(f"n_success: {n_success!r} successes out of {n} attacks is not a count in [0, n]")
    z2 = z * z
    rate = (n_success + 0.5 * z2) / (n + z2)
    error = z / (n + z2) * sqrt(n_success * (n - n_success) / n + 0.25 * z2)
    return SuccessRate(float(n_success), int(n), rate, error, min(max(rate - error, 0.0), 1.0),
                       min(max(rate + error, 0.0), 1.0))


@dataclass(frozen=True)
class ControlRisk:
    """Risk on the members in excess of the control set, with the rates it is made of."""

    risk: float
    ci_low: float
    ci_high: float
    residual: float
    residual_error: float
    confidence: float
    main: SuccessRate
    control: SuccessRate
    baseline: SuccessRate | None = None
    #: one-sided permutation p-value of main > control (module docstring); None: no test made
    p_value: float | None = None
    #: how `p_value` was computed
    test: str | None = None

    def to_json(self) -> dict:
        out = {"risk": self.risk, "ci_low": self.ci_low, "ci_high": self.ci_high, "residual": self.residual,
               "residual_error": self.residual_error, "confidence": self.confidence, "p_value": self.p_value,
               "test": self.test}
        for name in ("main", "control", "baseline"):
            rate = getattr(self, name)
            out[name] = None if rate is None else {k: float(v) if k != "n" else int(v) for k, v in asdict(rate).items()}
        return out


def control_risk(n_main_success: float, n_main: int, n_control_success: float, n_control: int,
                 confidence: float = 0.95, n_baseline_success: float | None = None,
                 n_baseline: int | None = None, p_value: float | None = None,
                 test: str | None = None) -> ControlRisk:
    """risk = (main - control) / (1 - control) from Wilson rates, with its score interval.

    See the module docstring for the formulas; the baseline rate is reported when given, and the
    evaluator's test (`p_value`, described by `test`) is carried as it is."""
    main = success_rate(n_main_success, n_main, confidence)
    control = success_rate(n_control_success, n_control, confidence)
    # The Wilson centre is below 1 for any finite n, so 1 - control.rate > 0.
    gap = 1.0 - control.rate
    residual = (main.rate - control.rate) / gap
    error = sqrt((main.error / gap) ** 2 + (control.error * (main.rate - 1.0) / gap ** 2) ** 2)
    baseline = None
    if (n_baseline_success is None) != (n_baseline is None):
        raise ConfigError("n_baseline_success and n_baseline: give both or neither")
    if n_baseline is not None:
        baseline = success_rate(n_baseline_success, n_baseline, confidence)

    def clip(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    ratio_low, ratio_high = ratio_score_interval(n_main - n_main_success, n_main, n_control - n_control_success,
                                                 n_control, confidence)
    # The interval is of the counts; the risk is of the Wilson centres (anonymeter's estimate). They
    # differ by a shrinkage invisible at the attack counts used, but keep the risk inside.
    low, high = min(1.0 - ratio_high, residual), max(1.0 - ratio_low, residual)
    return ControlRisk(risk=clip(residual), ci_low=clip(low), ci_high=clip(high),
                       residual=residual, residual_error=error, confidence=float(confidence), main=main,
                       control=control, baseline=baseline,
                       p_value=None if p_value is None else float(min(max(p_value, 0.0), 1.0)), test=test)


def record_control_risk(main_hits, control_hits, confidence: float = 0.95, n_baseline_success: float | None = None,
                        n_baseline: int | None = None) -> ControlRisk:
    """`control_risk` of an attack made one record at a time (inference, linkability), from each
    attacked record's success (booleans, members and control), with the exact test of the
    member/control labels over the attacked records (`synthrisk.stats.proportions.member_excess_p_value`)."""
    k_main, n_main = int(np.count_nonzero(main_hits)), len(main_hits)
    k_control, n_control = int(np.count_nonzero(control_hits)), len(control_hits)
    return control_risk(k_main, n_main, k_control, n_control, confidence, n_baseline_success=n_baseline_success,
                        n_baseline=n_baseline, p_value=member_excess_p_value(k_main, n_main, k_control, n_control),
                        test=MEMBER_EXCESS_TEST)
