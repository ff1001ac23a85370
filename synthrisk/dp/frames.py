"""From a DataFrame to a family and its records, with the checks a user's table needs.

The release's domain (the covariates' levels, hence the cells; the response's levels) is public
metadata, passed as `levels` (from a schema's `levels`); it is never read from the records unless
the caller opts in with `domain="from_data"`, and then the result is marked not DP. Whether the
model is identifiable is decided on the public design (every cell), never from the exact cell
shares; a release whose noisy statistics have no solution is flagged by the analysis instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError, DomainError
from ..stats.noise import check_noise_seed, guarantee, noise_generator
from .families import Design, GaussianFamily, GLMFamily
from .inference import DPInference, analyse, nonprivate
from .mechanism import release_statistics

FAMILIES = ("gaussian", "logistic", "poisson")
MAX_CELLS = 4096
DOMAINS = ("public", "from_data")
NOT_DP = "not DP: domain read from the data"


def _public_levels(column: str, levels: dict | None, domain: str, role: str) -> list[str] | None:
    """The column's public levels, None when the caller opted in to reading them from the data."""
    if levels and column in levels:
        return [str(v) for v in levels[column]]
    if domain == "from_data":
        return None
    raise DomainError(
        f"{role} {column!r} has no public levels: a DP release may not read them from the private data. "
        "Pass a schema that declares its 'levels' (synthrisk dp --schema FILE), or opt in explicitly "
        "with domain from_data (--domain from_data; the result is then marked not DP)"
    )


def _response(frame: pd.DataFrame, column: str, family: str, levels: dict | None = None,
              domain: str = "public") -> tuple[np.ndarray, dict]:
    if column not in frame.columns:
        raise DataError(f"response column {column!r} is not in the data (columns: {list(frame.columns)})")
    values = frame[column]
    if values.isna().any():
        raise DataError(f"response column {column!r} has {int(values.isna().sum())} missing values; "
                        "drop or impute them before the release")
    if family == "logistic":
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all() and set(numeric.unique()) <= {0, 1}:
            return numeric.to_numpy(float), {"positive_level": "1"}
        declared = _public_levels(column, levels, domain, "logistic response")
        declared = declared if declared is not None else sorted(values.astype(str).unique())
        if len(declared) != 2:
            raise DataError(f"logistic family: response {column!r} must be binary, it has {len(declared)} "
                            f"levels ({declared[:5]})")
        outside = sorted(set(values.astype(str)) - set(declared))
        if outside:
            raise DataError(f"logistic family: response {column!r} holds values {outside[:3]} outside its "
                            f"levels {declared}")
        # The later level is the event, e.g. '>50K' after '<=50K'.
        return (values.astype(str) == declared[1]).to_numpy(float), {"positive_level": declared[1]}
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.isna().any():
        raise DataError(f"{family} family: response {column!r} must be numeric")
    y = numeric.to_numpy(float)
    infinite = int(np.sum(~np.isfinite(y)))
    if infinite:
        # The same rule as schema conformance (synthrisk.data.schema): no method has a meaning for
        # an infinite value, and clipping would turn it into NaN estimates.
        raise DataError(f"response column {column!r} holds infinite values (inf or -inf) in {infinite} row(s); "
                        "synthrisk refuses them: replace them with finite values or drop those rows")
    if family == "poisson" and (np.any(y < 0) or np.any(y != np.round(y))):
        raise DataError(f"poisson family: response {column!r} must hold non-negative integers")
    return y, {}


