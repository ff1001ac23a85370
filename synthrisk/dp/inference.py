"""Estimators and intervals computed from a release (post-processing only), batched over replicates.

- plug-in DP MLE: solve grad A(theta) = noisy mean statistic;
- noise-aware MLE: maximise the (normal) likelihood of the noisy statistic itself,
  S_noisy ~ N(grad A(theta), Cov(s; theta)/n + sigma^2 I); first-order equivalent to the plug-in,
  and still defined when the noisy statistic falls outside the family's mean space;
- calibrated Wald intervals with Var = J Cov(s) J'/n + sigma^2 J J' (see families.py);
- parametric bootstrap: re-run the whole release (records, clipping, noise) from the estimate; a
  release without a solution has no estimate to start from and gets a flagged, empty interval;
- the naive analysis: sample n synthetic records from the DP fit, fit the ordinary MLE and use the
  ordinary interval, as an analyst who treats DP synthetic data as real would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.stats import norm

from .lockstep import lbfgsb_lockstep
from .mechanism import Release

LEVEL = 0.95


def z_value(level: float = LEVEL) -> float:
    return float(norm.ppf(0.5 + level / 2))


def plugin(family, noisy_mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full parameter per replicate and whether the moment equation had a solution."""
    return family.solve(np.asarray(noisy_mean, dtype=float))


def calibrated_variance(family, theta: np.ndarray, n: int, sigma) -> np.ndarray:
    """Covariance of the reported parameters: J Cov(s) J'/n + sigma^2 J J' (sigma may be per row)."""
    jac = family.jacobian(theta)
    with np.errstate(over="ignore", invalid="ignore"):  # diverged rows: flagged by solve(), NaN here
        sampling = jac @ family.stat_cov(theta) @ np.swapaxes(jac, -1, -2) / n
    privacy = np.asarray(sigma, dtype=float)[..., None, None] ** 2 * (jac @ np.swapaxes(jac, -1, -2))
    return sampling + privacy


def wald(family, theta: np.ndarray, n: int, sigma, level: float = LEVEL):
    """(estimate, low, high, standard error) of the reported parameters."""
    estimate = theta[..., family.reported]
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.diagonal(calibrated_variance(family, theta, n, sigma), axis1=-2, axis2=-1))
    z = z_value(level)
    return estimate, estimate - z * se, estimate + z * se, se


def nonprivate(family, data: dict, level: float = LEVEL):
    """The ordinary MLE and Wald interval on the real records (the reference, not private).
    `data` may hold a batch of datasets (leading axes)."""
    theta, _ = family.solve(family.statistic(data).mean(axis=-2))
    return wald(family, theta, np.shape(data["y"])[-1], 0.0, level)


def naive(family, theta: np.ndarray, n: int, rng: np.random.Generator, level: float = LEVEL):
    """Synthetic data of n records from the DP fit, analysed as if real (ordinary MLE and Wald)."""
    synthetic_theta, _ = family.solve(family.synthetic_mean_statistic(theta, n, rng))
    return wald(family, synthetic_theta, n, 0.0, level)


def noise_aware_objective(family, free: np.ndarray, noisy_mean: np.ndarray, n: int, sigma: float) -> np.ndarray:
    """Negative log-likelihood (up to a constant) of noisy mean statistics under the normal law
    N(grad A(theta), Cov(s; theta)/n + sigma^2 I), theta = family.free_to_theta(free); one value per
    row of `free` (rows, q) and `noisy_mean` (rows, d). +inf where the covariance is not positive
    definite, NaN where it is not finite. Every operation is row by row, so a row's value does not
    depend on the other rows (the batched and one-at-a-time optimisers see the same numbers)."""
    theta = family.free_to_theta(free)
    with np.errstate(over="ignore", invalid="ignore"):
        cov = family.stat_cov(theta) / n + sigma ** 2 * np.eye(noisy_mean.shape[-1])
        resid = noisy_mean - family.mean_map(theta)
    finite = np.all(np.isfinite(cov), axis=(-2, -1)) & np.all(np.isfinite(resid), axis=-1)
    cov = np.where(finite[:, None, None], cov, np.eye(cov.shape[-1]))
    sign, logdet = np.linalg.slogdet(cov)
    positive = sign > 0
    cov = np.where(positive[:, None, None], cov, np.eye(cov.shape[-1]))
    solved = np.linalg.solve(cov, resid[..., None])[..., 0]
    value = 0.5 * (np.sum(resid * solved, axis=-1) + logdet)
    return np.where(finite, np.where(positive, value, np.inf), np.nan)


