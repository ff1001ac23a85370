"""The private release: clipped per-record sufficient statistics, their mean, Gaussian noise.

Neighbouring datasets differ by replacing one record (n is public). Every per-record statistic is
clipped to l2 norm B, so replacing one record moves the mean by at most 2B/n: the l2 sensitivity.
The noise scale for (epsilon, delta) is the analytic Gaussian mechanism of Balle & Wang (2018),
computed by `dp-accounting` for unit sensitivity and scaled by the sensitivity.

The noise must come from a generator nobody can replay: by default fresh operating-system entropy
(synthrisk.stats.noise.noise_generator); a generator seeded with a known noise seed makes the release
reproducible and not private, and the caller marks it so (frames.dp_inference does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, DataError
from ..stats.noise import noise_generator


def check_privacy(epsilon: float, delta: float, clip: float) -> None:
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ConfigError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must be in (0, 1), got {delta}")
    if not np.isfinite(clip) or clip <= 0:
        raise ConfigError(f"clip bound B must be a finite number > 0, got {clip}")


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Noise standard deviation of the analytic Gaussian mechanism for an l2 `sensitivity`."""
    # imported here: the canary of the privacy audit (MST's public domain, in this module's
    # importers) is also built in generator environments of their own, which have no dp-accounting
    import dp_accounting

    return float(dp_accounting.get_sigma_gaussian(epsilon, delta)) * sensitivity


def clip_rows(statistics: np.ndarray, bound: float) -> np.ndarray:
    """Each row (one record's statistic, last axis) scaled down to l2 norm at most `bound`."""
    norms = np.linalg.norm(statistics, axis=-1, keepdims=True)
    return statistics * np.minimum(1.0, bound / np.maximum(norms, 1e-300))


@dataclass(frozen=True)
class Release:
    """What leaves the curator: the noisy mean statistic and the public facts needed to use it.

    Everything computed from a Release (estimates, intervals, synthetic data) is post-processing
    and has the same (epsilon, delta) guarantee.
    """

    noisy_mean: np.ndarray
    n: int
    epsilon: float
    delta: float
    clip: float
    sigma: float
    family: str
    meta: dict = field(default_factory=dict)

    @property
    def sensitivity(self) -> float:
        return 2.0 * self.clip / self.n


def minimum_n(epsilon: float, delta: float, clip: float) -> int:
    """Smallest n whose noise scale stays below the clip bound (sigma = unit_sigma * 2B/n < B)."""
    return int(np.floor(2.0 * gaussian_sigma(epsilon, delta, 1.0))) + 1


def release_statistics(statistics: np.ndarray, epsilon: float, delta: float, clip: float,
                       rng: np.random.Generator | None, family: str, meta: dict | None = None) -> Release:
    """Release mean(clip(s_i)) + N(0, sigma^2 I) for per-record statistics `statistics` (n, d).
    `rng` draws the noise and nothing else; None: fresh operating-system entropy (module doc)."""
    check_privacy(epsilon, delta, clip)
    rng = noise_generator(None) if rng is None else rng
    n = len(statistics)
    if n < minimum_n(epsilon, delta, clip):
        raise DataError(
            f"n = {n} records is too small for epsilon = {epsilon}, delta = {delta}: the noise scale would "
            f"exceed the clip bound, so the release would carry no information; need n >= "
            f"{minimum_n(epsilon, delta, clip)}"
        )
    sigma = gaussian_sigma(epsilon, delta, 2.0 * clip / n)
    clipped = clip_rows(np.asarray(statistics, dtype=float), clip)
    noisy = clipped.mean(axis=0) + rng.normal(0.0, sigma, size=clipped.shape[1])
    return Release(noisy_mean=noisy, n=n, epsilon=float(epsilon), delta=float(delta), clip=float(clip),
                   sigma=sigma, family=family, meta=dict(meta or {}))
