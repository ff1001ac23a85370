"""Linkability risk (Giomi et al. 2023, PoPETs; definitions as in anonymeter 1.1.0).

Why native: anonymeter 1.1.0 pins numpy < 2 and cannot be imported in synthrisk's environment;
this module re-implements its linkability evaluator from the paper and the library's documented
behaviour on synthrisk's exact Gower engine (synthrisk.mia.gower).

Scenario: the attacker holds two tables about the same people, one with the columns `cols_a` and
one with `cols_b` (the auxiliary columns, split in two), and uses the synthetic data to join them.
For each attacked record, its `cols_a` part and its `cols_b` part are each matched to their
`n_neighbors` nearest synthetic records (on those columns only); the attack succeeds when the two
neighbour sets share a synthetic record. main = share of attacked members linked; control = the
same attack on control records (never given to the generator); naive baseline = each part gets
`n_neighbors` synthetic records drawn at random. Attacked records are drawn at random without
replacement, min(n_attacks, size of the table) from each table.

Distance: Gower, as anonymeter's (L1 over numeric columns scaled by their range, plus one per
categorical mismatch); the ranges are taken over the synthetic records and the attacked records of
both tables together (anonymeter: synthetic and attacked records of the table being attacked), so
main and control are measured on one scale, and numeric differences are capped at 1. Missing
values follow synthrisk's Gower engine (a categorical missing value is a level of its own; two
missing numbers are at distance 0, a missing and a present one at 1), where anonymeter counts two
missing numbers as distance 1 and a missing against a present number as an undefined (NaN)
distance that sorts last.

Ties. Tables with few distinct values have many synthetic records at the same distance. Ties are
broken by one seeded random order of the synthetic records (the lowest position in it wins), the
same order for both parts and both tables: an attacker who resolves ties consistently. (anonymeter
keeps whichever tied record its unstable sort leaves first.)

The search is exact brute force, compiled and parallel over attacked records with early
abandoning against the k-th best distance (exact, like synthrisk.mia.gower's single-neighbour
search, which is used as is for n_neighbors = 1); memory is O((queries + synthetic) x columns).
Per-record output holds the attacked record's row_id, whether it is a member, and whether it was
linked: no data values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError
from ..mia.gower import GowerSpace, k_nearest
from ._inputs import (
    DEFAULT_N_ATTACKS,
    check_columns,
    check_confidence,
    check_positive_int,
    prepare_all,
    streams,
    sub_schema,
    targets,
)
from .risk import ControlRisk, record_control_risk


def default_aux_cols(schema: DatasetSchema) -> tuple[list[str], list[str]]:
    """The schema's quasi-identifiers in their order, split into a first half (the larger one when
    their number is odd) and a second half."""
    qi = list(schema.quasi_identifiers)
    if len(qi) < 2:
        raise ConfigError(f"aux_cols: not given, and schema {schema.origin} has {len(qi)} quasi-identifier(s) "
                          f"{qi}; linkability splits the attacker's columns into two tables, so it needs at "
                          "least 2 (give aux_cols=(cols_a, cols_b))")
    half = (len(qi) + 1) // 2
    return qi[:half], qi[half:]


def check_linkability(schema: DatasetSchema, aux_cols, n_attacks: int, n_neighbors: int,
                      confidence: float) -> tuple[list[str], list[str]]:
    """The settings' problems as a ConfigError naming the argument; the two column sets."""
    check_positive_int(n_attacks, "n_attacks")
    check_positive_int(n_neighbors, "n_neighbors")
    check_confidence(confidence)
    if aux_cols is None:
        return default_aux_cols(schema)
    if isinstance(aux_cols, str) or not hasattr(aux_cols, "__len__") or len(aux_cols) != 2:
        raise ConfigError(f"aux_cols: must be two lists of column names (cols_a, cols_b), got {aux_cols!r}")
    cols_a = check_columns(aux_cols[0], schema, "aux_cols[0]")
    cols_b = check_columns(aux_cols[1], schema, "aux_cols[1]")
    return cols_a, cols_b


