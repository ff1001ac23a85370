"""The paper's experiments as vectorised Monte Carlo studies; each returns a tidy DataFrame.

1. variance   empirical variance of the plug-in DP estimator over n x epsilon vs the delta-method
              variance J Cov(s) J'/n + sigma^2 J J';
2. coverage   coverage of every interval vs epsilon, per family, with Monte Carlo errors;
3. clipping   clip bound B vs MSE and coverage (bias when tight, noise when loose);
4. scaling    MSE vs n and epsilon with a fit of c1/n + c2 sigma^2, sigma the release's noise scale
              (sigma^2 is the noise variance itself: with the analytic Gaussian mechanism sigma*n*eps
              is not constant in eps, so 1/(n eps)^2 would be the wrong regressor);
5. census     Adult (stand-in for ACSIncome): coverage of calibrated vs naive intervals over
              repeated subsamples, the full-data MLE as the target.

Coverage is computed over the replicates that yield an interval; a replicate without one (its
estimate has no finite solution, so no Wald interval and no bootstrap to run) is counted in the
`invalid` and `invalid_share` columns, and `coverage_invalid_as_miss` gives the coverage that
counts it as a miss.

The mechanism's noise in every simulated release is drawn from a generator of its own: fresh
operating-system entropy unless the settings hold a `noise_seed` (the `dp:` block's), and then
SeedSequence([noise_seed, seed, experiment]) (synthrisk.stats.noise). The shipped configs set one, so
that their tables are reproducible; everything else (records, bootstrap, synthetic data) comes
from `seed`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from ..stats.noise import noise_generator
from .families import Design, GaussianFamily, GLMFamily
from .frames import family_data
from .inference import bootstrap_batch, calibrated_variance, naive, noise_aware_batch, plugin, simulate_releases, wald
from .mechanism import clip_rows, gaussian_sigma

EXPERIMENTS = ("variance", "coverage", "clipping", "scaling", "census")
#: the word that keeps each study's noise stream apart from the others' (module doc)
NOISE_STREAMS = {"variance": 0, "coverage": 1, "clipping": 2, "census": 3}
INTERVALS = ("nonprivate", "plugin_wald", "noise_aware_wald", "bootstrap", "naive")


@dataclass
class Setup:
    """A simulation family with its true parameter, a clip bound that (almost) never binds, and the
    reported parameter the figures follow."""

    family: object
    theta: np.ndarray
    clip: float
    focal: int
    label: str


def simulation_setups() -> dict[str, Setup]:
    # Two binary covariates (four cells, equal shares) for the regressions.
    design = Design.from_levels({"x1": ["0", "1"], "x2": ["0", "1"]})
    pi = np.full(4, 0.25)
    return {
        # N(0.5, 1): ||(x, x^2)|| < 20 unless |x| > 4.4, a 4-sigma event: negligible clipping.
        "gaussian": Setup(GaussianFamily(), np.array([0.5, 1.0]), 20.0, 0, "mean"),
        # The statistic (onehot, x*y) has norm <= sqrt(1 + 3) = 2: B = 2 never clips.
        "logistic": Setup(GLMFamily("logistic", design.cells, design.names),
                          np.concatenate([pi, [-0.5, 1.0, -0.7]]), 2.0, 1, "x1[1]"),
        # Rates up to e^0.8 = 2.2; B = 15 clips only y >= 9 (probability < 1e-4).
        "poisson": Setup(GLMFamily("poisson", design.cells, design.names),
                         np.concatenate([pi, [0.5, 0.3, -0.4]]), 15.0, 1, "x1[1]"),
    }


def study_noise(settings: dict, seed: int, study: str) -> np.random.Generator:
    """The generator of one study's DP noise (module doc)."""
    return noise_generator(settings.get("noise_seed"), seed, NOISE_STREAMS[study])


def _mc_error(p: np.ndarray, reps: int) -> np.ndarray:
    return 1.96 * np.sqrt(np.clip(p * (1 - p), 1e-12, None) / reps)


def theoretical_variance(setup: Setup, n: int, sigma: float) -> float:
    cov = calibrated_variance(setup.family, setup.theta, n, sigma)
    return float(cov[setup.focal, setup.focal])


