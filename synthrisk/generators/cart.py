"""Sequential CART synthesis in the style of synthpop's default method.

synthpop (Nowok, Raab & Dibben 2016) visits the columns in order: the first is drawn from its
marginal; each next column is modelled by a CART fitted on the *real* data with the columns
already synthesised as predictors, and a synthetic record receives a real value of that column
drawn at random from the records in the leaf its synthesised predictors fall into (minimum leaf
size 5, no pruning to speak of: rpart's cp = 1e-8). Because values are always donated by real
records of the same leaf, categories stay inside the training domain and missing values are
reproduced at their conditional rate.

Written here rather than taken from a library because no maintained Python package implements
synthpop's CART method; the trees themselves are scikit-learn's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..errors import ConfigError
from .base import Generator, register


class _PredictorEncoder:
    """Numeric predictors as floats (NaN left for the tree's native missing-value handling),
    categorical ones one-hot encoded with missing as a level of its own."""

    def __init__(self, predictors: list[str], schema: DatasetSchema, train: pd.DataFrame):
        self.numeric = [c for c in predictors if not schema.is_categorical(c)]
        self.categorical = [c for c in predictors if schema.is_categorical(c)]
        self.onehot = None
        if self.categorical:
            self.onehot = OneHotEncoder(handle_unknown="ignore", sparse_output=False, dtype=np.float32)
            self.onehot.fit(np.column_stack([category_strings(train[c]) for c in self.categorical]))

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        blocks = []
        if self.numeric:
            blocks.append(numeric_values(frame[self.numeric]))
        if self.onehot is not None:
            blocks.append(self.onehot.transform(
                np.column_stack([category_strings(frame[c]) for c in self.categorical])))
        return np.hstack(blocks).astype(np.float32)


@dataclass
class _Step:
    target: str
    encoder: _PredictorEncoder
    tree: DecisionTreeClassifier | DecisionTreeRegressor
    leaf_ids: np.ndarray   # sorted distinct leaves of the training records
    starts: np.ndarray     # first position of each leaf in `donor_rows`
    counts: np.ndarray     # training records per leaf
    donor_rows: np.ndarray # training row numbers sorted by leaf


@register("cart")
class CartGenerator(Generator):
    libraries = ("scikit-learn",)

    def __init__(self, seed: int = 0, visit_sequence: list[str] | None = None, min_leaf: int = 5):
        super().__init__(seed=seed)
        self.visit_sequence = visit_sequence
        self.min_leaf = int(min_leaf)

    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> CartGenerator:
        order = list(self.visit_sequence or schema.columns)
        if sorted(order) != sorted(schema.columns):
            raise ConfigError(
                f"cart: visit_sequence must list every column of {schema.name} exactly once; "
                f"missing {sorted(set(schema.columns) - set(order))}, unknown {sorted(set(order) - set(schema.columns))}"
            )
        self.train_ = train[order].reset_index(drop=True)
        self.order_ = order
        self.steps_ = []
        for position in range(1, len(order)):
            target = order[position]
            encoder = _PredictorEncoder(order[:position], schema, self.train_)
            features = encoder.transform(self.train_)
            tree = self._fit_tree(features, self.train_[target], schema.is_categorical(target), position)
            leaves = tree.apply(features)
            donor_rows = np.argsort(leaves, kind="stable")
            leaf_ids, starts, counts = np.unique(leaves[donor_rows], return_index=True, return_counts=True)
            self.steps_.append(_Step(target, encoder, tree, leaf_ids, starts, counts, donor_rows))
        return self

    def _fit_tree(self, features, y: pd.Series, categorical: bool, position: int):
        params = dict(min_samples_leaf=self.min_leaf, random_state=self.seed + position)
        if categorical:
            labels = category_strings(y)
            return DecisionTreeClassifier(**params).fit(features, labels)
        values = numeric_values(y.to_frame())[:, 0]
        missing = np.isnan(values)
        filled = np.where(missing, np.nanmedian(values) if (~missing).any() else 0.0, values)
        spread = filled.std() or 1.0
        if missing.any():
            # Missingness is part of what the leaf must separate: model the value and the
            # missing flag jointly so donors carry NaN at its conditional rate.
            target = np.column_stack([(filled - filled.mean()) / spread, missing.astype(float)])
        else:
            target = filled
        return DecisionTreeRegressor(**params).fit(features, target)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        m = len(self.train_)
        first = self.order_[0]
        synthetic = pd.DataFrame({first: self.train_[first].iloc[rng.integers(0, m, n)].to_numpy()})
        synthetic[first] = synthetic[first].astype(self.train_[first].dtype)
        for step in self.steps_:
            leaves = step.tree.apply(step.encoder.transform(synthetic))
            where = np.searchsorted(step.leaf_ids, leaves)
            offset = np.floor(rng.random(n) * step.counts[where]).astype(np.int64)
            donors = step.donor_rows[step.starts[where] + offset]
            synthetic[step.target] = self.train_[step.target].iloc[donors].to_numpy()
            synthetic[step.target] = synthetic[step.target].astype(self.train_[step.target].dtype)
        return synthetic
