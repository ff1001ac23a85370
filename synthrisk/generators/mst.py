"""DP synthetic data from noisy marginals of a graphical model (MST, McKenna et al. 2021).

The release is the noisy sufficient statistics of an exponential family over the whole table: the
one-way marginals of every column and the two-way marginals on a tree of column pairs, each with
Gaussian noise. Private-PGM (`mbi`) fits the graphical model whose marginals best match them, and
the synthetic records are sampled from it; everything after the release is post-processing.

Neighbours replace one record (n is public; `privacy()` states "neighbours": "replace-one", the
relation the empirical audit then builds, synthrisk.epsilon_audit.neighbours). Three Gaussian mechanisms are composed, each with a
third of the privacy budget; the sensitivity charged to each is that of the round's WHOLE release
(all of its vectors at once), stated and tested (tests/unit/test_dp_sensitivity.py):
  1. all p one-way count vectors, concatenated: replacing a record moves one count down and one up
     in every column's vector, sqrt(2) each, so the round moves by sqrt(2 p) in l2;
  2. for every one of the p (p - 1) / 2 column pairs, the L1 distance between its two-way counts and
     n times the product of the noisy one-way shares (public after round 1): each score moves by
     at most 2 (one count down, one up), so the vector moves by 2 sqrt(p (p - 1) / 2). The tree is
     the maximum spanning tree of the noisy scores (MST selects with the exponential mechanism; a
     Gaussian release keeps all three rounds in one mechanism family, so their composition is exact);
  3. the p - 1 two-way count vectors on the tree's edges: sqrt(2 (p - 1)).
Gaussian mechanisms compose exactly (Gaussian DP: mu^2 adds up), so every round gets the noise
multiplier sqrt(3) z, z = `dp_accounting.get_sigma_gaussian(epsilon, delta)`, times its sensitivity.

The domain comes from the schema's public metadata only (categorical `levels`, numeric `bounds`
cut into `bins` equal-width bins, values beyond a bound clipped into the edge bin); a missing
value is always a cell of its own, whether or not the data have one, so that no part of the
domain depends on the records. `domain: from_data` opts in to reading levels and ranges from the
training data instead: the result is then NOT differentially private and is marked so.
Numeric values are drawn uniformly within their synthetic bin (rounded for integer columns).

The noise is drawn from the operating system's entropy (synthrisk.stats.noise): two fits on the same data
with the same seed differ, and nobody can replay it. `noise_seed` (a non-negative integer) makes it
reproducible, drawn from SeedSequence([noise_seed, seed]); the release is then NOT private (whoever
knows the noise seed can subtract the noise) and `privacy()` says so. Sampling records from the
fitted model is post-processing and uses the ordinary seed.

`noise_multiplier_scale` (default 1) exists only as a control for the empirical privacy audit
(synthrisk.epsilon_audit): a value below 1 multiplies every round's noise by it, so the release is
NOT (epsilon, delta)-DP and `privacy()` says so. Scaling by 1 / sqrt(p) reproduces the accounting
error MST once had (each column's sensitivity sqrt(2) charged where sqrt(2 p) was due).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.encoding import MISSING_LEVEL, category_strings, numeric_values
from ..dp.mechanism import check_privacy, gaussian_sigma
from ..errors import ConfigError
from ..stats.noise import check_noise_seed, guarantee, noise_generator
from .base import Generator, register

ROUNDS = ("one_way", "scores", "tree")
#: equal-width bins of a numeric column's public bounds, unless `params.bins` says otherwise
DEFAULT_BINS = 16
DOMAINS = ("public", "from_data")
NOT_DP = "not DP: domain read from the data"
#: the prefix of the guarantee of an audit control whose noise is deliberately too small
NOT_DP_NOISE = "not DP: noise scaled by"


class MSTColumn:
    """One column's discrete domain: levels (categorical, missing last) or bin edges (numeric,
    NaN last). Built from public metadata (`public`) or, by explicit opt-in, from data."""

    def __init__(self, name: str, categorical: bool, levels: list[str] | None = None,
                 bounds: tuple[float, float] | None = None, bins: int = DEFAULT_BINS):
        self.name, self.categorical = name, categorical
        if categorical:
            self.levels = [v for v in levels if v != MISSING_LEVEL] + [MISSING_LEVEL]
            self.size = len(self.levels)
        else:
            low, high = bounds
            self.edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
            self.size = bins + 1

    @classmethod
    def public(cls, name: str, schema, bins: int) -> MSTColumn:
        if schema.is_categorical(name):
            return cls(name, True, levels=schema.public_levels(name))
        return cls(name, False, bounds=schema.public_bounds(name), bins=bins)

    @classmethod
    def from_data(cls, name: str, values: pd.Series, categorical: bool, bins: int) -> MSTColumn:
        if categorical:
            return cls(name, True, levels=sorted(set(category_strings(values))))
        x = numeric_values(values.to_frame())[:, 0]
        finite = x[np.isfinite(x)]
        bounds = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        return cls(name, False, bounds=bounds, bins=bins)

    def encode(self, values: pd.Series) -> np.ndarray:
        if self.categorical:
            lookup = {level: k for k, level in enumerate(self.levels)}
            strings = category_strings(values)
            unknown = sorted({v for v in strings if v not in lookup})
            if unknown:
                raise ConfigError(f"mst: column '{self.name}' holds values outside its domain: {unknown[:3]}")
            return np.array([lookup[v] for v in strings], dtype=np.int64)
        x = numeric_values(values.to_frame())[:, 0]
        n_bins = len(self.edges) - 1
        codes = np.clip(np.searchsorted(self.edges, x, side="right") - 1, 0, n_bins - 1)
        return np.where(np.isnan(x), n_bins, codes).astype(np.int64)

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


# The three rounds' releases before noise, as functions of the encoded records (column -> codes),
# so that the sensitivity test computes exactly what fit() releases.

def marginal_counts(codes: dict, sizes: dict, clique: tuple[str, ...]) -> np.ndarray:
    """Counts of the clique's cells, C order over the clique's columns (as mbi's datavector)."""
    index = np.zeros(len(codes[clique[0]]), dtype=np.int64)
    for column in clique:
        index = index * sizes[column] + codes[column]
    return np.bincount(index, minlength=int(np.prod([sizes[c] for c in clique]))).astype(float)


def one_way_release(codes: dict, sizes: dict) -> list[np.ndarray]:
    return [marginal_counts(codes, sizes, (c,)) for c in sizes]


def score_release(codes: dict, sizes: dict, pairs: list, shares: dict) -> np.ndarray:
    """Per pair, the L1 distance of its counts from n times the product of the (noisy, hence
    public) one-way shares."""
    n = len(next(iter(codes.values())))
    return np.array([np.abs(marginal_counts(codes, sizes, (a, b)) - n * np.outer(shares[a], shares[b]).ravel()).sum()
                     for a, b in pairs])


def tree_release(codes: dict, sizes: dict, tree: list) -> list[np.ndarray]:
    return [marginal_counts(codes, sizes, edge) for edge in tree]


def round_sensitivities(n_columns: int) -> dict[str, float]:
    """l2 sensitivity of each round's whole release under replace-one neighbours (module doc)."""
    p = n_columns
    return {"one_way": float(np.sqrt(2.0 * p)), "scores": 2.0 * float(np.sqrt(p * (p - 1) / 2.0)),
            "tree": float(np.sqrt(2.0 * (p - 1)))}


@register("mst")
class MSTGenerator(Generator):
    """Params: epsilon (required), delta (default 1e-6), bins (numeric columns, default 16),
    iters (Private-PGM iterations, default 1000), domain ("public", the default: the schema's
    levels and bounds; "from_data": read from the training data, NOT DP, marked so),
    noise_multiplier_scale (default 1; in (0, 1): an under-noised audit control, NOT DP, marked so),
    noise_seed (default none: noise from the operating system's entropy; an integer makes the noise
    reproducible and the release not private, marked so)."""

    libraries = ("mbi", "jax", "dp-accounting")

    def __init__(self, seed: int = 0, epsilon: float | None = None, delta: float = 1e-6, bins: int = DEFAULT_BINS,
                 iters: int = 1000, domain: str = "public", noise_multiplier_scale: float = 1.0,
                 noise_seed: int | None = None):
        super().__init__(seed)
        if epsilon is None:
            raise ConfigError("mst generator: params.epsilon is required")
        check_privacy(float(epsilon), float(delta), 1.0)
        if int(bins) < 2:
            raise ConfigError(f"mst generator: params.bins must be >= 2, got {bins}")
        if domain not in DOMAINS:
            raise ConfigError(f"mst generator: params.domain must be one of {list(DOMAINS)}, got {domain!r}")
        self.epsilon, self.delta, self.bins, self.iters = float(epsilon), float(delta), int(bins), int(iters)
        scale = float(noise_multiplier_scale)
        if not (np.isfinite(scale) and 0.0 < scale <= 1.0):
            # More noise than the budget needs is a smaller epsilon, not a scale: keep one way to say it.
            raise ConfigError(f"mst generator: params.noise_multiplier_scale must be in (0, 1] (below 1 is an under-"
                              f"noised audit control; for more noise lower epsilon), got {noise_multiplier_scale}")
        self.domain, self.noise_multiplier_scale = domain, scale
        self.noise_seed = check_noise_seed(noise_seed, "mst generator: params.noise_seed")

    def noise_multiplier(self) -> float:
        """Noise standard deviation per unit of sensitivity, the same in every round: three equal
        Gaussian rounds give mu_total^2 = 3 mu_round^2, so sqrt(3) times the multiplier of a single
        mechanism with the whole (epsilon, delta); times `noise_multiplier_scale` (1 unless this is an
        audit control)."""
        return gaussian_sigma(self.epsilon, self.delta, 1.0) * np.sqrt(len(ROUNDS)) * self.noise_multiplier_scale

    def privacy(self) -> dict:
        broken = [NOT_DP] if self.domain != "public" else []
        if self.noise_multiplier_scale != 1.0:
            broken.append(f"{NOT_DP_NOISE} {self.noise_multiplier_scale:g} (an audit control)")
        return {"epsilon": self.epsilon, "delta": self.delta, "neighbours": "replace-one",
                "domain": self.domain, "noise_multiplier_scale": self.noise_multiplier_scale,
                "noise_seed": self.noise_seed, "guarantee": guarantee(broken, self.noise_seed)}

    def domain_columns(self, train: pd.DataFrame, schema) -> dict[str, MSTColumn]:
        if self.domain == "public":
            return {c: MSTColumn.public(c, schema, self.bins) for c in train.columns}
        return {c: MSTColumn.from_data(c, train[c], schema.is_categorical(c), self.bins) for c in train.columns}

    def select(self, train: pd.DataFrame, schema) -> list[tuple[str, str]]:
        """The first two rounds only: the noisy one-way counts and the tree they and the noisy pair
        scores select (`tree_`, with `domain_cols_` and `noise_`). What a generator-aware attack needs
        to learn which pairs MST measures (MAMA-MIA's focal points), without the graphical model's
        estimation, which is the cost of a fit."""
        self._rounds(train, schema)
        return self.tree_

    def _rounds(self, train: pd.DataFrame, schema):
        """The first two rounds (`select`); returns what the third goes on from: the codes, the
        domain sizes, the noisy one-way counts and the noise of the same stream (the third round
        draws after the first two, as one fit always has)."""
        rng = noise_generator(self.noise_seed, self.seed)  # every draw of fit() is DP noise
        self.columns_ = list(train.columns)
        self.dtypes_ = train.dtypes.to_dict()
        self.domain_cols_ = self.domain_columns(train, schema)
        sizes = {c: col.size for c, col in self.domain_cols_.items()}
        codes = {c: col.encode(train[c]) for c, col in self.domain_cols_.items()}
        z = self.noise_multiplier()
        self.noise_ = {name: z * s for name, s in round_sensitivities(len(self.columns_)).items()}

        def noisy(exact, round_name):
            return exact + rng.normal(0.0, self.noise_[round_name], size=exact.shape)

        one_way = dict(zip(self.columns_, (noisy(v, "one_way") for v in one_way_release(codes, sizes))))
        pairs = [(a, b) for i, a in enumerate(self.columns_) for b in self.columns_[i + 1:]]
        shares = {c: np.clip(v, 0, None) / max(np.clip(v, 0, None).sum(), 1.0) for c, v in one_way.items()}
        noisy_scores = noisy(score_release(codes, sizes, pairs, shares), "scores")
        self.tree_ = _maximum_spanning_tree(self.columns_, pairs, noisy_scores)
        return codes, sizes, one_way, noisy

    def fit(self, train: pd.DataFrame, schema):
        import jax

        jax.config.update("jax_enable_x64", True)  # mbi warns that float32 can stall its estimator
        from mbi import Domain, LinearMeasurement
        from mbi.estimation import MirrorDescent

        codes, sizes, one_way, noisy = self._rounds(train, schema)
        measurements = [LinearMeasurement(one_way[c], (c,), stddev=self.noise_["one_way"]) for c in self.columns_]
        measurements += [LinearMeasurement(noisy(counts, "tree"), edge, stddev=self.noise_["tree"])
                         for edge, counts in zip(self.tree_, tree_release(codes, sizes, self.tree_))]

        self.model_ = MirrorDescent().estimate(Domain.fromdict(sizes), measurements, iters=self.iters)
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
