"""The attacker's models: trained on synthetic data only, applied to real quasi-identifiers.

Defaults follow the RAPID paper's R setup where scikit-learn has a counterpart:
`rf` mirrors ranger's probability forest (500 trees, nodes of fewer than 10 records are not
split, bootstrap) on the ORIGINAL variables: a categorical quasi-identifier is one ordered
feature (ranger's default treats factor levels as ordered, in sorted order), so mtry =
floor(sqrt(p)) draws from the p quasi-identifiers (3 of Adult's 12), not from one-hot columns;
`cart` mirrors rpart (minsplit 20, minbucket 7, pruned at cp = 0.01: `rpart.py`); `gbm` is
scikit-learn's histogram gradient boosting (100 rounds), standing in for xgboost; `logit` is
(multinomial) logistic regression for categorical targets and `linear` ordinary least squares for
continuous ones. Other models get categorical quasi-identifiers one-hot encoded with unknown
levels ignored, so a category present in the real data but absent from the synthetic data gives
the attacker no information (an all-zero indicator block) instead of an error; the forest codes
such a level as -1.

The paper's attackers report their models' raw probabilities: `rf`, `cart`, `gbm`, `logit` are
that setup. An over-confident model (a probability of 0.95 for the majority class, everywhere)
puts records above tau without knowing anything about them. `<name>_cal` (e.g. `rf_cal`) is the
same model with its probabilities calibrated on synthetic records it was not trained on
(isotonic, 3-fold cross-fitting on the synthetic data; the attacker needs nothing else), so the
difference between `rf` and `rf_cal` is the part of RAPID that is calibration, not knowledge.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.encoding import category_strings, numeric_values
from ..errors import ConfigError

# scikit-learn is imported inside the functions: the workflow's rule files import this module for
# the attacker list and `applicable` at parse time.
BASE_ATTACKERS = ("rf", "cart", "gbm", "logit", "linear")
CALIBRATED = "_cal"
CALIBRATABLE = ("rf", "cart", "gbm")  # logit is fitted by likelihood: calibrated already
ATTACKERS = BASE_ATTACKERS + tuple(a + CALIBRATED for a in CALIBRATABLE)
CATEGORICAL_ONLY = {"logit"} | {a + CALIBRATED for a in CALIBRATABLE}
CONTINUOUS_ONLY = {"linear"}
CALIBRATION_FOLDS = 3


def base_attacker(attacker: str) -> str:
    """`rf_cal` -> `rf`; a base attacker is its own base."""
    return attacker[: -len(CALIBRATED)] if attacker.endswith(CALIBRATED) else attacker


def applicable(attacker: str, categorical_target: bool) -> bool:
    if categorical_target:
        return attacker not in CONTINUOUS_ONLY
    return attacker not in CATEGORICAL_ONLY


def _model(attacker: str, categorical_target: bool, seed: int, n_trees: int, n_jobs: int):
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LinearRegression, LogisticRegression

    from .rpart import RpartClassifier, RpartRegressor

    if attacker == "rf":
        cls = RandomForestClassifier if categorical_target else RandomForestRegressor
        return cls(n_estimators=n_trees, max_features="sqrt", min_samples_split=10 if categorical_target else 5,
                   bootstrap=True, n_jobs=n_jobs, random_state=seed)
    if attacker == "cart":
        cls = RpartClassifier if categorical_target else RpartRegressor
        return cls(cp=0.01, min_split=20, min_bucket=7, random_state=seed)
    if attacker == "gbm":
        cls = HistGradientBoostingClassifier if categorical_target else HistGradientBoostingRegressor
        return cls(max_iter=100, early_stopping=False, random_state=seed)
    if attacker == "logit":
        return LogisticRegression(max_iter=2000)
    return LinearRegression()


def make_attacker(attacker: str, schema, features: list[str], categorical_target: bool,
                  seed: int = 0, n_trees: int = 500, n_jobs: int = 1):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    if attacker not in ATTACKERS:
        raise ConfigError(f"attacker {attacker!r} does not exist; choose one of {list(ATTACKERS)}")
    if not applicable(attacker, categorical_target):
        kind = "categorical" if categorical_target else "continuous"
        raise ConfigError(f"attacker {attacker!r} cannot predict a {kind} sensitive attribute")
    base = base_attacker(attacker)
    categorical = [c for c in features if schema.is_categorical(c)]
    numeric = [c for c in features if not schema.is_categorical(c)]
    linear = base in ("logit", "linear")
    # Trees handle NaN natively; linear models get median imputation plus missing indicators.
    numeric_step = (make_pipeline(SimpleImputer(strategy="median", add_indicator=True,
                                                keep_empty_features=True), StandardScaler())
                    if linear else "passthrough")
    categorical_step = (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, dtype=np.float64)
                        if base == "rf" else OneHotEncoder(handle_unknown="ignore", sparse_output=False))
    prep = ColumnTransformer([("cat", categorical_step, categorical), ("num", numeric_step, numeric)],
                             sparse_threshold=0.0)
    model = _model(base, categorical_target, seed, n_trees, n_jobs)
    if attacker != base:
        model = CalibratedClassifierCV(model, method="isotonic", cv=CALIBRATION_FOLDS)
    return Pipeline([("prep", prep), ("model", model)])


def informative_features(train: pd.DataFrame, schema, features: list[str], what: str = "synthetic data") -> list[str]:
    """`features` less the numeric ones that have no value at all in `train` (the attacker's or
    model's training data): they carry no information, and gradient boosting cannot even bin them.
    An error naming them when nothing is left."""
    kept = [c for c in features if schema.is_categorical(c) or train[c].notna().any()]
    if not kept:
        from ..errors import DataError

        raise DataError(f"{what}: the feature column(s) {features} have no values at all; a model trained on "
                        "them has nothing to learn from")
    return kept


def model_frame(frame: pd.DataFrame, schema, features: list[str]) -> pd.DataFrame:
    """Quasi-identifiers as the pipelines expect them: strings with a missing level, floats with NaN."""
    out = {}
    for column in features:
        if schema.is_categorical(column):
            out[column] = category_strings(frame[column])
        else:
            out[column] = numeric_values(frame[[column]])[:, 0]
    return pd.DataFrame(out, index=frame.index)
