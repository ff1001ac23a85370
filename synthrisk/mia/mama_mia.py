"""MAMA-MIA on MST (Golob, Pentyala, Maratkhan & De Cock, "Privacy vulnerabilities in
marginals-based synthetic data", SaTML 2025; it won the first SNAKE challenge): a membership attack
that knows the generator was MST and uses what MST measures.

MST releases noisy two-way marginals on a tree of column pairs, and its records are sampled from a
model that matches them, so a record in the training data raises the release's count of its own
cells on those pairs. The attack:

1. **Focal points**: which pairs MST measures. MST's selection is random (noise), so it is run
   `runs` times on samples of the real records of the training set's size, with the same ε and
   domain (`MSTGenerator.select`, the generator's own first two rounds: no model is estimated,
   which is what makes this orders of magnitude cheaper than shadow modelling); pair m's weight
   w_m is the number of runs that selected it. A pair is kept when w_m >= f(ε) x the largest
   weight, f from the authors' code (`THRESHOLD_SHARES`: 0.5 below ε = 1, 0.6 to 10, 0.7 to 100,
   0.8 to 1000, 0.85 above).
2. **Score** of a record x: A(x) = (1/K) sum over the K kept pairs of w_m x S_m(x) / P_m(x), with
   S_m(x) the share of the release's records in x's cell of pair m and P_m(x) that share among the
   reference records: a weighted mean of per-marginal density ratios (DOMIAS's ratio, marginal by
   marginal), on MST's own codes (its public domain: levels, and `bins` equal-width bins of the
   bounds). Unsmoothed shares as the authors'; a cell missing from either frame counts 1e-10.
   The score reads column sets of any size on any coding (`scores`), so the PrivBayes attack
   (`mama_mia_privbayes`: child-and-parents sets on exact values) shares it.

Written from the paper's description and the authors' scoring code as read
(docs/methods/mama-mia.md); their MST is reprosyn's (exponential-mechanism tree, δ = 1e-9), ours is synthrisk's
(Gaussian scores, deterministic tree of the noisy scores), so focal points differ: not a replication.

In the audit the reference records are the members, the holdout and the auxiliary records pooled
(the paper's "overlapping aux"), and the focal-point samples are drawn from them too: every step is
a symmetric function of the pooled records, so when the release never saw the members, members and
holdout records are exchangeable in their scores, and the conformal p-values against the holdout
(`exposure.judge_scores`) are exact.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError

#: the share of the largest weight a focal point needs, by the least ε of its band (the authors' code)
THRESHOLD_SHARES = {0.01: 0.5, 1.0: 0.6, 10.0: 0.7, 100.0: 0.8, 1000.0: 0.85}
#: a cell missing from the release or the reference counts this share (the authors' floor)
FLOOR = 1e-10
#: MST selections that find the focal points (the authors' code used 50; each is the generator's first
#: two rounds, milliseconds: no model is estimated)
FOCAL_RUNS = 50


def threshold_share(epsilon: float) -> float:
    """f(ε): the share of the largest weight a pair needs to be a focal point."""
    bands = [e for e in sorted(THRESHOLD_SHARES) if e <= epsilon]
    return THRESHOLD_SHARES[bands[-1]] if bands else THRESHOLD_SHARES[min(THRESHOLD_SHARES)]


def mst_of(spec: dict, seed: int):
    """The MST generator of a config entry, refused when the entry is not MST's."""
    from ..generators.base import make_generator
    from ..generators.mst import MSTGenerator

    generator = make_generator(spec, seed=seed, name=str(spec.get("backend")))
    if not isinstance(generator, MSTGenerator):
        raise ConfigError(f"MAMA-MIA: the generator in hand is {spec.get('backend')!r}; the attack knows MST only")
    return generator


def focal_points(spec: dict, records: pd.DataFrame, schema: DatasetSchema, n: int, runs: int,
                 seed: int) -> Counter:
    """How many of `runs` MST selections, each on `n` records drawn from `records`, chose each pair
    (sorted column names)."""
    from ..generators.base import with_noise_seed

    # The selections are the auditor's simulations, not releases: their noise is seeded, so that the
    # same files give the same focal points.
    spec = with_noise_seed(spec, seed)
    rng = np.random.default_rng([seed, 0x3A3A])
    weights: Counter = Counter()
    for run in range(runs):
        sample = records.iloc[rng.choice(len(records), size=min(n, len(records)), replace=False)]
        run_seed = int(np.random.SeedSequence([seed, run]).generate_state(1)[0])
        tree = mst_of(spec, seed=run_seed).select(sample.reset_index(drop=True), schema)
        weights.update(tuple(sorted(edge)) for edge in tree)
    return weights


def in_canonical_order(records: pd.DataFrame) -> pd.DataFrame:
    """The records sorted by a hash of their values (identical records keep their order, and are
    interchangeable). The focal-point samples are drawn by position, so drawn from this order they
    depend on the pooled records as a set, not on which of them are members: every step of the
    attack is then a symmetric function of the pool, which the conformal p-values' exactness needs."""
    order = np.argsort(pd.util.hash_pandas_object(records, index=False).to_numpy(), kind="stable")
    return records.iloc[order].reset_index(drop=True)


def kept(weights: Counter, epsilon: float) -> dict[tuple[str, str], int]:
    """The focal points: the pairs whose weight reaches f(ε) x the largest."""
    if not weights:
        return {}
    least = threshold_share(epsilon) * max(weights.values())
    return {pair: w for pair, w in sorted(weights.items()) if w >= least}


def set_cells(codes: list[dict[str, np.ndarray]], columns: tuple[str, ...]) -> list[np.ndarray]:
    """Each frame's cell of the attribute set `columns`, numbered over the frames together; `codes`:
    each frame's {column: integer codes} on the generator's own domain."""
    stacked = np.concatenate([np.column_stack([frame[c] for c in columns]) for frame in codes])
    _, cells = np.unique(stacked, axis=0, return_inverse=True)
    sizes = [len(frame[columns[0]]) for frame in codes]
    return np.split(cells.reshape(-1), np.cumsum(sizes)[:-1])


def scores(wanted: dict, released: dict, reference: dict, focal: dict[tuple[str, ...], int]) -> np.ndarray:
    """A(x) of every record of `wanted` (module doc) against the release and the reference records,
    each given as its codes {column: integers} on the generator's domain (`mst_codes`; for PrivBayes
    `mama_mia_privbayes.value_codes`); a focal point is a set of columns of any size."""
    total = np.zeros(len(next(iter(wanted.values()))) if wanted else 0)
    for columns, weight in focal.items():
        mine, theirs, population = set_cells([wanted, released, reference], columns)
        size = 1 + max(int(c.max(initial=-1)) for c in (mine, theirs, population))
        share_release = np.bincount(theirs, minlength=size) / max(len(theirs), 1)
        share_reference = np.bincount(population, minlength=size) / max(len(population), 1)
        total += weight * np.maximum(share_release[mine], FLOOR) / np.maximum(share_reference[mine], FLOOR)
    return total / max(len(focal), 1)


def mst_codes(frame: pd.DataFrame, columns: dict) -> dict[str, np.ndarray]:
    """A frame's codes on MST's domain `columns` (name -> MSTColumn)."""
    return {c: col.encode(frame[c]) for c, col in columns.items()}


def is_mst(spec: dict) -> bool:
    """Whether a config entry's backend is MST (or a subclass of synthrisk's MST)."""
    from ..generators.base import generator_class
    from ..generators.mst import MSTGenerator

    try:
        return issubclass(generator_class(spec.get("backend")), MSTGenerator)
    except ConfigError:
        return False