def noise_aware(family, noisy_mean: np.ndarray, n: int, sigma: float, start: np.ndarray) -> np.ndarray:
    """Maximiser of the normal likelihood of the noisy statistic, started at `start` (full theta),
    by scipy's L-BFGS-B with its default finite-difference gradient. One release at a time: the
    reference that noise_aware_batch reproduces exactly.

    Written here because the likelihood is specific to this release; scipy does the optimisation.
    """
    noisy = np.asarray(noisy_mean, dtype=float)[None, :]

    def objective(free):
        return float(noise_aware_objective(family, free[None, :], noisy, n, sigma)[0])

    result = minimize(objective, family.theta_to_free(start), method="L-BFGS-B")
    return family.free_to_theta(result.x)


def noise_aware_batch(family, noisy_mean: np.ndarray, n: int, sigma: float, start: np.ndarray) -> np.ndarray:
    """noise_aware for every row of `noisy_mean` (rows, d) and `start` (rows, dim) at once, with the
    same numbers: one scipy L-BFGS-B state per release, stepped in lockstep, the objective and its
    finite differences evaluated for all releases in one batched call (lbfgsb_lockstep)."""
    noisy = np.asarray(noisy_mean, dtype=float)
    start_free = np.stack([family.theta_to_free(row) for row in np.asarray(start, dtype=float)])

    def objective(free, rows):
        return noise_aware_objective(family, free, noisy[rows], n, sigma)

    free = lbfgsb_lockstep(objective, start_free)
    return np.stack([family.free_to_theta(row) for row in free])


