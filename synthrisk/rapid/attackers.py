"""The attacker's models: trained on synthetic data only, applied to real quasi-identifiers.

Defaults follow the RAPID paper's R setup where scikit-learn has a counterpart:
`rf` mirrors ranger's probability forest (500 trees, mtry = floor(sqrt(p)), nodes of fewer than
10 records are not split, bootstrap); `cart` mirrors rpart (minsplit 20, minbucket 7); `gbm` is
scikit-learn's histogram gradient boosting (100 rounds), standing in for xgboost; `logit` is
(multinomial) logistic regression for categorical targets and `linear` ordinary least squares for
continuous ones. Categorical quasi-identifiers are one-hot encoded with unknown levels ignored,
so a category present in the real data but absent from the synthetic data gives the attacker no
information (an all-zero indicator block) instead of an error.
"""

from __future__ import annotations

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..errors import ConfigError

ATTACKERS = ("rf", "cart", "gbm", "logit", "linear")
CATEGORICAL_ONLY, CONTINUOUS_ONLY = {"logit"}, {"linear"}


def applicable(attacker: str, categorical_target: bool) -> bool:
    if categorical_target:
        return attacker not in CONTINUOUS_ONLY
    return attacker not in CATEGORICAL_ONLY


def _model(attacker: str, categorical_target: bool, seed: int, n_trees: int, n_jobs: int):
    if attacker == "rf":
        cls = RandomForestClassifier if categorical_target else RandomForestRegressor
        return cls(n_estimators=n_trees, max_features="sqrt", min_samples_split=10 if categorical_target else 5,
                   bootstrap=True, n_jobs=n_jobs, random_state=seed)
    if attacker == "cart":
        cls = DecisionTreeClassifier if categorical_target else DecisionTreeRegressor
        return cls(min_samples_split=20, min_samples_leaf=7, random_state=seed)
    if attacker == "gbm":
        cls = HistGradientBoostingClassifier if categorical_target else HistGradientBoostingRegressor
        return cls(max_iter=100, early_stopping=False, random_state=seed)
    if attacker == "logit":
        return LogisticRegression(max_iter=2000)
    return LinearRegression()


def make_attacker(attacker: str, schema: DatasetSchema, features: list[str], categorical_target: bool,
                  seed: int = 0, n_trees: int = 500, n_jobs: int = 1) -> Pipeline:
    if attacker not in ATTACKERS:
        raise ConfigError(f"attacker {attacker!r} does not exist; choose one of {list(ATTACKERS)}")
    if not applicable(attacker, categorical_target):
        kind = "categorical" if categorical_target else "continuous"
        raise ConfigError(f"attacker {attacker!r} cannot predict a {kind} sensitive attribute")
    categorical = [c for c in features if schema.is_categorical(c)]
    numeric = [c for c in features if not schema.is_categorical(c)]
    linear = attacker in ("logit", "linear")
    # Trees handle NaN natively; linear models get median imputation plus missing indicators.
    numeric_step = (make_pipeline(SimpleImputer(strategy="median", add_indicator=True,
                                                keep_empty_features=True), StandardScaler())
                    if linear else "passthrough")
    prep = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
         ("num", numeric_step, numeric)],
        sparse_threshold=0.0,
    )
    return Pipeline([("prep", prep), ("model", _model(attacker, categorical_target, seed, n_trees, n_jobs))])


def model_frame(frame: pd.DataFrame, schema: DatasetSchema, features: list[str]) -> pd.DataFrame:
    """Quasi-identifiers as the pipelines expect them: strings with a missing level, floats with NaN."""
    out = {}
    for column in features:
        if schema.is_categorical(column):
            out[column] = category_strings(frame[column])
        else:
            out[column] = numeric_values(frame[[column]])[:, 0]
    return pd.DataFrame(out, index=frame.index)
