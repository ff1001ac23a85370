"""Machine-learning efficacy: train on synthetic, test on the real holdout, against train on real.

The model is the attacker suite's gradient boosting pipeline (scikit-learn's histogram GBM with
the same encoding), so utility and risk are measured with the same learner. Every other column of
the schema is a feature: efficacy asks whether an analyst could reuse the synthetic data for
prediction, not what an attacker knowing only quasi-identifiers learns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..rapid.attackers import make_attacker, model_frame


def _fit(train: pd.DataFrame, schema: DatasetSchema, target: str, features: list[str], seed: int):
    """(model, the features it uses). Numeric features without a value in the rows the model learns
    from carry nothing (gradient boosting cannot even bin them) and are left out; with no feature
    left, or fewer than two target values, the model is a dummy that predicts the marginal."""
    categorical = schema.is_categorical(target)
    rows = train if categorical else train[train[target].notna()]
    features = [c for c in features if schema.is_categorical(c) or rows[c].notna().any()]
    X = model_frame(train, schema, features)
    if categorical:
        y = category_strings(train[target])
        if len(np.unique(y)) < 2 or not features:
            # A generator that collapsed the target to one level: the best any model can do is
            # predict that level, which a dummy does without tripping over a one-class fit.
            return DummyClassifier(strategy="prior").fit(X, y), features
    else:
        y = numeric_values(train[[target]])[:, 0]
        keep = ~np.isnan(y)
        if keep.sum() < 2 or not features:
            # Too few synthetic values to learn from: predict their mean (0 when there are none).
            constant = float(y[keep].mean()) if keep.any() else 0.0
            return DummyRegressor(strategy="constant", constant=constant).fit(X, np.full(len(X), constant)), features
        X, y = X[keep], y[keep]
    return make_attacker("gbm", schema, features, categorical, seed=seed).fit(X, y), features


def _score(model, features: list[str], test: pd.DataFrame, schema: DatasetSchema, target: str) -> dict:
    X = model_frame(test, schema, features)
    if not schema.is_categorical(target):
        y = numeric_values(test[[target]])[:, 0]
        keep = ~np.isnan(y)
        if keep.sum() < 2:  # R² needs at least two holdout values: undefined otherwise
            return {"r2": float("nan")}
        prediction = model.predict(X[keep])
        return {"r2": float(r2_score(y[keep], prediction))}
    y = category_strings(test[target])
    classes = np.unique(y)
    proba = pd.DataFrame(model.predict_proba(X), columns=model.classes_)
    # Levels the model never saw get probability 0; levels only the model knows are dropped and
    # the rows renormalised, so the AUC is over the holdout's own classes.
    proba = proba.reindex(columns=classes, fill_value=0.0).to_numpy()
    row_sums = proba.sum(axis=1, keepdims=True)
    proba = np.where(row_sums > 0, proba / np.where(row_sums > 0, row_sums, 1), 1.0 / len(classes))
    prediction = classes[proba.argmax(axis=1)]
    out = {"accuracy": float(accuracy_score(y, prediction))}
    if len(classes) == 2:
        out["auc"] = float(roc_auc_score(y == classes[1], proba[:, 1]))
    elif len(classes) > 2:
        out["auc"] = float(roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes))
    return out


def efficacy(real_train: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame,
             schema: DatasetSchema, targets: list[str] | None = None, seed: int = 0) -> pd.DataFrame:
    """One row per target and metric: score of the synthetic-trained model, of the real-trained
    model, and their ratio (1 = the synthetic data serves as well as the real data)."""
    rows = []
    for target in targets or schema.sensitive:
        features = [c for c in schema.columns if c != target]
        scores = {source: _score(*_fit(train, schema, target, features, seed), holdout, schema, target)
                  for source, train in (("synthetic", synthetic), ("real", real_train))}
        for metric, real_value in scores["real"].items():
            synthetic_value = scores["synthetic"][metric]
            rows.append({"target": target, "metric": metric, "synthetic": synthetic_value, "real": real_value,
                         "ratio": synthetic_value / real_value if real_value > 0 else np.nan})
    return pd.DataFrame(rows, columns=["target", "metric", "synthetic", "real", "ratio"])
