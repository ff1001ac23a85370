"""The per-repetition Monte Carlo: each repetition analysed on its own, as the coverage study did
before it was batched (scipy's L-BFGS-B per release for the noise-aware MLE, one bootstrap per
release, one Newton solve per estimate). Slow; kept as the reference the batched
experiments.coverage_rows must equal exactly (tests/unit/test_dp_batched.py, benchmarks/dp_monte_carlo.py).
"""

from __future__ import annotations

import numpy as np

from .experiments import INTERVALS, Setup, _invalid_to_nan, repetition_streams, summarise_coverage
from .inference import bootstrap, noise_aware, plugin, simulate_releases, wald
from .mechanism import gaussian_sigma


def coverage_rows_one_at_a_time(setup: Setup, name: str, n: int, eps: float, clip: float, settings: dict,
                                rng: np.random.Generator, extra: dict | None = None,
                                intervals=INTERVALS, noise_rng: np.random.Generator | None = None) -> list[dict]:
    """experiments.coverage_rows, one repetition at a time: each repetition draws from its own
    stream in the same order (release, reference records, bootstrap, synthetic data), and its
    release's noise from its stream of `noise_rng` (or from its own stream without one)."""
    fam = setup.family
    reps = settings["reps"]
    sigma = gaussian_sigma(eps, settings["delta"], 2 * clip / n)
    aware_reps = min(reps, settings.get("noise_aware_reps", reps)) if "noise_aware_wald" in intervals else 0
    boot_reps = min(reps, settings.get("bootstrap_reps", 50)) if "bootstrap" in intervals else 0
    draws = settings.get("bootstrap_draws", 100)
    noisy, theta, valid, mle, solved, aware, boot, synthetic = [], [], [], [], [], [], [], []
    streams = repetition_streams(rng, reps)
    noise_streams = streams if noise_rng is None else repetition_streams(noise_rng, reps)
    for r, (stream, noise_stream) in enumerate(zip(streams, noise_streams)):
        release, _ = simulate_releases(fam, setup.theta, n, clip, sigma, stream, noise_rng=noise_stream)
        estimate, ok = plugin(fam, release[None, :])
        noisy.append(release)
        theta.append(estimate[0])
        valid.append(bool(ok[0]))
        if "nonprivate" in intervals:
            reference, reference_ok = fam.solve(fam.synthetic_mean_statistic(setup.theta, n, stream)[None, :])
            mle.append(reference[0])
            solved.append(bool(reference_ok[0]))
        if r < aware_reps:
            aware.append(noise_aware(fam, release, n, sigma, estimate[0]))
        if r < boot_reps:
            boot.append(bootstrap(fam, estimate[0], n, clip, sigma, stream, draws, valid=bool(ok[0])))
        if "naive" in intervals:
            synthetic.append(fam.solve(fam.synthetic_mean_statistic(estimate[0], n, stream)[None, :])[0][0])
    theta, valid = np.array(theta), np.array(valid)
    results = {}
    if "nonprivate" in intervals:
        results["nonprivate"] = _invalid_to_nan(wald(fam, np.array(mle), n, 0.0)[:3], np.array(solved))
    if "plugin_wald" in intervals:
        results["plugin_wald"] = _invalid_to_nan(wald(fam, theta, n, sigma)[:3], valid)
    if aware:
        results["noise_aware_wald"] = wald(fam, np.array(aware), n, sigma)[:3]
    naive_results = _invalid_to_nan(wald(fam, np.array(synthetic), n, 0.0)[:3], valid) if synthetic else None
    return summarise_coverage(setup, name, n, eps, clip, sigma, theta, valid, results, boot or None,
                              naive_results, extra)
