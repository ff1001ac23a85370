"""Shadow-model membership inference on one release, with the generator in hand (the steward's
audit: `synthrisk audit --generator`).

The steward has the generator that made the release, the members it was fitted on and records it
never saw. The attack (Stadler, Oprisanu & Troncoso 2022; TAPAS, Houssiau et al. 2022) asks of
each target record whether the release was fitted on it:

- **Targets**: the `n_outliers` most vulnerable of the members and holdout records pooled (Meeus et
  al.'s score, `targets.vulnerability_scores`, over those and the auxiliary records), then
  `n_random` drawn from the rest of them. The choice never reads who is a member, so when the
  release never saw the members, member targets and holdout targets are exchangeable.
- **Shadow datasets**: drawn from every record that is not a target (members, holdout and auxiliary
  records: the steward has them all, and the pool never depends on which targets are members);
  each target is in half of them (`shadow.membership_matrix`, an inserted target replacing a drawn
  record, so every dataset has the same size). One generator fit serves every target. A dataset
  has as many records as the members, or half the pool when that is fewer, so that the background
  changes from dataset to dataset (a classifier trained on one background would learn it); the
  result states the size. The size matters: the release's features (its distances to a target, its
  shares) are read against refits of training sets of about its own size.
- **Per target**, a forest learns membership from the training datasets' features
  (`features.FeatureMap`) and is judged on fresh evaluation datasets: the target's vulnerability
  under this generator, AUC and TPR at each FPR with intervals (`attack.attack_target`).
- **The release**: each target's forest scores the release; its p-value is how often an evaluation
  dataset fitted without the target scores at least as high. Valid for that target only as far as
  the shadow datasets resemble the release's training data, so the verdict does not rest on it alone:
- **Release-level test**: the member targets' p-values against the holdout targets' (AUC of
  "member" on the p-value, low first; Hanley-McNeil interval), with a permutation p-value
  (`PERMUTATIONS` relabellings of the targets, seeded): exact when the release never saw the
  members, however unlike the release the shadow datasets are, because every step treats member
  and holdout targets alike. The candidates are put in a seeded random order before anything is
  chosen, so that no tie (vulnerability scores tie often on categorical data) is broken by which
  file a record came from.
- **Nobody is named**: a conformal p-value against H holdout targets is at least 1 / (H + 1), so
  Benjamini-Hochberg at the policy's rate (0.045) over about 40 member targets against 40 holdout
  targets could name anyone only if some 22 of them had the smallest p-value at once. The
  per-person reading is the table of targets: each one's vulnerability under the generator, and
  the release's p-value.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import ConfigError, DataError
from ..generators.memory import BetweenFits
from ..io import finite_or_null
from ..mia.metrics import auc_against_chance
from ..stats.proportions import clopper_pearson
from .attack import CONFIDENCE, attack_target
from .features import BINS, RADII, FeatureMap
from .shadow import EVAL, ROLES, TRAIN, dataset_rows, fit_shadow, generator_seed, membership_matrix
from .targets import OUTLIER, RANDOM, choose_targets, vulnerability_scores

MEMBERS, HOLDOUT = "train", "holdout"
#: the FPRs of the per-target TPRs (the issue's 0.1, 1 and 10 %)
FPRS = (0.1, 0.01, 0.001)
#: relabellings of the targets in the release-level permutation test
PERMUTATIONS = 9999
ATTACK_RULE = ("per target: a forest on the shadow releases' features; the release's p-value against the "
               "evaluation releases fitted without the target; member targets against holdout targets")


@dataclass(frozen=True)
class Budget:
    """What the shadow fits cost and buy."""

    shadow_datasets: int
    eval_datasets: int
    records_per_dataset: int
    reference: str

    @property
    def fits(self) -> int:
        return self.shadow_datasets + self.eval_datasets

    def smallest_tpr(self, fpr: float = 0.01, confidence: float = CONFIDENCE) -> float | None:
        """The smallest TPR at `fpr` the evaluation datasets tell from chance: the least share of the
        "in" datasets whose Clopper-Pearson lower end lies above `fpr`; None when `fpr` is below one
        "out" dataset (the threshold cannot be set)."""
        n_in, n_out = self.eval_datasets // 2, self.eval_datasets - self.eval_datasets // 2
        if math.floor(fpr * n_out + 1e-9) < 1 or math.floor(fpr * (self.shadow_datasets // 2) + 1e-9) < 1:
            return None
        for hits in range(n_in + 1):
            if clopper_pearson(hits, n_in, confidence)[0] > fpr:
                return hits / n_in
        return None


@dataclass(frozen=True)
class ShadowRelease:
    """The attack on one release: the release-level AUC of member targets against holdout targets
    with its test and interval, the budget, and per target its vulnerability and the release's
    p-value (`records`)."""

    generator: str
    auc: float
    auc_p_value: float
    auc_ci_low: float
    auc_ci_high: float
    n_member_targets: int
    n_holdout_targets: int
    budget: Budget
    fits_failed: int
    seconds: float
    fprs: tuple
    records: pd.DataFrame = field(repr=False)

    def to_json(self) -> dict:
        measured = self.records[self.records["auc"].notna()]
        members = measured[measured["member"] == 1]
        return {
            "refitted": self.generator, "auc": self.auc, "auc_p_value": self.auc_p_value,
            "auc_ci_low": self.auc_ci_low, "auc_ci_high": self.auc_ci_high,
            "n_member_targets": self.n_member_targets, "n_holdout_targets": self.n_holdout_targets,
            "permutations": PERMUTATIONS,
            "fits": self.budget.fits, "fits_failed": self.fits_failed, "shadow_datasets": self.budget.shadow_datasets,
            "eval_datasets": self.budget.eval_datasets, "records_per_dataset": self.budget.records_per_dataset,
            "reference": self.budget.reference, "seconds": self.seconds,
            "smallest_tpr_at_1e-02": self.budget.smallest_tpr(0.01),
            "targets_above_chance": int(measured["above_chance"].astype(bool).sum()),
            "member_targets_above_chance": int(members["above_chance"].astype(bool).sum()),
            "median_target_auc": float(measured["auc"].median()) if len(measured) else None,
            "fprs": list(self.fprs), "rule": ATTACK_RULE,
            "targets": finite_or_null(self.records.to_dict("records")),
        }


def _records(frame: pd.DataFrame, schema: DatasetSchema) -> pd.DataFrame:
    return frame[list(schema.columns)].reset_index(drop=True)



@dataclass(frozen=True)
class Targets:
    """The members and holdout records pooled in a seeded order that never reads the labels (every
    tie below is broken by it), the auxiliary records after them, and the targets chosen among the
    pooled records: `n_outliers` by vulnerability, then the random ones."""

    population: pd.DataFrame   # the pooled records, then the auxiliary ones
    label: np.ndarray          # per pooled record: 1 member, 0 holdout
    row_ids: np.ndarray
    file_rows: np.ndarray      # the record's row in its own file
    scores: np.ndarray         # per pooled record: its vulnerability
    targets: np.ndarray        # positions in `population`, the outliers first
    n_outliers: int


def release_targets(members: pd.DataFrame, holdout: pd.DataFrame | None, schema: DatasetSchema,
                    aux: pd.DataFrame | None, seed: int, n_outliers: int, n_random: int,
                    neighbours: int) -> Targets:
    """The targets of the attack (module doc), with members and holdout targets both present."""
    if holdout is None or len(holdout) == 0:
        raise DataError("shadow models: need holdout records (records the generator never saw)")
    order = np.random.default_rng([seed, 0x5EED]).permutation(len(members) + len(holdout))
    candidates = pd.concat([_records(members, schema), _records(holdout, schema)], ignore_index=True).iloc[order]
    candidates = candidates.reset_index(drop=True)
    label = np.r_[np.ones(len(members), dtype=int), np.zeros(len(holdout), dtype=int)][order]
    if n_outliers + n_random > len(candidates):
        raise ConfigError(f"shadow models: n_outliers + n_random = {n_outliers + n_random} targets, but the members "
                          f"and holdout hold {len(candidates)} records")
    has_aux = aux is not None and len(aux) > 0
    population = pd.concat([candidates] + ([_records(aux, schema)] if has_aux else []), ignore_index=True)
    scores = vulnerability_scores(population, schema, neighbours)[: len(candidates)]
    outliers, random = choose_targets(scores, n_outliers, n_random, seed)
    targets = np.concatenate([outliers, random])
    chosen = label[targets]
    if chosen.all() or not chosen.any():
        raise DataError(f"shadow models: the {len(targets)} targets hold {int(chosen.sum())} member(s) and "
                        f"{int((1 - chosen).sum())} holdout record(s); the release-level test needs both (ask for "
                        "more targets)")
    return Targets(population, label, np.concatenate([row_ids(members), row_ids(holdout)])[order],
                   np.r_[np.arange(len(members)), np.arange(len(holdout))][order], scores, targets, len(outliers))


def attack_release(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *, schema: DatasetSchema,
                   spec: dict, name: str | None = None, aux: pd.DataFrame | None = None, seed: int = 0,
                   n_outliers: int = 40, n_random: int = 40, neighbours: int = 5, shadow_datasets: int = 200,
                   eval_datasets: int = 200, bins: int = BINS, radii=RADII, n_trees: int = 100, fprs=FPRS,
                   confidence: float = CONFIDENCE,
                   progress: Callable[[int, int], None] | None = None, refit=None) -> ShadowRelease:
    """The attack of the module doc on typed frames (with `row_id` columns). `spec`: the generator's
    config entry ({backend: ..., params: ...}); `progress(done, total)` before the first refit and
    after each; `refit`: how a fit is run (`generators.run.run_generator`'s signature; default: in
    this process)."""
    from ..generators.base import with_noise_seed
    from ..generators.run import run_generator

    refit = refit or run_generator

    start = time.perf_counter()
    name = name or str(spec.get("backend"))
    # The refits are the auditor's simulations, not releases: a DP generator's noise is seeded so that
    # the same files give the same audit.
    spec = with_noise_seed(spec, seed)
    chosen = release_targets(members, holdout, schema, aux, seed, n_outliers, n_random, neighbours)
    population, targets, label = chosen.population, chosen.targets, chosen.label
    has_aux = len(population) > len(label)
    pool = np.setdiff1d(np.arange(len(population)), targets)
    reference = "the members, holdout" + (" and auxiliary" if has_aux else "") + " records that are not targets"
    size = min(len(members), len(pool) // 2)
    if size < len(targets):
        raise DataError(f"shadow models: a shadow dataset would hold {size} records ({reference}: {len(pool)}), "
                        f"fewer than the {len(targets)} targets half of which it holds; give more --aux or "
                        "holdout records, or fewer targets")
    budget = Budget(shadow_datasets, eval_datasets, size, reference)
    feature_map = FeatureMap.fit(schema, population, bins, radii)
    target_records = population.iloc[targets].reset_index(drop=True)

    def features(frame: pd.DataFrame) -> np.ndarray:
        """(n_targets, width): each target's neighbourhood and query features. Not the set features:
        thousands of them (every correlation of the one-hot encoding) leave the forest few splits on
        the target's own, and they describe the shadow datasets' background, which is the reference
        records' and not the members' the release was fitted on."""
        return np.column_stack([feature_map.target_features(frame, target_records),
                                feature_map.query_features(frame, target_records)])

    rows, done, failed = {}, 0, 0
    memory = BetweenFits()
    if progress is not None:
        progress(0, shadow_datasets + eval_datasets)
    for role in ROLES:
        count = shadow_datasets if role == TRAIN else eval_datasets
        membership = membership_matrix(count, len(targets), seed, role)
        kept = []
        for j in range(count):
            positions = dataset_rows(pool, targets, membership[j], size, seed, role, j)
            synthetic_j, status = fit_shadow(name, spec, population.iloc[positions], schema,
                                             generator_seed(name, role, j) + seed, refit)
            done += 1
            try:
                if status["status"] != "ok" or not len(synthetic_j):
                    raise DataError(status.get("error") or "an empty release")
                kept.append((features(schema.conform(_records(synthetic_j, schema), what=f"shadow release {j}")),
                             membership[j]))
            except Exception:  # noqa: BLE001 - a failed fit or unreadable release is counted, the rest go on
                failed += 1
            del synthetic_j
            memory.collect()
            if progress is not None:
                progress(done, shadow_datasets + eval_datasets)
        rows[role] = kept
    if not rows[TRAIN] or not rows[EVAL]:
        raise DataError(f"shadow models: every shadow fit of {name!r} failed ({failed} of {budget.fits}); "
                        "the generator cannot be refitted on the reference records")
    release = features(_records(synthetic, schema))
    per_target = []
    for t in range(len(targets)):
        train_x = np.array([x[t] for x, _ in rows[TRAIN]])
        train_y = np.array([m[t] for _, m in rows[TRAIN]])
        eval_x = np.array([x[t] for x, _ in rows[EVAL]])
        eval_y = np.array([m[t] for _, m in rows[EVAL]])
        result = attack_target(train_x, train_y, eval_x, eval_y, n_trees, seed, fprs, confidence, release_x=release[t])
        position = targets[t]
        per_target.append({ROW_ID: chosen.row_ids[position], "member": int(label[position]),
                           "file": MEMBERS if label[position] else HOLDOUT, "row": int(chosen.file_rows[position]),
                           "kind": OUTLIER if t < chosen.n_outliers else RANDOM,
                           "vulnerability": float(chosen.scores[position]), **result})
    records = pd.DataFrame(per_target).sort_values(["member", "file", "row"], ascending=[False, True, True])
    return _release_test(records.reset_index(drop=True), name, budget, failed, time.perf_counter() - start,
                         tuple(fprs), seed)


def permutation_auc(member_scores, holdout_scores, permutations: int, seed: int) -> tuple[float, float]:
    """(AUC, one-sided permutation p-value) of members scoring above the holdout, ties counting 1/2:
    p = (1 + #{relabellings with an AUC at least the observed}) / (1 + permutations), valid at any
    size and with ties (the normal approximation is not, with a few targets)."""
    from scipy.stats import rankdata

    scores = np.r_[member_scores, holdout_scores].astype(float)
    m, n = len(member_scores), len(holdout_scores)
    ranks = rankdata(scores)  # midranks: the AUC is (rank sum of members - m (m + 1) / 2) / (m n)
    observed = (ranks[:m].sum() - m * (m + 1) / 2) / (m * n)
    rng = np.random.default_rng([seed, 0xA0C])
    shuffled = np.array([rng.permutation(ranks)[:m].sum() for _ in range(permutations)])
    at_least = int(np.sum((shuffled - m * (m + 1) / 2) / (m * n) >= observed - 1e-12))
    return float(observed), (1 + at_least) / (1 + permutations)


def _release_test(records: pd.DataFrame, name: str, budget: Budget, failed: int, seconds: float, fprs: tuple,
                  seed: int) -> ShadowRelease:
    """Member targets against holdout targets on the release's p-values (module doc)."""
    scored = records[records["release_p"].notna()]
    member_p = scored.loc[scored["member"] == 1, "release_p"].to_numpy()
    holdout_p = scored.loc[scored["member"] == 0, "release_p"].to_numpy()
    if len(member_p) == 0 or len(holdout_p) == 0:
        raise DataError(f"shadow models: {len(member_p)} member and {len(holdout_p)} holdout target(s) could be "
                        "scored (too many refits failed); the release-level test needs both")
    # A low p-value is the suspicious end: the AUC of the negated p-values.
    auc, p_value = permutation_auc(-member_p, -holdout_p, PERMUTATIONS, seed)
    interval = auc_against_chance(auc, len(member_p), len(holdout_p))
    return ShadowRelease(name, auc, p_value, interval["ci_low"], interval["ci_high"], len(member_p), len(holdout_p),
                         budget, failed, seconds, fprs, records)
