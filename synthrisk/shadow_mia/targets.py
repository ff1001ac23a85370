"""The attacker's population, the target records and the two pools the shadow datasets come from.

The population is the records of one dataset's split that the generator pipeline never trained on
(holdout and aux; synthrisk.data.split). Every record keeps where it came from (`file`, `row`: its
position in that split file) and its `row_id` (its row in real.parquet), so outputs name records by
id and never by value.

Targets (Meeus, Guépin, Creţu & de Montjoye, "Achilles' Heels", ESORICS 2023): each record's
vulnerability is its mean distance to its k = 5 nearest other records of the population. Meeus et
al. use a cosine distance on one-hot categoricals and min-max scaled numerics; here the distance is
Gower's (synthrisk.mia's exact search, ranges from the population), the distance every other
synthrisk attack uses on mixed records: an adaptation, so the ranking may differ from theirs. The `n_outliers` highest are the
outlier targets, then `n_random` of the rest drawn uniformly are the random targets (reported
apart: they say what an average record risks). Every other record goes to one of two disjoint
pools of equal size: the shadow pool, from which the classifier's training datasets are drawn, and
the evaluation pool, for fresh datasets that judge it. No target is in either pool, so a target is
in a shadow dataset only when the design inserts it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError, DataError
from ..mia.gower import GowerSpace, nearest_others

OUTLIER, RANDOM = "outlier", "random"
SHADOW, EVALUATION, TARGET = "shadow", "eval", "target"
#: numpy seed-sequence words that keep the draws of this module apart from each other
RANDOM_TARGETS_STREAM, POOLS_STREAM = 1, 2


def population(frames: dict[str, pd.DataFrame], row_id: str = "row_id") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(records, ids): the split files' records one after the other (in the dict's order) and, per
    record, file, row (position in its file) and row_id."""
    parts, ids = [], []
    for name, frame in frames.items():
        if row_id not in frame.columns:
            raise DataError(f"{name}: has no {row_id!r} column; the population is read from the split files")
        parts.append(frame.drop(columns=row_id))
        ids.append(pd.DataFrame({"file": name, "row": np.arange(len(frame)), "row_id": frame[row_id].to_numpy()}))
    records = pd.concat(parts, ignore_index=True)
    return records, pd.concat(ids, ignore_index=True)


def vulnerability_scores(records: pd.DataFrame, schema: DatasetSchema, k: int) -> np.ndarray:
    """Per record, the mean Gower distance to its k nearest other records (Meeus et al.'s score)."""
    if len(records) <= k:
        raise DataError(f"shadow_mia: the population has {len(records)} records; the vulnerability score needs "
                        f"more than k = {k}")
    return nearest_others(records, GowerSpace.fit(records, schema), k).mean(axis=1)


def choose_targets(scores: np.ndarray, n_outliers: int, n_random: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(outlier positions, random positions): the highest scores (ties to the lower position), then
    `n_random` drawn uniformly from the remaining records."""
    if n_outliers + n_random > len(scores):
        raise ConfigError(f"shadow_mia: n_outliers + n_random = {n_outliers + n_random} exceeds the "
                          f"{len(scores)} records of the population")
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores)))  # descending score, then position
    outliers = order[:n_outliers]
    rest = np.setdiff1d(np.arange(len(scores)), outliers)
    rng = np.random.default_rng([seed, RANDOM_TARGETS_STREAM])
    random = np.sort(rng.choice(rest, n_random, replace=False)) if n_random else rest[:0]
    return outliers, random


def plan(frames: dict[str, pd.DataFrame], schema: DatasetSchema, n_outliers: int, n_random: int, k: int,
         seed: int) -> pd.DataFrame:
    """One row per population record: file, row, row_id, vulnerability, pool (target | shadow | eval),
    and for targets their number `target` (outliers first, by score) and `kind` (outlier | random)."""
    records, ids = population(frames)
    scores = vulnerability_scores(records, schema, k)
    outliers, random = choose_targets(scores, n_outliers, n_random, seed)
    out = ids.assign(vulnerability=scores, pool=None, target=-1, kind=None)
    targets = np.concatenate([outliers, random])
    out.loc[targets, "pool"] = TARGET
    out.loc[targets, "target"] = np.arange(len(targets))
    out.loc[outliers, "kind"] = OUTLIER
    out.loc[random, "kind"] = RANDOM
    rest = np.setdiff1d(np.arange(len(out)), targets)
    shuffled = np.random.default_rng([seed, POOLS_STREAM]).permutation(rest)
    half = len(shuffled) // 2
    out.loc[np.sort(shuffled[:half]), "pool"] = SHADOW
    out.loc[np.sort(shuffled[half:]), "pool"] = EVALUATION
    return out


def targets_of(plan_frame: pd.DataFrame) -> pd.DataFrame:
    """The plan's targets, in target order."""
    return plan_frame[plan_frame["pool"] == TARGET].sort_values("target")


def pool_positions(plan_frame: pd.DataFrame, pool: str) -> np.ndarray:
    """Population positions of a pool, ascending."""
    return np.flatnonzero((plan_frame["pool"] == pool).to_numpy())
