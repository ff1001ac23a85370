"""The shadow datasets, their membership matrix, and one generator fit per dataset.

One fit serves every target (the fit is the cost): shadow dataset j of a role (training datasets
drawn from the shadow pool, evaluation datasets from the evaluation pool) is `n_records` records
drawn without replacement from its pool, and every target is inserted into it or not according to
the role's membership matrix (datasets x targets), each inserted target replacing one drawn record,
so every dataset has exactly `n_records` rows.

The matrix is balanced per target: each target is in exactly floor(K / 2) of the role's K datasets,
chosen by a permutation of its own, independent of every other target's. Compared with inserting
each target with probability 1/2 per dataset this gives every classifier and every evaluation the
same number of "in" and "out" datasets, and leaves a target's membership independent of the others'.
The other targets in a dataset are background to a target (about half of them are in).

Seeds: the records of dataset j depend on (seed, role, j) only, so every generator is fitted on the
same datasets (paired comparison); the generator's seed (fit and sample: synthrisk.generators.run
uses one seed for both, as every generate job does) is a stable hash of (generator, role, j).
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError
from ..generators.run import run_generator

TRAIN, EVAL = "train", "eval"
ROLES = (TRAIN, EVAL)
#: seed-sequence words keeping the membership and the record draws of each role apart
_ROLE_WORD = {TRAIN: 11, EVAL: 12}
_MEMBERSHIP_STREAM, _RECORDS_STREAM = 1, 2


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ConfigError(f"shadow_mia: role must be one of {list(ROLES)}, got {role!r}")


def membership_matrix(n_datasets: int, n_targets: int, seed: int, role: str) -> np.ndarray:
    """(n_datasets, n_targets) of 0/1: whether each target is inserted into each dataset (module doc)."""
    _check_role(role)
    matrix = np.zeros((n_datasets, n_targets), dtype=np.int8)
    for t in range(n_targets):
        rng = np.random.default_rng([seed, _ROLE_WORD[role], _MEMBERSHIP_STREAM, t])
        matrix[rng.permutation(n_datasets)[: n_datasets // 2], t] = 1
    return matrix


def dataset_rows(pool: np.ndarray, targets: np.ndarray, membership: np.ndarray, n_records: int, seed: int,
                 role: str, index: int) -> np.ndarray:
    """Population positions of dataset `index` of `role`: `n_records` drawn from `pool`, the first
    ones replaced by the targets whose membership is 1 (the draw is in random order, so which drawn
    records give way is random too)."""
    _check_role(role)
    if n_records > len(pool):
        raise ConfigError(f"shadow_mia.n_shadow_records: {n_records} exceeds the {len(pool)} records of the "
                          f"{role} pool; lower it or give the dataset more holdout/aux records")
    rng = np.random.default_rng([seed, _ROLE_WORD[role], _RECORDS_STREAM, index])
    rows = rng.choice(pool, n_records, replace=False)
    inserted = targets[np.asarray(membership, dtype=bool)]
    if len(inserted) > n_records:
        raise ConfigError(f"shadow_mia.n_shadow_records: {n_records} is fewer than the {len(inserted)} targets "
                          "a dataset may hold")
    rows[: len(inserted)] = inserted
    return rows


def generator_seed(generator: str, role: str, index: int) -> int:
    """The fit and sample seed of one shadow dataset: stable across processes and Python versions."""
    _check_role(role)
    return zlib.crc32(f"{generator}/{role}/{index}".encode()) & 0x7FFFFFFF


def fit_shadow(name: str, spec: dict, data: pd.DataFrame, schema: DatasetSchema, seed: int,
               refit=run_generator) -> tuple[pd.DataFrame, dict]:
    """Fit on one shadow dataset and sample as many rows; never raises on a generator's failure or
    timeout (synthrisk.generators.run.run_generator: the status says what happened). `refit`: how the
    fit is run (`run_generator`'s signature: in this process, or `EnvironmentFits`)."""
    return refit(name, spec, data.reset_index(drop=True), schema, n=len(data), seed=seed)
