"""The audit's test statistics for marginal-based generators, read from the canary's cell counts in
the synthetic data's one- and two-way marginals.

Each fit leaves one count per marginal (`marginal_counts`: the synthetic records in the canary's
cell of each column, and of each pair of columns); a statistic combines them into one number. Two
are offered, and a table states which one each bound comes from.

**The canary's cells** (`canary_cells`, the audit's first statistic): the counts summed. A
marginal-based generator (MST; AIM and PrivBayes alike) releases noisy counts of low-order
marginals and samples from a model fitted to them. The canary reaches the output only through the
+1 it adds to its own cell of every marginal that is measured; its values are the rarest the public
domain offers, so those cells are (near) empty without it. The synthetic data's count of records in
the canary's cell of a marginal is the generator's noisy, model-smoothed estimate of that cell;
summing over the one-way marginals and all the pairs gathers the evidence of every marginal MST
measures (all one-way ones and those on its tree, which this statistic does not need to know).
Equivalently: a synthetic record matching the canary in m columns counts m + m (m - 1) / 2 times.
It needs only the synthetic data, so it audits any generator over the same discretised domain.

**After MAMA-MIA** (`mama_mia`, for MST only; synthrisk.mia.mama_mia): the knowledge of the attack
that knows the generator, read as a test statistic. MAMA-MIA scores a record on the pairs MST
measures (its focal points: the pairs MST's selection rounds choose often on the data without the
canary), each weighted by the rounds that chose it, by a weighted mean of density ratios S_m / P_m.
Two departures of ours, so the statistic is "after MAMA-MIA", not the authors' score:
- it adds the one-way marginals, which MST's first round measures, every one of them, with the full
  weight (the number of rounds); MAMA-MIA's score for MST reads the focal pairs only;
- it sums w_m log(1 + count_m) instead of averaging the ratios. For one canary the reference share
  P_m is a constant of the data per marginal (zero where the canary's cell is empty), so the ratio
  is the release's share over a constant; the counts are zero-inflated and heavy-tailed (a fitted
  model either puts a lump of mass in the canary's pair cell or none), so a mean of ratios is
  decided by its largest term, while a sum of logs (the form a likelihood ratio over separately
  measured marginals takes) weighs every marginal's evidence.
This form was chosen on 8,000 exploratory fits per world of MST at epsilon 10 (the mean of ratios on
the focal pairs, log, indicator and square-root forms on the pairs and on the measured marginals,
compared by the best log(TPR / FPR) of each); its bounds are measured on fresh fits
(docs/methods/epsilon-audit.md).

Why not only exact copies of the canary (Stadler et al. 2022's naive feature): with the noise of a
correct release the model spreads mass over every empty cell, so the canary's full cell ends up
with about nothing in either world, and even a badly under-noised MST rarely samples a full copy
(measured in docs/methods/epsilon-audit.md). Neither statistic is the optimal test: both ignore the -1
the replaced record leaves, and sampling adds noise (a larger n_synthetic removes some). A weaker
test only makes epsilon_lower smaller, never wrong: the bound holds for any test fixed before the
evaluation runs, and both are (MAMA-MIA's focal points are found on the data without the canary).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..errors import ConfigError
from .canary import Canary

#: the marginal orders counted: MST measures one- and two-way marginals
MARGINAL_ORDERS = (1, 2)
CANARY_CELLS, MAMA_MIA = "canary_cells", "mama_mia"
#: joins the two columns of a pair's name
SEPARATOR = "&"
#: the statistics, each as the tables name it
STATISTICS = {CANARY_CELLS: "canary cells", MAMA_MIA: "after MAMA-MIA"}
#: the seed of the MST selection rounds that find MAMA-MIA's focal points (the auditor's simulation,
#: seeded so that the same data give the same focal points)
FOCAL_SEED = 0


def marginal_name(columns) -> str:
    """A marginal's name in the counts' tables: its columns sorted and joined by '&' (one column: its
    name), whatever order the data hold them in, as MAMA-MIA's focal points name their pairs."""
    return SEPARATOR.join(sorted(columns))


def marginals(columns) -> list[str]:
    """The names of the one- and two-way marginals of `columns`: the columns, then their pairs."""
    bad = [c for c in columns if SEPARATOR in str(c)]
    if bad:
        raise ConfigError(f"privacy audit: column names {bad} hold {SEPARATOR!r}, which names the marginals' pairs")
    return [*columns, *(marginal_name(pair) for pair in itertools.combinations(columns, 2))]


def marginal_counts(synthetic: pd.DataFrame, canary: Canary, schema) -> dict[str, int]:
    """The synthetic records in the canary's cell of every one- and two-way marginal of the canary's
    columns, by marginal name (`marginals`)."""
    columns = list(canary.cells)
    names = marginals(columns)
    domain = canary.domain(schema, columns)
    hits = [domain[c].encode(synthetic[c]) == canary.cells[c] for c in columns]
    # `marginals` lists the columns, then their pairs in this order
    cells = [*hits, *(a & b for a, b in itertools.combinations(hits, 2))]
    return {name: int(cell.sum()) for name, cell in zip(names, cells, strict=True)}


def canary_cell_count(synthetic: pd.DataFrame, canary: Canary, schema) -> int:
    """The canary's cells (module doc) of one synthetic table."""
    return sum(marginal_counts(synthetic, canary, schema).values())


def focal_weights(spec: dict, data: pd.DataFrame, schema, runs: int | None = None,
                  seed: int = FOCAL_SEED) -> dict[str, int]:
    """The weight, after MAMA-MIA, of every marginal MST measures (module doc), found with `runs` of MST's
    selection rounds on `data`, the world without the canary: marginal name -> weight."""
    from ..mia.mama_mia import FOCAL_RUNS, focal_points, kept, mst_of

    runs = FOCAL_RUNS if runs is None else int(runs)
    pairs = kept(focal_points(spec, data, schema, len(data), runs, seed), mst_of(spec, seed=seed).epsilon)
    return {**{c: runs for c in data.columns}, **{marginal_name(pair): w for pair, w in pairs.items()}}


def statistic_values(counts: pd.DataFrame, statistic: str, weights: dict[str, int] | None = None) -> np.ndarray:
    """Each run's statistic from its marginal counts (one row per run, a column per marginal, as
    `marginal_counts` names them; other columns are ignored). MAMA-MIA needs its `weights`."""
    names = [c for c in counts.columns if c != "run"]
    if counts[names].isna().any().any():
        raise ConfigError("privacy audit: some runs lack a marginal's count (blocks of different formats?); "
                          "rerun the audit's blocks")
    if statistic == CANARY_CELLS:
        return counts[names].sum(axis=1).to_numpy(dtype=float)
    if statistic == MAMA_MIA:
        if not weights:
            raise ConfigError("privacy audit: the MAMA-MIA statistic needs the focal points' weights")
        missing = sorted(set(weights) - set(counts.columns))
        if missing:
            raise ConfigError(f"privacy audit: the counts lack the marginals {missing} that MAMA-MIA weighs")
        return sum(w * np.log1p(counts[name].to_numpy(dtype=float)) for name, w in weights.items())
    raise ConfigError(f"privacy audit: statistic must be one of {sorted(STATISTICS)}, got {statistic!r}")