def simulate_releases(family, theta: np.ndarray, n: int, clip: float, sigma: float, rng: np.random.Generator,
                      draws: int | tuple = (), noise_rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`draws` independent releases of n fresh records from parameter `theta`: the noisy mean
    statistics and their noise-free clipped means, each draws + (d,) (draws may be an int, a shape,
    or () for one release). The clipped means are drawn first (from `rng`), then the noise (from
    `noise_rng`, the mechanism's own generator in the experiments; by default `rng`, as in the
    bootstrap, whose simulated releases are the analyst's post-processing)."""
    size = (int(draws),) if np.ndim(draws) == 0 else tuple(draws)
    clean = family.clipped_mean_statistic(np.asarray(theta, dtype=float), n, clip, rng, size)
    noise_rng = rng if noise_rng is None else noise_rng
    return clean + noise_rng.normal(0.0, sigma, size=clean.shape), clean


BOOTSTRAP_MIN_SOLVED = 0.5  # below this share of solvable bootstrap releases the interval is flagged


class BootstrapInterval(NamedTuple):
    """A parametric-bootstrap interval of the reported parameters and whether it may be used.

    `valid` is False (and the bounds NaN) when the release has no estimate to resample from (its
    MLE did not converge or is not finite: the release is skipped, nothing is simulated), or when
    fewer than BOOTSTRAP_MIN_SOLVED of the bootstrap releases had a solution (their quantiles would
    describe a censored distribution), or when a bound is not finite. `solved` counts the bootstrap
    releases with a solution, out of `draws`."""

    low: np.ndarray
    high: np.ndarray
    valid: bool
    solved: int
    draws: int


def bootstrap(family, theta: np.ndarray, n: int, clip: float, sigma: float, rng: np.random.Generator,
              draws: int = 200, level: float = LEVEL, valid: bool = True) -> BootstrapInterval:
    """Parametric-bootstrap interval of the reported parameters, resampled from the estimate `theta`.

    The basic (pivotal) form 2*theta_hat - quantiles: the bootstrap replays clipping, so a bias
    that clipping adds to the estimate is subtracted rather than doubled as with percentiles.
    `valid` says whether `theta` solved the release's moment equation (`plugin`'s flag): a release
    without a solution, or with a non-finite estimate, is skipped and flagged, never resampled from
    its diverged iterate."""
    theta = np.asarray(theta, dtype=float)
    if not _resamplable(theta, valid):
        return _skipped(family, theta, draws)
    noisy, _ = simulate_releases(family, theta, n, clip, sigma, rng, draws)
    estimates, solved = family.solve(noisy)
    return _basic_interval(family, theta, estimates, solved, draws, level)


def bootstrap_batch(family, theta: np.ndarray, valid: np.ndarray, n: int, clip: float, sigma: float,
                    streams: list, draws: int = 200, level: float = LEVEL) -> list[BootstrapInterval]:
    """bootstrap for every row of `theta` (rows, dim), release r resampled with its own generator
    streams[r], with the same numbers as calling bootstrap row by row: each release's bootstrap
    records are drawn from its stream as bootstrap would, then all rows x draws bootstrap releases
    are solved in one batched Newton solve (whose rows do not interact, see GLMFamily.solve)."""
    theta = np.asarray(theta, dtype=float)
    resampled = [r for r in range(len(theta)) if _resamplable(theta[r], valid[r])]
    out = [_skipped(family, row, draws) for row in theta]
    if not resampled:
        return out
    noisy = [simulate_releases(family, theta[r], n, clip, sigma, streams[r], draws)[0] for r in resampled]
    estimates, solved = family.solve(np.concatenate(noisy))
    estimates = estimates.reshape(len(resampled), draws, -1)
    solved = solved.reshape(len(resampled), draws)
    for k, r in enumerate(resampled):
        out[r] = _basic_interval(family, theta[r], estimates[k], solved[k], draws, level)
    return out


def _resamplable(theta: np.ndarray, valid) -> bool:
    return bool(valid) and bool(np.all(np.isfinite(theta)))


def _skipped(family, theta: np.ndarray, draws: int) -> BootstrapInterval:
    nan = np.full(theta[family.reported].shape, np.nan)
    return BootstrapInterval(nan, nan.copy(), False, 0, int(draws))


def _basic_interval(family, theta, estimates, solved, draws: int, level: float) -> BootstrapInterval:
    """The basic interval from the bootstrap estimates of one release; flagged when fewer than
    BOOTSTRAP_MIN_SOLVED of them solved or a bound is not finite."""
    center = theta[family.reported]
    nan = np.full(center.shape, np.nan)
    solved = solved & np.all(np.isfinite(estimates), axis=-1)
    count = int(solved.sum())
    if count < max(2, BOOTSTRAP_MIN_SOLVED * draws):
        return BootstrapInterval(nan, nan.copy(), False, count, int(draws))
    reported = estimates[solved][:, family.reported]
    alpha = 1.0 - level
    low_q, high_q = np.quantile(reported, [alpha / 2, 1 - alpha / 2], axis=0)
    low, high = 2 * center - high_q, 2 * center - low_q
    ok = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
    return BootstrapInterval(low if ok else nan, high if ok else nan.copy(), ok, count, int(draws))


@dataclass
class DPInference:
    """Everything an analyst gets from one release (all of it post-processing)."""

    family: str
    parameters: tuple
    n: int
    epsilon: float
    delta: float
    clip: float
    sigma: float
    theta: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    valid: bool
    noise_aware_theta: np.ndarray
    noise_aware_ci_low: np.ndarray
    noise_aware_ci_high: np.ndarray
    bootstrap_ci_low: np.ndarray
    bootstrap_ci_high: np.ndarray
    naive_theta: np.ndarray
    naive_ci_low: np.ndarray
    naive_ci_high: np.ndarray
    meta: dict = field(default_factory=dict)
    # False when the release had no estimate to resample from (see `bootstrap`): bounds NaN
    bootstrap_valid: bool = True

    def to_json(self) -> dict:
        def named(values):
            return {name: float(v) for name, v in zip(self.parameters, values)}

        out = {"family": self.family, "n": self.n, "epsilon": self.epsilon, "delta": self.delta,
               "clip": self.clip, "sigma": self.sigma, "level": LEVEL, "valid": bool(self.valid)}
        for key in ("theta", "ci_low", "ci_high", "se", "noise_aware_theta", "noise_aware_ci_low",
                    "noise_aware_ci_high", "bootstrap_ci_low", "bootstrap_ci_high", "naive_theta",
                    "naive_ci_low", "naive_ci_high"):
            out[key] = named(getattr(self, key))
        out["bootstrap_valid"] = bool(self.bootstrap_valid)
        if not self.bootstrap_valid:  # no interval, and no NaN in the JSON
            out["bootstrap_ci_low"] = out["bootstrap_ci_high"] = None
        out.update(self.meta)
        return out


def analyse(family, release: Release, rng: np.random.Generator, bootstrap_draws: int = 200,
            level: float = LEVEL) -> DPInference:
    """Plug-in, noise-aware, bootstrap and naive results for one release."""
    theta, valid = plugin(family, release.noisy_mean)
    estimate, low, high, se = wald(family, theta, release.n, release.sigma, level)
    aware = noise_aware(family, release.noisy_mean, release.n, release.sigma, theta)
    _, aware_low, aware_high, _ = wald(family, aware, release.n, release.sigma, level)
    boot = bootstrap(family, theta, release.n, release.clip, release.sigma, rng, bootstrap_draws, level,
                     valid=bool(valid))
    naive_estimate, naive_low, naive_high, _ = naive(family, theta, release.n, rng, level)
    return DPInference(
        family=family.name, parameters=family.parameter_names, n=release.n, epsilon=release.epsilon,
        delta=release.delta, clip=release.clip, sigma=release.sigma, theta=estimate, ci_low=low,
        ci_high=high, se=se, valid=bool(valid), noise_aware_theta=aware[family.reported],
        noise_aware_ci_low=aware_low, noise_aware_ci_high=aware_high, bootstrap_ci_low=boot.low,
        bootstrap_ci_high=boot.high, naive_theta=naive_estimate, naive_ci_low=naive_low,
        naive_ci_high=naive_high, meta=dict(release.meta), bootstrap_valid=boot.valid,
    )