@np.errstate(all="ignore")
def variance_grid(settings: dict, seed: int) -> pd.DataFrame:
    """Plug-in DP estimates over n x epsilon: empirical variance and MSE vs the formula."""
    rng, noise = np.random.default_rng(seed), study_noise(settings, seed, "variance")
    rows = []
    for name in settings["families"]:
        setup = simulation_setups()[name]
        truth = setup.theta[setup.family.reported][setup.focal]
        for n in settings["n_grid"]:
            for eps in settings["epsilons"]:
                sigma = gaussian_sigma(eps, settings["delta"], 2 * setup.clip / n)
                noisy, _ = simulate_releases(setup.family, setup.theta, n, setup.clip, sigma, rng,
                                             settings["reps"], noise_rng=noise)
                theta, valid = plugin(setup.family, noisy)
                estimate = theta[valid][:, setup.family.reported][:, setup.focal]
                rows.append({
                    "family": name, "parameter": setup.label, "n": n, "epsilon": eps, "sigma": sigma,
                    "clip": setup.clip, "delta": settings["delta"],
                    "reps": int(valid.sum()), "invalid": int((~valid).sum()),
                    "empirical_variance": float(estimate.var(ddof=1)),
                    "theoretical_variance": theoretical_variance(setup, n, sigma),
                    "sampling_variance": theoretical_variance(setup, n, 0.0),
                    "mse": float(np.mean((estimate - truth) ** 2)),
                })
    return pd.DataFrame(rows)


def variance_summary(grid: pd.DataFrame) -> pd.DataFrame:
    """Per family: Pearson correlation of empirical and theoretical variance (raw and log scale)."""
    out = []
    for family, part in grid.groupby("family", sort=False):
        out.append({
            "family": family, "cells": len(part),
            "pearson": float(np.corrcoef(part["empirical_variance"], part["theoretical_variance"])[0, 1]),
            "pearson_log": float(np.corrcoef(np.log(part["empirical_variance"]),
                                             np.log(part["theoretical_variance"]))[0, 1]),
            "median_ratio": float((part["empirical_variance"] / part["theoretical_variance"]).median()),
        })
    return pd.DataFrame(out)


def scaling_fit(grid: pd.DataFrame) -> pd.DataFrame:
    """Per family, MSE ~ c1/n + c2 sigma^2 by non-negative least squares on relative errors (every
    cell weighs alike although MSEs span orders of magnitude).

    sigma is the noise standard deviation of the release (it already carries the 1/n of the
    sensitivity 2B/n), so c2 sigma^2 is the privacy term of Var = J Cov(s) J'/n + sigma^2 J J' and
    c2 estimates (J J') of the focal parameter; c1 estimates J Cov(s) J'. The analytic Gaussian
    mechanism's sigma*n*eps is not constant in eps, which is why the regressor is sigma^2 and not
    1/(n eps)^2. Fit quality: R^2, root mean square and largest absolute error, all on the log
    scale (log(MSE / fitted)).

    The law describes an estimator that exists. Where a noisy GLM release falls outside the mean
    space, the plug-in MLE does not exist and the cell's MSE is that of the releases that happened
    to have one (at n = 500, eps = 0.1 a few dozen of 1,000), which no variance law describes. So
    the fit is also repeated on the cells where every release has a solution (`*_all_valid`),
    beside the fit on every cell."""
    out = []
    for family, part in grid.groupby("family", sort=False):
        row = {"family": family, "regressors": "1/n, sigma^2", **_mse_law(part)}
        if "invalid" in part.columns:
            all_valid = part[part["invalid"] == 0]
            fit = _mse_law(all_valid) if len(all_valid) >= 3 else {"cells": len(all_valid)}
            row.update({f"{key}_all_valid": fit.get(key, np.nan) for key in ("cells", "c1", "c2", "r2_log")})
        out.append(row)
    return pd.DataFrame(out)


