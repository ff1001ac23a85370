"""The audit's test statistic for marginal-based generators: the canary's cell counts in the
synthetic data's one- and two-way marginals, summed.

Why this statistic. A marginal-based generator (MST; AIM and PrivBayes alike) releases noisy counts
of low-order marginals and samples from a model fitted to them. The canary reaches the output only
through the +1 it adds to its own cell of every marginal that is measured; its values are the
rarest the public domain offers, so those cells are (near) empty without it. The synthetic data's
count of records in the canary's cell of a marginal is the generator's noisy, model-smoothed
estimate of that cell; summing over the one-way marginals and all the pairs gathers the evidence of
every marginal MST measures (all one-way ones and those on its tree, which the attacker does not
need to know: the other pairs add little). Equivalently: a synthetic record matching the canary in
m columns counts m + m (m - 1) / 2 times. It needs only the synthetic data, so it audits any
generator over the same discretised domain.

Why not only exact copies of the canary (Stadler et al. 2022's naive feature): with the noise of a
correct release the model spreads mass over every empty cell, so the canary's full cell ends up
with about nothing in either world, and even a badly under-noised MST rarely samples a full copy
(measured in docs/methods/epsilon-audit.md). It is not the optimal test either: it ignores the -1 the
replaced record leaves and MST's tree-selection round, and sampling adds noise (a larger
n_synthetic removes some). A weaker test only makes epsilon_lower smaller, never wrong: the bound
holds for any test fixed before the evaluation runs.
"""

from __future__ import annotations

import pandas as pd

from .canary import Canary, matching_cells

#: the marginal orders summed: MST measures one- and two-way marginals
MARGINAL_ORDERS = (1, 2)


def canary_cell_count(synthetic: pd.DataFrame, canary: Canary, schema) -> int:
    """Sum over the one- and two-way marginals of the synthetic records in the canary's cell."""
    m = matching_cells(synthetic[list(canary.cells)], canary, schema)
    return int((m + m * (m - 1) // 2).sum())


def focal_cell_count(synthetic: pd.DataFrame, canary: Canary, schema, focal: dict[tuple[str, str], int]) -> int:
    """MAMA-MIA's evidence as a test statistic (synthrisk.mia.mama_mia): the synthetic records in the
    canary's cell of each focal pair (the pairs MST selects often, found by its selection rounds on
    the data without the canary), weighted by how often it was selected. For one fixed canary the
    score's reference shares are constants, and for the worst-case canary they are zero; so they are
    dropped (the authors' floor of 1e-10 would make one pair dominate), and the one-way marginals,
    which MAMA-MIA does not read, are left out: the statistic tests whether knowing MST's tree
    sharpens the count of `canary_cell_count`."""
    domain = canary.domain(schema, synthetic.columns)
    hits = {c: domain[c].encode(synthetic[c]) == canary.cells[c] for c in canary.cells}
    return int(sum(weight * int((hits[a] & hits[b]).sum()) for (a, b), weight in focal.items()))