@dataclass(frozen=True)
class LinkabilityResult:
    risk: ControlRisk
    aux_cols: tuple[tuple[str, ...], tuple[str, ...]]
    n_attacks: int
    n_members_attacked: int
    n_control_attacked: int
    n_neighbors: int
    seed: int
    n_synthetic: int
    #: one row per attacked record: row_id, member (True: members, False: control), linked
    records: pd.DataFrame = field(repr=False, compare=False)

    def to_json(self) -> dict:
        return {"attack": "linkability", **self.risk.to_json(), "aux_cols": [list(c) for c in self.aux_cols],
                "n_attacks": self.n_attacks, "n_members_attacked": self.n_members_attacked,
                "n_control_attacked": self.n_control_attacked, "n_neighbors": self.n_neighbors,
                "seed": self.seed, "n_synthetic": self.n_synthetic}


def _random_neighbours(rng: np.random.Generator, n: int, n_synthetic: int, k: int) -> np.ndarray:
    if k == 1:
        return rng.integers(0, n_synthetic, (n, 1))
    return np.array([rng.choice(n_synthetic, k, replace=False) for _ in range(n)]).reshape(n, k)


def _linked(index_a: np.ndarray, index_b: np.ndarray) -> np.ndarray:
    return (index_a[:, :, None] == index_b[:, None, :]).any(axis=(1, 2))


def linkability(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
                aux_cols: tuple[list[str], list[str]] | None = None, n_attacks: int = DEFAULT_N_ATTACKS,
                n_neighbors: int = 1, seed: int = 0, confidence: float = 0.95) -> LinkabilityResult:
    """Linkability risk of `synthetic` for `members`, measured against the `holdout` records as the
    control set (module docstring).

    `aux_cols`: (cols_a, cols_b); default: the schema's quasi-identifiers split in two halves in
    their order (`default_aux_cols`)."""
    cols_a, cols_b = check_linkability(schema, aux_cols, n_attacks, n_neighbors, confidence)
    members, member_ids, synthetic, holdout, control_ids = prepare_all(members, synthetic, holdout, schema)
    if n_neighbors > len(synthetic):
        raise ConfigError(f"n_neighbors: {n_neighbors} neighbours asked, but the synthetic data has only "
                          f"{len(synthetic)} record(s)")
    rng_main, rng_control, rng_baseline, rng_order = streams(seed, 4)
    main_pos = targets(len(members), n_attacks, rng_main)
    control_pos = targets(len(holdout), n_attacks, rng_control)
    attacked = {True: members.iloc[main_pos], False: holdout.iloc[control_pos]}
    order = rng_order.permutation(len(synthetic))
    shuffled = synthetic.iloc[order].reset_index(drop=True)
    reference = pd.concat([synthetic, attacked[True], attacked[False]], ignore_index=True)

    linked = {}
    for member, frame in attacked.items():
        neighbours = []
        for cols in (cols_a, cols_b):
            space = GowerSpace.fit(reference[cols], sub_schema(schema, cols))
            _, index = k_nearest(frame[cols], shuffled[cols], space, n_neighbors)
            neighbours.append(order[index])
        linked[member] = _linked(*neighbours)
    baseline = _linked(*(_random_neighbours(rng_baseline, len(main_pos), len(synthetic), n_neighbors)
                         for _ in range(2)))

    risk = record_control_risk(linked[True], linked[False], confidence, n_baseline_success=int(baseline.sum()),
                               n_baseline=len(main_pos))
    records = pd.DataFrame({ROW_ID: np.concatenate([member_ids[main_pos], control_ids[control_pos]]),
                            "member": np.r_[np.ones(len(main_pos), bool), np.zeros(len(control_pos), bool)],
                            "linked": np.concatenate([linked[True], linked[False]])})
    return LinkabilityResult(risk=risk, aux_cols=(tuple(cols_a), tuple(cols_b)), n_attacks=int(n_attacks),
                             n_members_attacked=len(main_pos), n_control_attacked=len(control_pos),
                             n_neighbors=int(n_neighbors), seed=int(seed), n_synthetic=len(synthetic),
                             records=records)