def _mse_law(part: pd.DataFrame) -> dict:
    """The least-squares fit of one family's cells (see `scaling_fit`)."""
    n, sigma, mse = part["n"].to_numpy(float), part["sigma"].to_numpy(float), part["mse"].to_numpy(float)
    regressors = np.column_stack([1 / n, sigma ** 2])
    (c1, c2), _ = nnls(regressors / mse[:, None], np.ones(len(mse)))
    fitted = regressors @ np.array([c1, c2])
    log_error = np.log(mse) - np.log(fitted)
    r2_log = 1 - np.sum(log_error ** 2) / np.sum((np.log(mse) - np.log(mse).mean()) ** 2)
    privacy = (part["theoretical_variance"] - part["sampling_variance"]).to_numpy(float)
    # The sampling and privacy terms are equal where c1/n = c2 sigma^2; sigma*n is constant at a
    # fixed eps (sigma = unit sigma * 2B/n), so n* = c2 (sigma n)^2 / c1; privacy dominates below.
    if {"clip", "delta"} <= set(part.columns):
        sigma_n = gaussian_sigma(1.0, float(part["delta"].iloc[0]), 2 * float(part["clip"].iloc[0]))
        crossover = float(c2 * sigma_n ** 2 / c1) if c1 > 0 else np.inf
    else:  # a grid written before the clip and delta columns existed
        crossover = np.nan
    return {"cells": len(part), "c1": float(c1), "c2": float(c2),
            "c1_theory": float((part["sampling_variance"] * part["n"]).median()),
            "c2_theory": float(np.median(privacy / sigma ** 2)),
            "r2_log": float(r2_log), "rmse_log": float(np.sqrt(np.mean(log_error ** 2))),
            "max_abs_log_error": float(np.abs(log_error).max()),
            "crossover_n_at_eps1": crossover}


def _invalid_to_nan(triple, valid):
    return tuple(np.where(valid[:, None], part, np.nan) for part in triple)


def _covered(low, high, truth) -> np.ndarray:
    return (low <= truth) & (truth <= high)


def interval_rows(results: dict, focal: int, truth: float, common: dict) -> list[dict]:
    """One row per interval: coverage of `truth` by the focal parameter's interval, its Monte Carlo
    error, median width, bias and MSE, all over the replicates that yield an interval (finite
    estimate and bounds). `results` maps interval -> (estimate, low, high), with NaN where a
    replicate has no solution; those are counted in `invalid` and `invalid_share`, and
    `coverage_invalid_as_miss` counts them as misses."""
    rows = []
    for interval, (estimate, low, high) in results.items():
        e, lo, hi = estimate[:, focal], low[:, focal], high[:, focal]
        ok = np.isfinite(e) & np.isfinite(lo) & np.isfinite(hi)
        reps, valid_reps = len(e), int(ok.sum())
        e, lo, hi = e[ok], lo[ok], hi[ok]
        hits = int(_covered(lo, hi, truth).sum())
        cover = hits / valid_reps if valid_reps else np.nan
        rows.append({**common, "interval": interval, "reps": reps, "valid_reps": valid_reps,
                     "invalid": reps - valid_reps, "invalid_share": (reps - valid_reps) / reps if reps else np.nan,
                     "coverage": cover, "mc_error": float(_mc_error(cover, valid_reps)) if valid_reps else np.nan,
                     "coverage_invalid_as_miss": hits / reps if reps else np.nan,
                     "median_width": float(np.median(hi - lo)) if valid_reps else np.nan,
                     "bias": float(np.mean(e) - truth) if valid_reps else np.nan,
                     "mse": float(np.mean((e - truth) ** 2)) if valid_reps else np.nan})
    return rows


def repetition_streams(rng: np.random.Generator, reps: int) -> list[np.random.Generator]:
    """One generator per repetition, spawned from `rng`: everything random in repetition r (its
    release, reference data, bootstrap and synthetic data, in that order) comes from stream r, so
    a repetition's numbers do not depend on how the repetitions are batched or how many run."""
    return rng.spawn(reps)