def design_for(frame: pd.DataFrame, covariates: list[str], levels: dict | None = None,
               domain: str = "public") -> Design:
    """Dummy coding of categorical covariates against their first public level. With
    domain="from_data" a covariate without public levels takes the sorted levels of the data."""
    missing = [c for c in covariates if c not in frame.columns]
    if missing:
        raise DataError(f"covariate(s) {missing} are not in the data (columns: {list(frame.columns)})")
    chosen = {}
    for column in covariates:
        declared = _public_levels(column, levels, domain, "covariate")
        if declared is not None:
            chosen[column] = declared
            continue
        distinct = sorted(frame[column].dropna().astype(str).unique())
        if len(distinct) > 50:
            raise DataError(f"covariate {column!r} has {len(distinct)} distinct values: regression families "
                            "release covariates as categorical cells, so bin it first")
        chosen[column] = distinct
    for column in covariates:
        if frame[column].isna().any():
            raise DataError(f"covariate {column!r} has missing values; give them a level of their own first")
    cells = int(np.prod([len(v) for v in chosen.values()])) if chosen else 1
    if cells > MAX_CELLS:
        raise DataError(f"covariates {covariates} make {cells} cells (> {MAX_CELLS}); bin or drop some")
    return Design.from_levels(chosen)


def family_data(frame: pd.DataFrame, family: str, response: str, covariates: list[str] | None = None,
                levels: dict | None = None, domain: str = "public", noise_seed: int | None = None):
    """(family object, records dict, metadata) for `family` on `frame`; `levels` maps columns to
    their public levels (a schema's `levels`); `noise_seed` as in dp_inference (only the guarantee
    in the metadata reads it)."""
    if family not in FAMILIES:
        raise DataError(f"unknown family {family!r}; choose one of {list(FAMILIES)}")
    if domain not in DOMAINS:
        raise ConfigError(f"domain must be one of {list(DOMAINS)}, got {domain!r}")
    privacy = {"domain": domain, "noise_seed": noise_seed,
               "guarantee": guarantee([] if domain == "public" else [NOT_DP], noise_seed)}
    y, meta = _response(frame, response, family, levels, domain)
    if family == "gaussian":
        # The clipped statistic (y, y^2) needs no domain: clipping alone bounds the sensitivity.
        return GaussianFamily(), {"y": y}, {"response": response, **privacy}
    covariates = list(covariates) if covariates is not None else [c for c in frame.columns if c != response]
    if response in covariates:
        raise DataError(f"response {response!r} is also listed as a covariate")
    design = design_for(frame, covariates, levels, domain)
    fam = GLMFamily(family, design.cells, design.names)
    data = {"cell": design.cell_index(frame), "y": y}
    fam.check_identifiable(np.ones(fam.n_cells))  # the public design; never the exact cell shares
    return fam, data, {"response": response, "covariates": covariates, **meta, **privacy}


def dp_inference(frame: pd.DataFrame, family: str, response: str, epsilon: float, delta: float, clip: float,
                 covariates: list[str] | None = None, levels: dict | None = None, seed: int = 0,
                 bootstrap_draws: int = 200, domain: str = "public",
                 noise_seed: int | None = None) -> tuple[DPInference, dict]:
    """Release the clipped noisy mean statistic of `frame` and analyse it.

    The release's noise comes from the operating system's entropy; with a `noise_seed` from
    SeedSequence([noise_seed, seed]), reproducible and marked not private (synthrisk.stats.noise). `seed`
    drives the analysis (bootstrap, naive synthetic data), which is post-processing.

    Returns the analysis and the non-private reference (ordinary MLE and interval on the raw
    records; for checking only, it is not private)."""
    noise_seed = check_noise_seed(noise_seed, "noise_seed")
    fam, data, meta = family_data(frame, family, response, covariates, levels, domain, noise_seed)
    release = release_statistics(fam.statistic(data), epsilon, delta, clip, noise_generator(noise_seed, seed),
                                 fam.name, meta)
    result = analyse(fam, release, np.random.default_rng(seed), bootstrap_draws)
    estimate, low, high, _ = nonprivate(fam, data)
    reference = {name: {"theta": float(e), "ci_low": float(lo), "ci_high": float(hi)}
                 for name, e, lo, hi in zip(fam.parameter_names, estimate, low, high)}
    reference["natural_clip"] = fam.natural_clip(data)
    return result, reference
