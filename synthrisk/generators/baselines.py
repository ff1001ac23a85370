"""Baselines that bracket the risk: release the members themselves, or only their marginals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import Generator, register


@register("identity")
class IdentityGenerator(Generator):
    """Releases the training data itself: the worst case every risk measure must flag.

    With n equal to the number of members it returns exactly them (shuffled); with fewer it
    returns a subset, with more it repeats records.
    """

    def fit(self, train, schema):
        self.train_ = train.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        m = len(self.train_)
        order = rng.permutation(m) if n <= m else np.concatenate([rng.permutation(m), rng.integers(0, m, n - m)])
        return self.train_.iloc[order[:n]].reset_index(drop=True)


@register("independent")
class IndependentGenerator(Generator):
    """Each column drawn independently from its training marginal: no relationship survives."""

    def fit(self, train, schema):
        self.train_ = train.reset_index(drop=True)
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        m = len(self.train_)
        return pd.DataFrame({
            column: self.train_[column].iloc[rng.integers(0, m, n)].to_numpy()
            for column in self.train_.columns
        }).astype(self.train_.dtypes.to_dict())
