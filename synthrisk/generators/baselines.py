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


@register("leaky")
class LeakyGenerator(Generator):
    """The positive control between the two: a share `fraction` of the released rows are members
    copied verbatim (drawn without replacement), the rest come from `independent`. Every
    membership measure must flag it, more strongly as the fraction grows; at fraction 0 it is
    `independent`."""

    def __init__(self, seed: int = 0, fraction: float = 0.1, **params):
        super().__init__(seed=seed, **params)
        if not 0 <= float(fraction) <= 1:
            raise ValueError(f"fraction must be in [0, 1], got {fraction!r}")
        self.fraction = float(fraction)

    def fit(self, train, schema):
        self.train_ = train.reset_index(drop=True)
        self.background_ = IndependentGenerator(seed=self.seed).fit(train, schema)
        return self

    def sample(self, n, seed):
        rng = np.random.default_rng([seed, 0x4C45414B])  # its own stream: the copies do not shift the rest
        n_copies = min(int(round(self.fraction * n)), len(self.train_))
        copies = self.train_.iloc[rng.choice(len(self.train_), n_copies, replace=False)]
        rest = self.background_.sample(n - n_copies, seed)
        mixed = pd.concat([copies, rest], ignore_index=True)
        return mixed.iloc[rng.permutation(len(mixed))].reset_index(drop=True)
