"""RAPID: share of real records whose sensitive attribute an attacker, trained on synthetic data
only, infers from their quasi-identifiers (Templ, Thees & Müller 2026, arXiv:2602.09235)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from ..data.encoding import numeric_values
from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError, DataError
from .attackers import (CALIBRATED, CALIBRATION_FOLDS, base_attacker, informative_features, make_attacker,
                        model_frame)
from .attribution import attribute_risk
from .scores import (CATEGORICAL_METHODS, CONTINUOUS_ERRORS, at_risk, categorical_scores,
                     class_shares, continuous_errors)

THRESHOLD_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
ALPHA = 0.05  # level of the permutation test that says whether an attacker beats chance


@dataclass
class RapidResult:
    rapid: float
    n_records: int
    n_at_risk: int
    ci_low: float
    ci_high: float
    sensitive: str
    attacker: str
    kind: str                 # "categorical" or "continuous"
    method: str               # categorical method or continuous error
    threshold: float          # tau (categorical) or epsilon (continuous)
    p_value: float | None
    n_permutations: int
    rapid_null: float | None  # mean RAPID with labels permuted: the floor an attacker reaches by chance
    curve: pd.DataFrame       # columns: threshold, rapid
    records: pd.DataFrame     # row_id, score, at_risk (no raw values)
    attribution: pd.DataFrame = field(default_factory=pd.DataFrame)
    # share of synthetic values per categorical column whose level the real data do not have
    unknown_level_share: dict = field(default_factory=dict)

    @property
    def beats_chance(self) -> bool | None:
        """Whether this attacker alone beats chance (permutation p <= 0.05); None without a test.
        Over a suite of attackers the summary corrects for multiplicity (rapid.summary)."""
        return None if self.p_value is None else bool(self.p_value <= ALPHA)

    @property
    def verdict(self) -> str:
        if self.p_value is None:
            return "not tested against chance"
        if self.beats_chance:
            return f"beats chance (p = {self.p_value:.3g})"
        return f"does not beat chance (p = {self.p_value:.3g}): RAPID is at its chance floor"

    def to_json(self) -> dict:
        """The JSON of DESIGN.md (`rapid`, `n_records`, `n_at_risk`, `tau`, `attacker`, `sensitive`,
        `curve`) plus the interval, the test and the settings. For a continuous attribute `tau` is
        null, `epsilon` holds the tolerance and curve entries are {epsilon, rapid}."""
        name = "tau" if self.kind == "categorical" else "epsilon"
        return {
            "rapid": self.rapid, "n_records": self.n_records, "n_at_risk": self.n_at_risk,
            "tau": self.threshold if self.kind == "categorical" else None,
            "epsilon": self.threshold if self.kind == "continuous" else None,
            "attacker": self.attacker, "sensitive": self.sensitive, "kind": self.kind,
            "method": self.method, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "ci_method": "wilson", "p_value": self.p_value, "n_permutations": self.n_permutations,
            "rapid_null": self.rapid_null,
            "rapid_excess": None if self.rapid_null is None else self.rapid - self.rapid_null,
            "beats_chance": self.beats_chance, "verdict": self.verdict,
            "base_attacker": base_attacker(self.attacker), "calibrated": self.attacker.endswith(CALIBRATED),
            "curve": [{name: float(t), "rapid": float(r)}
                      for t, r in zip(self.curve["threshold"], self.curve["rapid"])],
            "unknown_level_share": dict(self.unknown_level_share),
        }


def _check_inputs(real, synthetic, schema: DatasetSchema, sensitive: str):
    if sensitive not in schema.columns:
        raise ConfigError(f"sensitive attribute '{sensitive}' is not a column of schema {schema.origin}")
    if sensitive in schema.quasi_identifiers:
        raise ConfigError(f"'{sensitive}' is a quasi-identifier in {schema.origin}; the attacker already knows it")
    row_ids = real[ROW_ID].to_numpy() if ROW_ID in real else np.arange(len(real))
    # Conformance names missing and unknown columns per file and drops the schema's `drop` columns
    # from whichever file has them.
    real = schema.conform(real.drop(columns=[ROW_ID], errors="ignore"), what="real data")
    synthetic = schema.conform(synthetic.drop(columns=[ROW_ID], errors="ignore"), what="synthetic data")
    if len(real) == 0 or len(synthetic) == 0:
        raise DataError(f"RAPID needs records: real has {len(real)}, synthetic {len(synthetic)}")
    unknown = schema.unknown_level_shares(real, synthetic)
    if not schema.is_categorical(sensitive):
        # A missing value is no value to infer (real) or to learn from (synthetic).
        if real[sensitive].isna().all():
            raise DataError(f"real data: continuous sensitive attribute '{sensitive}' is missing in all "
                            f"{len(real)} records: RAPID is undefined (there is no true value to infer); "
                            "attack another attribute or supply its values")
        if synthetic[sensitive].isna().all():
            raise DataError(f"synthetic data: continuous sensitive attribute '{sensitive}' is missing in all "
                            f"{len(synthetic)} records: the attacker has no value to learn from, so RAPID is "
                            "undefined; check the generator's output")
    return real, synthetic, row_ids, unknown


def rapid(
    real: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema, sensitive: str,
    attacker: str = "rf", tau: float = 0.3, epsilon: float = 0.10, method: str = "rcs_marginal",
    error: str = "relative", delta: float = 0.01, n_permutations: int = 199, n_trees: int = 500,
    seed: int = 0, n_jobs: int = 1, attribution: bool = True,
) -> RapidResult:
    """RAPID of `synthetic` for `sensitive`, attacking the `real` records (pass the members).

    `real` may carry a `row_id` column (the split files do); it is copied into the per-record
    table so that records can be traced without copying any of their values.
    """
    if not 0.0 <= tau <= 1.0:
        raise ConfigError(f"tau must be in [0, 1], got {tau}")
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ConfigError(f"epsilon must be > 0 and finite, got {epsilon}")
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations or n_permutations < 0:
        raise ConfigError(f"permutations must be an integer >= 0, got {n_permutations}")
    if isinstance(n_trees, bool) or int(n_trees) != n_trees or n_trees < 1:
        raise ConfigError(f"n_trees must be an integer >= 1, got {n_trees}")
    real, synthetic, row_ids, unknown = _check_inputs(real, synthetic, schema, sensitive)
    categorical = schema.is_categorical(sensitive)
    if categorical and method not in CATEGORICAL_METHODS:
        raise ConfigError(f"method {method!r} unknown; choose one of {list(CATEGORICAL_METHODS)}")
    if not categorical and error not in CONTINUOUS_ERRORS:
        raise ConfigError(f"error {error!r} unknown; choose one of {list(CONTINUOUS_ERRORS)}")
    # A numeric quasi-identifier with no value in the synthetic records the attacker learns from
    # (for a continuous target: those with a value of it) teaches it nothing: left out.
    learning = synthetic if categorical else synthetic[synthetic[sensitive].notna()]
    features = informative_features(learning, schema, list(schema.quasi_identifiers))
    model = make_attacker(attacker, schema, features, categorical, seed=seed, n_trees=n_trees, n_jobs=n_jobs)
    x_syn, x_real = model_frame(synthetic, schema, features), model_frame(real, schema, features)
    rng = np.random.default_rng(seed)

    if categorical:
        y_syn = model_frame(synthetic, schema, [sensitive])[sensitive].to_numpy()
        y_real = model_frame(real, schema, [sensitive])[sensitive].to_numpy()
        labels, truth, shares = class_shares(y_real, sensitive)
        if len(np.unique(y_syn)) < 2:
            # Nothing to learn: the attacker can only predict the one class it saw.
            classes = np.unique(y_syn)
            proba = np.ones((len(y_real), 1))
        else:
            if attacker.endswith(CALIBRATED):
                # Cross-fitted calibration needs every class in every fold.
                rarest = pd.Series(y_syn).value_counts()
                if rarest.min() < 2:
                    raise DataError(f"attacker {attacker!r}: class {rarest.idxmin()!r} of '{sensitive}' has "
                                    f"{rarest.min()} synthetic record(s); calibration needs at least 2")
                model.named_steps["model"].cv = int(min(CALIBRATION_FOLDS, rarest.min()))
            model.fit(x_syn, y_syn)
            proba, classes = model.predict_proba(x_real), model.classes_
        lookup = {c: k for k, c in enumerate(classes)}
        # A class never seen in the synthetic data gets probability 0 from the attacker.
        column_of_label = np.array([lookup.get(label, -1) for label in labels])
        rows = np.arange(len(truth))

        def score(codes: np.ndarray) -> np.ndarray:
            index = column_of_label[codes]
            g = np.where(index >= 0, proba[rows, np.maximum(index, 0)], 0.0)
            return categorical_scores(g, shares[codes], method, proba, index)

        threshold, method_name = tau, method
    else:
        y_syn = numeric_values(synthetic[[sensitive]])[:, 0]
        y_real = numeric_values(real[[sensitive]])[:, 0]
        keep = ~np.isnan(y_syn)
        model.fit(x_syn[keep], y_syn[keep])
        yhat = model.predict(x_real)

        def score(values: np.ndarray) -> np.ndarray:
            # A missing true value cannot be inferred to within a tolerance: infinite error.
            return np.where(np.isnan(values), np.inf, continuous_errors(values, yhat, error, delta))

        truth, threshold, method_name = y_real, epsilon, error

    scores = score(truth)
    flags = at_risk(scores, threshold, categorical)
    n_at_risk = int(flags.sum())
    low, high = proportion_confint(n_at_risk, len(flags), alpha=0.05, method="wilson")
    # Wilson's bounds at 0 or n are the point estimate up to rounding (1 - 1e-16): keep it inside.
    low, high = min(low, n_at_risk / len(flags)), max(high, n_at_risk / len(flags))
    curve = pd.DataFrame({
        "threshold": THRESHOLD_GRID,
        "rapid": [float(at_risk(scores, t, categorical).mean()) for t in THRESHOLD_GRID],
    })
    p_value = rapid_null = None
    if n_permutations:
        # Labels permuted with predictions fixed: the null of no link between what the attacker
        # predicts for a record and that record's own value. Its mean is reported too: an
        # over-confident attacker puts some records above tau by chance alone (seen with boosted
        # trees on the `independent` baseline), and RAPID - rapid_null is the part that is not chance.
        null = np.array([at_risk(score(rng.permutation(truth)), threshold, categorical).mean()
                         for _ in range(n_permutations)])
        p_value = float((1 + (null >= flags.mean()).sum()) / (1 + n_permutations))
        rapid_null = float(null.mean())
    records = pd.DataFrame({ROW_ID: row_ids, "score": scores, "at_risk": flags})
    result = RapidResult(
        rapid=float(flags.mean()), n_records=len(flags), n_at_risk=n_at_risk,
        ci_low=float(low), ci_high=float(high), sensitive=sensitive, attacker=attacker,
        kind="categorical" if categorical else "continuous", method=method_name,
        threshold=float(threshold), p_value=p_value, n_permutations=n_permutations, rapid_null=rapid_null,
        curve=curve, records=records, unknown_level_share=unknown,
    )
    if attribution:
        result.attribution = attribute_risk(real, flags, schema)
    return result
