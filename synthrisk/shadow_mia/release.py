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
  "member" on the p-value, low first; one-sided Mann-Whitney, Hanley-McNeil interval). Exact when
  the release never saw the members, however unlike the release the shadow datasets are: every
  step treats member and holdout targets alike.
- **Named**: each member target's conformal p-value against the holdout targets' p-values,
  Benjamini-Hochberg at `fdr` (as `synthrisk.mia.exposure`): valid for the same reason.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError, DataError
from ..generators.memory import BetweenFits
from ..mia.exposure import judge_scores
from ..stats.proportions import clopper_pearson
from .attack import CONFIDENCE, attack_target
from .features import BINS, RADII, FeatureMap
from .shadow import EVAL, ROLES, TRAIN, dataset_rows, fit_shadow, generator_seed, membership_matrix
from .targets import OUTLIER, RANDOM, choose_targets, vulnerability_scores

MEMBERS, HOLDOUT = "train", "holdout"
#: the FPRs of the per-target TPRs (the issue's 0.1, 1 and 10 %)
FPRS = (0.1, 0.01, 0.001)
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
    with its test and interval, the members named at `fdr`, the budget, and per target its
    vulnerability and the release's p-value (`records`)."""

    generator: str
    auc: float
    auc_p_value: float
    auc_ci_low: float
    auc_ci_high: float
    n_member_targets: int
    n_holdout_targets: int
    fdr: float
    n_identified: int
    min_named: int
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
            "fdr": self.fdr, "n_identified": self.n_identified, "min_named": self.min_named,
            "fits": self.budget.fits, "fits_failed": self.fits_failed, "shadow_datasets": self.budget.shadow_datasets,
            "eval_datasets": self.budget.eval_datasets, "records_per_dataset": self.budget.records_per_dataset,
            "reference": self.budget.reference, "seconds": self.seconds,
            "smallest_tpr_at_1e-02": self.budget.smallest_tpr(0.01),
            "targets_above_chance": int(measured["above_chance"].astype(bool).sum()),
            "member_targets_above_chance": int(members["above_chance"].astype(bool).sum()),
            "median_target_auc": float(measured["auc"].median()) if len(measured) else None,
            "fprs": list(self.fprs), "rule": ATTACK_RULE,
            "targets": _json_rows(self.records),
        }


def _json_rows(records: pd.DataFrame) -> list[dict]:
    out = []
    for row in records.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and not np.isfinite(v) else
                        v.item() if isinstance(v, np.generic) else v) for k, v in row.items()})
    return out


def _records(frame: pd.DataFrame, schema: DatasetSchema) -> pd.DataFrame:
    return frame[list(schema.columns)].reset_index(drop=True)


def _ids(frame: pd.DataFrame) -> np.ndarray:
    return frame[ROW_ID].to_numpy() if ROW_ID in frame else np.arange(len(frame))


def attack_release(members: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema,
                   spec: dict, *, name: str | None = None, aux: pd.DataFrame | None = None, seed: int = 0,
                   n_outliers: int = 40, n_random: int = 40, neighbours: int = 5, shadow_datasets: int = 200,
                   eval_datasets: int = 200, bins: int = BINS, radii=RADII, n_trees: int = 100, fprs=FPRS,
                   confidence: float = CONFIDENCE, fdr: float = 0.045,
                   progress: Callable[[int, int], None] | None = None) -> ShadowRelease:
    """The attack of the module doc on typed frames (with `row_id` columns). `spec`: the generator's
    config entry ({backend: ..., params: ...}); `progress(done, total)` after each shadow fit."""
    start = time.perf_counter()
    name = name or str(spec.get("backend"))
    if holdout is None or len(holdout) == 0:
        raise DataError("shadow models: need holdout records (records the generator never saw)")
    candidates = pd.concat([_records(members, schema), _records(holdout, schema)], ignore_index=True)
    label = np.r_[np.ones(len(members), dtype=int), np.zeros(len(holdout), dtype=int)]
    row_ids = np.concatenate([_ids(members), _ids(holdout)])
    file_rows = np.r_[np.arange(len(members)), np.arange(len(holdout))]
    has_aux = aux is not None and len(aux) > 0
    population = pd.concat([candidates] + ([_records(aux, schema)] if has_aux else []), ignore_index=True)
    if n_outliers + n_random > len(candidates):
        raise ConfigError(f"shadow models: {n_outliers + n_random} targets asked for, but the members and holdout "
                          f"hold {len(candidates)} records")
    scores = vulnerability_scores(population, schema, neighbours)[: len(candidates)]
    outliers, random = choose_targets(scores, n_outliers, n_random, seed)
    targets = np.concatenate([outliers, random])
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
    for role in ROLES:
        count = shadow_datasets if role == TRAIN else eval_datasets
        membership = membership_matrix(count, len(targets), seed, role)
        kept = []
        for j in range(count):
            positions = dataset_rows(pool, targets, membership[j], size, seed, role, j)
            synthetic_j, status = fit_shadow(name, spec, population.iloc[positions], schema,
                                             generator_seed(name, role, j) + seed)
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
        per_target.append({ROW_ID: row_ids[position], "member": int(label[position]),
                           "file": MEMBERS if label[position] else HOLDOUT, "row": int(file_rows[position]),
                           "kind": OUTLIER if t < len(outliers) else RANDOM,
                           "vulnerability": float(scores[position]), **result})
    records = pd.DataFrame(per_target)
    return _release_test(records, name, fdr, budget, failed, time.perf_counter() - start, tuple(fprs))


def _release_test(records: pd.DataFrame, name: str, fdr: float, budget: Budget, failed: int, seconds: float,
                  fprs: tuple) -> ShadowRelease:
    """Member targets against holdout targets on the release's p-values (module doc)."""
    scored = records[records["release_p"].notna()]
    member_p = scored.loc[scored["member"] == 1, "release_p"].to_numpy()
    holdout_p = scored.loc[scored["member"] == 0, "release_p"].to_numpy()
    records = records.assign(conformal_p=np.nan, identified=False)
    if len(member_p) == 0 or len(holdout_p) == 0:
        raise DataError(f"shadow models: the targets hold {len(member_p)} member(s) and {len(holdout_p)} holdout "
                        "record(s) with a score; the release-level test needs both (ask for more targets)")
    # A low p-value is the suspicious end: the members' evidence on the negated p-values.
    judged = judge_scores(-member_p, -holdout_p, fdr)
    member_index = scored.index[scored["member"] == 1]
    records.loc[member_index, "conformal_p"] = judged.member_p_values
    records.loc[member_index, "identified"] = judged.named
    return ShadowRelease(name, judged.auc, judged.p_value, judged.ci_low, judged.ci_high, len(member_p),
                         len(holdout_p), fdr, int(judged.named.sum()), judged.min_named, budget, failed, seconds, fprs,
                         records)
