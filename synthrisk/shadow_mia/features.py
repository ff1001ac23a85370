"""The feature map of one synthetic dataset (Stadler, Oprisanu & Troncoso 2022; TAPAS, Houssiau et
al. 2022), plus the target's neighbourhood in it.

Set features (the same for every target, so computed once per synthetic dataset):
- naive: per numeric column mean, median and variance; per categorical column the most and the
  least frequent level (their positions in the level list) and the number of distinct levels, as
  Stadler et al.'s NaiveFeatureSet (level frequencies themselves are the histogram's);
- histogram: the share of records per level of each categorical column (plus one cell for any
  other level and missing) and per bin of each numeric column (`bins` equal-width bins of the
  schema's public bounds, or of the population's range where none are declared; values beyond
  are counted in the edge bins, missing values in a cell of their own);
- correlation: the Pearson correlations of every pair of columns of the one-hot (categorical) and
  numeric encoding, the upper triangle; a constant column's correlations are 0 (as TAPAS).

Target features (per target): the Gower distance from the target to its closest synthetic record,
and the number of synthetic records within Gower distance r of it for each r in `radii` (r = 0:
exact copies). Gower ranges and levels are the population's, the attacker's data.

Query features (per target; the steward's audit with the generator in hand uses these and the
target features, not the set features): for every column and every pair of columns, the share of
synthetic records that match the target there (a level of a categorical column, a histogram bin of a
numeric one, missing with missing): TAPAS's targeted counting queries, over all one- and two-way
queries rather than random ones.

Missing numeric values are left out of the naive statistics and stand at the column's mean in the
correlations. Everything is a function of the synthetic data, the schema and the population only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.encoding import category_strings, numeric_values
from ..data.schema import DatasetSchema
from ..mia.gower import GowerSpace, gower_matrix

#: numeric bins of the histogram features (Stadler et al.'s default)
BINS = 10
#: Gower radii of the neighbourhood counts
RADII = (0.0, 0.05, 0.1, 0.2)
#: a distance at most this far above r counts as within r (sums of floats)
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class FeatureMap:
    """What the features need to know about the columns: their levels, bin edges and Gower space."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    levels: dict[str, tuple[str, ...]]
    edges: dict[str, np.ndarray]
    space: GowerSpace
    radii: tuple[float, ...]

    @classmethod
    def fit(cls, schema: DatasetSchema, population: pd.DataFrame, bins: int = BINS,
            radii=RADII) -> FeatureMap:
        """Levels and bounds from the schema's public metadata, else from the population."""
        levels = {c: tuple(schema.levels[c]) if c in schema.levels
                  else tuple(sorted(set(category_strings(population[c].dropna()))))
                  for c in schema.categorical}
        edges = {}
        for c in schema.numeric:
            if c in schema.bounds:
                low, high = schema.bounds[c]
            else:
                values = numeric_values(population[[c]])[:, 0]
                low, high = (float(np.nanmin(values)), float(np.nanmax(values))) if np.isfinite(values).any() else (0, 1)
            edges[c] = np.linspace(low, high if high > low else low + 1.0, bins + 1)
        return cls(tuple(schema.numeric), tuple(schema.categorical), levels, edges,
                   GowerSpace.fit(population, schema), tuple(float(r) for r in radii))

    # -- names ----------------------------------------------------------------------------------

    def _encoding_names(self) -> list[str]:
        return list(self.numeric) + [f"{c}={level}" for c in self.categorical for level in self.levels[c]]

    def set_feature_names(self) -> list[str]:
        names = [f"naive:{c}:{s}" for c in self.numeric for s in ("mean", "median", "var")]
        names += [f"naive:{c}:{s}" for c in self.categorical for s in ("most", "least", "distinct")]
        names += [f"hist:{c}:bin{b}" for c in self.numeric for b in range(len(self.edges[c]) - 1)]
        names += [f"hist:{c}:missing" for c in self.numeric]
        names += [f"hist:{c}={level}" for c in self.categorical for level in self.levels[c]]
        names += [f"hist:{c}:other" for c in self.categorical]
        encoded = self._encoding_names()
        names += [f"corr:{encoded[i]}~{encoded[j]}" for i, j in zip(*np.triu_indices(len(encoded), 1), strict=True)]
        return names

    def target_feature_names(self) -> list[str]:
        return ["closest"] + [f"within:{r:g}" for r in self.radii]

    # -- values ---------------------------------------------------------------------------------

    def _codes(self, frame: pd.DataFrame, column: str) -> np.ndarray:
        """Positions in the column's level list; len(levels) for any other level or missing."""
        index = {level: k for k, level in enumerate(self.levels[column])}
        other = len(index)
        strings = category_strings(frame[column])
        return np.array([index.get(s, other) for s in strings], dtype=np.int64)

    def set_features(self, synthetic: pd.DataFrame) -> np.ndarray:
        """The naive, histogram and correlation features of one synthetic dataset, in the order of
        `set_feature_names`."""
        n = max(len(synthetic), 1)
        numbers = numeric_values(synthetic[list(self.numeric)]) if self.numeric else np.zeros((len(synthetic), 0))
        codes = {c: self._codes(synthetic, c) for c in self.categorical}
        counts = {c: np.bincount(codes[c], minlength=len(self.levels[c]) + 1) for c in self.categorical}
        naive, hist = [], []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column gives NaN, set to 0 below
            for k in range(numbers.shape[1]):
                naive += [np.nanmean(numbers[:, k]), np.nanmedian(numbers[:, k]), np.nanvar(numbers[:, k])]
        for c in self.categorical:
            present = np.flatnonzero(counts[c][:-1])
            if len(present):
                by_count = present[np.lexsort((present, -counts[c][present]))]  # most frequent, ties to lower
                naive += [by_count[0], by_count[-1], len(present)]
            else:
                naive += [-1, -1, 0]
        for k, c in enumerate(self.numeric):
            column, edges = numbers[:, k], self.edges[c]
            finite = column[~np.isnan(column)]
            cells = np.clip(np.searchsorted(edges, finite, side="right") - 1, 0, len(edges) - 2)
            hist += list(np.bincount(cells, minlength=len(edges) - 1) / n)
        hist += [np.isnan(numbers[:, k]).sum() / n for k in range(numbers.shape[1])]
        for c in self.categorical:
            hist += list(counts[c][:-1] / n)
        hist += [counts[c][-1] / n for c in self.categorical]
        return np.nan_to_num(np.concatenate([np.asarray(naive, dtype=float), np.asarray(hist, dtype=float),
                                             self._correlations(numbers, codes)]))

    def _correlations(self, numbers: np.ndarray, codes: dict[str, np.ndarray]) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nan_to_num(np.nanmean(numbers, axis=0)) if numbers.size else np.zeros(numbers.shape[1])
        filled = np.where(np.isnan(numbers), means, numbers)
        onehot = [(codes[c][:, None] == np.arange(len(self.levels[c]))[None, :]).astype(float)
                  for c in self.categorical]
        encoded = np.column_stack([filled] + onehot)
        width = encoded.shape[1]
        if len(encoded) < 2:
            return np.zeros(width * (width - 1) // 2)
        with np.errstate(all="ignore"):
            centred = encoded - encoded.mean(axis=0)
            scale = np.sqrt((centred ** 2).sum(axis=0))
            corr = (centred.T @ centred) / np.outer(scale, scale)
        upper = corr[np.triu_indices(width, 1)]
        return np.where(np.isfinite(upper), upper, 0.0)

    def query_feature_names(self) -> list[str]:
        columns = list(self.numeric) + list(self.categorical)
        pairs = [f"match:{a}&{b}" for i, a in enumerate(columns) for b in columns[i + 1:]]
        return [f"match:{c}" for c in columns] + pairs

    def _cells(self, frame: pd.DataFrame) -> np.ndarray:
        """(n, columns): each record's cell per column, numeric columns first (a bin, or -1 when
        missing; a level's position, or the `other` cell)."""
        cells = []
        if self.numeric:
            numbers = numeric_values(frame[list(self.numeric)])
            for k, c in enumerate(self.numeric):
                edges = self.edges[c]
                binned = np.clip(np.searchsorted(edges, numbers[:, k], side="right") - 1, 0, len(edges) - 2)
                cells.append(np.where(np.isnan(numbers[:, k]), -1, binned))
        cells += [self._codes(frame, c) for c in self.categorical]
        return np.column_stack(cells) if cells else np.zeros((len(frame), 0), dtype=np.int64)

    def query_features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """(n_targets, columns + column pairs): the share of synthetic records matching each target on
        each column and each pair of columns, in the order of `query_feature_names`."""
        width = len(self.numeric) + len(self.categorical)
        upper = np.triu_indices(width, 1)
        if len(synthetic) == 0:
            return np.zeros((len(targets), width + len(upper[0])))
        released, wanted = self._cells(synthetic), self._cells(targets)
        out = []
        for cells in wanted:
            match = (released == cells[None, :]).astype(float)
            both = (match.T @ match) / len(released)  # diagonal: one column; off it: both columns
            out.append(np.concatenate([np.diag(both), both[upper]]))
        return np.array(out)

    def target_features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """(n_targets, 1 + len(radii)): the closest synthetic record's Gower distance and the counts
        within each radius (module doc)."""
        if len(synthetic) == 0:
            return np.column_stack([np.ones(len(targets))] + [np.zeros(len(targets))] * len(self.radii))
        distance = gower_matrix(targets, synthetic, self.space)
        within = [(distance <= r + _TOLERANCE).sum(axis=1) for r in self.radii]
        return np.column_stack([distance.min(axis=1)] + within).astype(float)
