"""A seeded sample of record positions, the one way the methods draw a subsample (a size cap, an
attack set, a control set): the first k of a seeded permutation, sorted so that the sample keeps the
file's order. The first k of one permutation make a smaller cap's sample part of a larger one's."""

from __future__ import annotations

import numpy as np


def sample_positions(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Sorted positions of `k` of `n` records drawn without replacement by `rng` (all `n` when k >= n)."""
    return np.sort(rng.permutation(n)[:int(k)])