def coverage_rows(setup: Setup, name: str, n: int, eps: float, clip: float, settings: dict,
                  rng: np.random.Generator, extra: dict | None = None, intervals=INTERVALS,
                  noise_rng: np.random.Generator | None = None) -> list[dict]:
    """Coverage, width and MSE of the requested intervals for one (family, n, epsilon, clip), every
    repetition analysed at once (reference.coverage_rows_one_at_a_time gives the same rows). The
    releases' noise comes from `noise_rng` (one stream spawned per repetition), or from the
    repetitions' own streams of `rng` without it."""
    fam = setup.family
    reps = settings["reps"]
    sigma = gaussian_sigma(eps, settings["delta"], 2 * clip / n)
    streams = repetition_streams(rng, reps)
    noise_streams = streams if noise_rng is None else repetition_streams(noise_rng, reps)
    noisy = np.stack([simulate_releases(fam, setup.theta, n, clip, sigma, stream, noise_rng=noise_stream)[0]
                      for stream, noise_stream in zip(streams, noise_streams)])
    theta, valid = plugin(fam, noisy)
    results = {}
    if "nonprivate" in intervals:
        # Reference: the ordinary MLE on the real records (no clipping, no noise), drawn through
        # the exact law of their mean statistic.
        mle, solved = fam.solve(synthetic_means(fam, np.broadcast_to(setup.theta, theta.shape), n, streams))
        results["nonprivate"] = _invalid_to_nan(wald(fam, mle, n, 0.0)[:3], solved)
    if "plugin_wald" in intervals:
        # A release whose moment equation has no solution gives the analyst no plug-in estimate: no
        # interval (nor a naive analysis built on it); counted as invalid, not in the coverage.
        results["plugin_wald"] = _invalid_to_nan(wald(fam, theta, n, sigma)[:3], valid)
    aware_reps = min(reps, settings.get("noise_aware_reps", reps))
    if "noise_aware_wald" in intervals and aware_reps:
        aware = noise_aware_batch(fam, noisy[:aware_reps], n, sigma, theta[:aware_reps])
        results["noise_aware_wald"] = wald(fam, aware, n, sigma)[:3]
    boot_reps = min(reps, settings.get("bootstrap_reps", 50))
    boot = None
    if "bootstrap" in intervals and boot_reps:
        boot = bootstrap_batch(fam, theta[:boot_reps], valid[:boot_reps], n, clip, sigma, streams[:boot_reps],
                               settings.get("bootstrap_draws", 100))
    if "naive" in intervals:
        synthetic, _ = fam.solve(synthetic_means(fam, theta, n, streams))
        naive_results = _invalid_to_nan(wald(fam, synthetic, n, 0.0)[:3], valid)
    else:
        naive_results = None
    return summarise_coverage(setup, name, n, eps, clip, sigma, theta, valid, results, boot, naive_results,
                              extra)


def synthetic_means(family, theta: np.ndarray, n: int, streams: list) -> np.ndarray:
    """The mean statistic of n records drawn from each row of `theta`, row r from streams[r]
    (unclipped: the non-private reference's records, the naive analyst's synthetic data)."""
    return np.stack([family.synthetic_mean_statistic(row, n, stream) for row, stream in zip(theta, streams)])


def summarise_coverage(setup: Setup, name: str, n: int, eps: float, clip: float, sigma: float, theta, valid,
                       results: dict, boot, naive_results, extra: dict | None) -> list[dict]:
    """The rows of coverage_rows from the per-repetition results (shared with the reference)."""
    fam = setup.family
    truth = setup.theta[fam.reported][setup.focal]
    boot_counts = {}
    if boot is not None:
        # Releases without a solution are skipped (nothing to resample from: `bootstrap_skipped`);
        # those whose bootstrap releases mostly have no solution are flagged (`bootstrap_flagged`).
        # Both are invalid: never an interval from a diverged fit.
        boot_reps = len(boot)
        results["bootstrap"] = _invalid_to_nan(
            (theta[:boot_reps, fam.reported], np.array([b.low for b in boot]), np.array([b.high for b in boot])),
            np.array([b.valid for b in boot]))
        skipped = int((~valid[:boot_reps]).sum())
        boot_counts = {"bootstrap_skipped": skipped,
                       "bootstrap_flagged": int(sum(not b.valid for b in boot)) - skipped}
    if naive_results is not None:
        results["naive"] = naive_results
    results = {interval: results[interval] for interval in INTERVALS if interval in results}
    common = {"family": name, "parameter": setup.label, "n": n, "epsilon": eps, "clip": clip, "sigma": sigma}
    rows = interval_rows(results, setup.focal, truth, common)
    for row in rows:
        if row["interval"] == "bootstrap":
            row.update(boot_counts)
    return [{**row, "invalid_plugin": int((~valid).sum()), **(extra or {})} for row in rows]


@np.errstate(all="ignore")  # releases drowned in noise give diverged fits; they are flagged, not errors
def coverage_study(settings: dict, seed: int, cell_rows=None) -> pd.DataFrame:
    """`cell_rows` computes one cell: coverage_rows (default) or the per-repetition reference."""
    cell_rows = cell_rows or coverage_rows
    rng, noise = np.random.default_rng(seed), study_noise(settings, seed, "coverage")
    rows = []
    for name in settings["families"]:
        setup = simulation_setups()[name]
        for eps in settings["epsilons"]:
            rows += cell_rows(setup, name, settings["n"], eps, setup.clip, settings, rng, noise_rng=noise)
    return pd.DataFrame(rows)


