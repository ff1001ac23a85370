"""From a DataFrame to a family and its records, with the checks a user's table needs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import DataError
from .families import Design, GaussianFamily, GLMFamily
from .inference import DPInference, analyse, nonprivate
from .mechanism import release_statistics

FAMILIES = ("gaussian", "logistic", "poisson")
MAX_CELLS = 4096


def _response(frame: pd.DataFrame, column: str, family: str) -> tuple[np.ndarray, dict]:
    if column not in frame.columns:
        raise DataError(f"response column {column!r} is not in the data (columns: {list(frame.columns)})")
    values = frame[column]
    if values.isna().any():
        raise DataError(f"response column {column!r} has {int(values.isna().sum())} missing values; "
                        "drop or impute them before the release")
    if family == "logistic":
        levels = sorted(values.astype(str).unique())
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all() and set(numeric.unique()) <= {0, 1}:
            return numeric.to_numpy(float), {"positive_level": "1"}
        if len(levels) != 2:
            raise DataError(f"logistic family: response {column!r} must be binary, it has {len(levels)} "
                            f"levels ({levels[:5]})")
        # The later level in sort order is the event, e.g. '>50K' over '<=50K'.
        return (values.astype(str) == levels[1]).to_numpy(float), {"positive_level": levels[1]}
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.isna().any():
        raise DataError(f"{family} family: response {column!r} must be numeric")
    y = numeric.to_numpy(float)
    if family == "poisson" and (np.any(y < 0) or np.any(y != np.round(y))):
        raise DataError(f"poisson family: response {column!r} must hold non-negative integers")
    return y, {}


def design_for(frame: pd.DataFrame, covariates: list[str], levels: dict | None = None) -> Design:
    """Dummy coding of categorical covariates. `levels` should come from public knowledge (the
    schema); taken from the data otherwise, which reveals which levels occur."""
    missing = [c for c in covariates if c not in frame.columns]
    if missing:
        raise DataError(f"covariate(s) {missing} are not in the data (columns: {list(frame.columns)})")
    chosen = {}
    for column in covariates:
        if levels and column in levels:
            chosen[column] = [str(v) for v in levels[column]]
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
                levels: dict | None = None):
    """(family object, records dict, metadata) for `family` on `frame`."""
    if family not in FAMILIES:
        raise DataError(f"unknown family {family!r}; choose one of {list(FAMILIES)}")
    y, meta = _response(frame, response, family)
    if family == "gaussian":
        return GaussianFamily(), {"y": y}, {"response": response}
    covariates = list(covariates) if covariates is not None else [c for c in frame.columns if c != response]
    if response in covariates:
        raise DataError(f"response {response!r} is also listed as a covariate")
    design = design_for(frame, covariates, levels)
    fam = GLMFamily(family, design.cells, design.names)
    data = {"cell": design.cell_index(frame), "y": y}
    shares = np.bincount(data["cell"], minlength=fam.n_cells) / len(y)
    fam.check_identifiable(shares)
    return fam, data, {"response": response, "covariates": covariates, **meta}


def dp_inference(frame: pd.DataFrame, family: str, response: str, epsilon: float, delta: float, clip: float,
                 covariates: list[str] | None = None, levels: dict | None = None, seed: int = 0,
                 bootstrap_draws: int = 200) -> tuple[DPInference, dict]:
    """Release the clipped noisy mean statistic of `frame` and analyse it.

    Returns the analysis and the non-private reference (ordinary MLE and interval on the raw
    records; for checking only, it is not private)."""
    fam, data, meta = family_data(frame, family, response, covariates, levels)
    rng = np.random.default_rng(seed)
    release = release_statistics(fam.statistic(data), epsilon, delta, clip, rng, fam.name, meta)
    result = analyse(fam, release, rng, bootstrap_draws)
    estimate, low, high, _ = nonprivate(fam, data)
    reference = {name: {"theta": float(e), "ci_low": float(lo), "ci_high": float(hi)}
                 for name, e, lo, hi in zip(fam.parameter_names, estimate, low, high)}
    reference["natural_clip"] = fam.natural_clip(data)
    return result, reference
