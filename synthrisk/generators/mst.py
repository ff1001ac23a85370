"""DP synthetic data from noisy marginals of a graphical model (MST, McKenna et al. 2021).

The release is the noisy sufficient statistics of an exponential family over the whole table: the
one-way marginals of every column and the two-way marginals on a tree of column pairs, each with
Gaussian noise. Private-PGM (`mbi`) fits the graphical model whose marginals best match them, and
the synthetic records are sampled from it; everything after the release is post-processing.

Three Gaussian mechanisms are composed, each with a third of the privacy budget:
  1. all one-way marginals (count vectors);
  2. for every column pair, the L1 distance between its two-way marginal and the product of the
     noisy one-way marginals (a score vector); the tree is the maximum spanning tree of the noisy
     scores (MST selects with the exponential mechanism; a Gaussian release of the scores keeps
     all three steps in one mechanism family, so their composition is exact);
  3. the two-way marginals on the tree's edges.
Neighbours replace one record, as elsewhere in synthrisk: a count vector moves by sqrt(2) in l2
and each score by at most 2. Gaussian mechanisms compose exactly (Gaussian DP: mu^2 adds up), so
the three noise multipliers follow from one call to `dp_accounting.get_sigma_gaussian(eps, delta)`.

The domain (category levels, numeric ranges cut into `bins` equal-width bins) is taken from the
training data and treated as public metadata, as MST and AIM take a given domain file. Numeric
values are drawn uniformly within their synthetic bin (rounded for integer columns).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.encoding import MISSING_LEVEL, category_strings, numeric_values
from ..errors import ConfigError
from ..dp.mechanism import check_privacy, gaussian_sigma
from .base import Generator, register

ROUNDS = 3


class _Column:
    """One column's discrete domain: levels (categorical) or bin edges (numeric, NaN last)."""

    def __init__(self, name: str, values: pd.Series, categorical: bool, bins: int):
        self.name, self.categorical = name, categorical
        if categorical:
            self.levels = sorted(set(category_strings(values)))
            self.size = len(self.levels)
        else:
            x = numeric_values(values.to_frame())[:, 0]
            finite = x[~np.isnan(x)]
            low, high = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
            self.edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
            self.has_missing = bool(np.isnan(x).any())
            self.size = bins + int(self.has_missing)

    def encode(self, values: pd.Series) -> np.ndarray:
        if self.categorical:
            lookup = {level: k for k, level in enumerate(self.levels)}
            return np.array([lookup[v] for v in category_strings(values)])
        x = numeric_values(values.to_frame())[:, 0]
        codes = np.clip(np.searchsorted(self.edges, x, side="right") - 1, 0, len(self.edges) - 2)
        return np.where(np.isnan(x), len(self.edges) - 1, codes)

    def decode(self, codes: np.ndarray, rng: np.random.Generator, dtype) -> pd.Series:
        if self.categorical:
            values = np.array(self.levels, dtype=object)[codes]
            return pd.Series(np.where(values == MISSING_LEVEL, None, values), dtype=object)
        n_bins = len(self.edges) - 1
        inside = np.minimum(codes, n_bins - 1)
        x = rng.uniform(self.edges[inside], self.edges[inside + 1])
        x = np.where(codes >= n_bins, np.nan, x)
        if pd.api.types.is_integer_dtype(dtype):
            return pd.Series(np.round(x)).astype(dtype)
        return pd.Series(x, dtype=float)


@register("mst")
class MSTGenerator(Generator):
    """Params: epsilon (required), delta (default 1e-6), bins (numeric columns, default 16),
    iters (Private-PGM iterations, default 1000)."""

    libraries = ("mbi", "jax", "dp-accounting")

    def __init__(self, seed: int = 0, epsilon: float | None = None, delta: float = 1e-6, bins: int = 16,
                 iters: int = 1000):
        super().__init__(seed)
        if epsilon is None:
            raise ConfigError("mst generator: params.epsilon is required")
        check_privacy(float(epsilon), float(delta), 1.0)
        if int(bins) < 2:
            raise ConfigError(f"mst generator: params.bins must be >= 2, got {bins}")
        self.epsilon, self.delta, self.bins, self.iters = float(epsilon), float(delta), int(bins), int(iters)

    def _noise_multiplier(self) -> float:
        # Three equal Gaussian rounds: mu_total^2 = 3 mu_round^2, so each round's multiplier is
        # sqrt(3) times the single-mechanism multiplier for (epsilon, delta).
        return gaussian_sigma(self.epsilon, self.delta, 1.0) * np.sqrt(ROUNDS)

    def fit(self, train: pd.DataFrame, schema):
        import jax

        jax.config.update("jax_enable_x64", True)  # mbi warns that float32 can stall its estimator
        from mbi import Dataset, Domain, LinearMeasurement
        from mbi.estimation import MirrorDescent

        rng = np.random.default_rng(self.seed)
        self.columns_ = list(train.columns)
        self.dtypes_ = train.dtypes.to_dict()
        self.domain_cols_ = {c: _Column(c, train[c], schema.is_categorical(c), self.bins) for c in self.columns_}
        domain = Domain.fromdict({c: col.size for c, col in self.domain_cols_.items()})
        data = Dataset({c: col.encode(train[c]) for c, col in self.domain_cols_.items()}, domain)
        z = self._noise_multiplier()
        sigma_counts = z * np.sqrt(2.0)

        def counts(clique):
            return np.asarray(data.project(clique).datavector(), dtype=float)

        def noisy(exact):
            return exact + rng.normal(0.0, sigma_counts, size=exact.shape)

        one_way = {c: noisy(counts((c,))) for c in self.columns_}
        measurements = [LinearMeasurement(one_way[c], (c,), stddev=sigma_counts) for c in self.columns_]

        pairs = [(a, b) for i, a in enumerate(self.columns_) for b in self.columns_[i + 1:]]
        two_way = {pair: counts(pair) for pair in pairs}  # exact; only noisy versions leave fit()
        shares = {c: np.clip(v, 0, None) / max(np.clip(v, 0, None).sum(), 1.0) for c, v in one_way.items()}
        n = len(train)
        scores = np.array([np.abs(two_way[a, b] - n * np.outer(shares[a], shares[b]).ravel()).sum()
                           for a, b in pairs])
        noisy_scores = scores + rng.normal(0.0, z * 2.0 * np.sqrt(len(pairs)), size=len(scores))
        self.tree_ = _maximum_spanning_tree(self.columns_, pairs, noisy_scores)
        measurements += [LinearMeasurement(noisy(two_way[edge]), edge, stddev=sigma_counts) for edge in self.tree_]

        self.model_ = MirrorDescent().estimate(domain, measurements, iters=self.iters)
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        # mbi samples from numpy's global generator.
        state = np.random.get_state()
        np.random.seed(seed % 2**32)
        try:
            synthetic = self.model_.synthetic_data(rows=n, method="sample").to_dict()
        finally:
            np.random.set_state(state)
        rng = np.random.default_rng(seed)
        return pd.DataFrame({c: self.domain_cols_[c].decode(np.asarray(synthetic[c]), rng, self.dtypes_[c])
                             for c in self.columns_})


def _maximum_spanning_tree(columns, pairs, weights) -> list[tuple[str, str]]:
    """Kruskal's algorithm; written here because it is a few lines and avoids a graph dependency."""
    parent = {c: c for c in columns}

    def root(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    tree = []
    for k in np.argsort(-np.asarray(weights), kind="stable"):
        a, b = pairs[k]
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            tree.append((a, b))
    return tree