@np.errstate(all="ignore")
def clipping_study(settings: dict, seed: int, cell_rows=None) -> pd.DataFrame:
    """Plug-in Wald coverage and MSE as the clip bound moves around the family's safe bound
    (`cell_rows` as in coverage_study)."""
    cell_rows = cell_rows or coverage_rows
    rng, noise = np.random.default_rng(seed), study_noise(settings, seed, "clipping")
    rows = []
    for name in settings["families"]:
        setup = simulation_setups()[name]
        for multiplier in settings["clip_multipliers"]:
            rows += cell_rows(setup, name, settings["n"], settings["clip_epsilon"], setup.clip * multiplier,
                              settings, rng, {"clip_multiplier": multiplier}, intervals=("plugin_wald", "naive"),
                              noise_rng=noise)
    return pd.DataFrame(rows)


def adult_frame(adult: pd.DataFrame) -> pd.DataFrame:
    """Adult recoded for the census experiment: binned covariates, a binary and a count response."""
    return pd.DataFrame({
        "income": adult["income"].astype(str),
        "sex": adult["sex"].astype(str),
        "age": pd.cut(adult["age"].astype(float), [0, 30, 50, np.inf], right=False,
                      labels=["<30", "30-49", "50+"]).astype(str),
        "education": pd.cut(adult["education_num"].astype(float), [0, 10, 13, np.inf], right=False,
                            labels=["HS or less", "some college", "BA or more"]).astype(str),
        "education_years": adult["education_num"].astype(int),
    })


# The census frame's public domain: Adult's documented levels and the bands adult_frame cuts.
CENSUS_LEVELS = {"income": ["<=50K", ">50K"], "sex": ["Female", "Male"], "age": ["<30", "30-49", "50+"],
                 "education": ["HS or less", "some college", "BA or more"]}

CENSUS_MODELS = {
    # Logistic regression of income on sex, age and education bands (the paper's ACSIncome task).
    "logistic": {"response": "income", "covariates": ["sex", "age", "education"], "focal": "sex[Male]"},
    # Poisson regression of years of education on sex and age bands (a count response).
    "poisson": {"response": "education_years", "covariates": ["sex", "age"], "focal": "sex[Male]",
                "y_max": 16},
}


@np.errstate(all="ignore")
def census_study(adult: pd.DataFrame, settings: dict, seed: int) -> pd.DataFrame:
    """Repeated subsamples of Adult; target: the MLE on all records. Clip bounds come from the
    public domain (binary income; at most 16 years of education), not from the data."""
    rng, noise = np.random.default_rng(seed), study_noise(settings, seed, "census")
    frame = adult_frame(adult)
    census = settings["census"]
    n, reps = census["n"], census["reps"]
    rows = []
    for name, model in CENSUS_MODELS.items():
        fam, data, _ = family_data(frame, name, model["response"], model["covariates"], CENSUS_LEVELS)
        full, _ = fam.solve(fam.statistic(data).mean(axis=0))
        focal = fam.parameter_names.index(model["focal"])
        truth = full[fam.reported][focal]
        y_max = model.get("y_max", 1.0)
        clip = float(np.sqrt(1.0 + y_max ** 2 * (fam.cells ** 2).sum(axis=1).max()))
        index = np.stack([rng.choice(len(frame), n, replace=False) for _ in range(reps)])
        sub = {key: value[index] for key, value in data.items()}
        statistics = fam.statistic(sub)
        clean = clip_rows(statistics, clip).mean(axis=-2)
        reference, solved = fam.solve(statistics.mean(axis=-2))
        reference_intervals = _invalid_to_nan(wald(fam, reference, n, 0.0)[:3], solved)
        for eps in settings["epsilons"]:
            sigma = gaussian_sigma(eps, settings["delta"], 2 * clip / n)
            noisy = clean + noise.normal(0.0, sigma, size=clean.shape)
            theta, valid = plugin(fam, noisy)
            results = {"nonprivate": reference_intervals,
                       "plugin_wald": _invalid_to_nan(wald(fam, theta, n, sigma)[:3], valid),
                       "naive": _invalid_to_nan(naive(fam, theta, n, rng)[:3], valid)}
            common = {"family": name, "parameter": model["focal"], "n": n, "epsilon": eps, "clip": clip,
                      "sigma": sigma}
            rows += [{**row, "full_data_mle": float(truth), "invalid_plugin": int((~valid).sum())}
                     for row in interval_rows(results, focal, truth, common)]
    return pd.DataFrame(rows)
