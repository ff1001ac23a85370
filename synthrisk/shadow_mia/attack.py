"""The attack on one target: a random forest on the training datasets' features, judged on the
evaluation datasets; its AUC and TPR at fixed FPRs with intervals.

AUC interval: DeLong, DeLong & Clarke-Pearson (1988), the variance of the Mann-Whitney AUC from its
structural components, a normal interval clipped to [0, 1] (as pROC's `ci.auc`); the unit is the
evaluation dataset. At perfect separation the variance is 0 and the interval collapses onto the
AUC: the TPR intervals below then show the uncertainty that remains (30 of 30 "in" datasets
detected bounds the TPR below by 0.88 at 95 %).

TPR at FPR f: the ROC curve read at f on the evaluation datasets: the threshold is the (k + 1)-th
highest score among the "out" datasets, k = floor(f * n_out) false positives allowed (a dataset is
called "in" when its score is above it), and the TPR's Clopper-Pearson interval is that of the
count of "in" datasets above it. With k = 0 (fewer than 1 / f "out" datasets: FPR 0.01 needs 100)
the FPR cannot be told apart from 0 and the TPR is not reported (NaN, `resolvable` false) rather
than given a precision the runs do not have.

A target whose AUC interval includes 0.5 (chance) is "not above chance", never a risk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, norm
from sklearn.ensemble import RandomForestClassifier

from ..errors import DataError

#: the reference point of every AUC: a classifier that guesses
CHANCE = 0.5
CONFIDENCE = 0.95
FPRS = (0.1, 0.01)
N_TREES = 200


@dataclass(frozen=True)
class Auc:
    auc: float
    low: float
    high: float
    variance: float


def delong_auc(in_scores, out_scores, confidence: float = CONFIDENCE) -> Auc:
    """The AUC of scores of "in" against "out" cases (ties count 1/2) with DeLong's interval."""
    x, y = np.asarray(in_scores, dtype=float), np.asarray(out_scores, dtype=float)
    if len(x) < 2 or len(y) < 2:
        raise DataError(f"AUC interval: needs at least 2 'in' and 2 'out' cases, got {len(x)} and {len(y)}")
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)  # structural components of each in / out case
    auc = float(v10.mean())
    variance = float(v10.var(ddof=1) / len(x) + v01.var(ddof=1) / len(y))
    half = norm.ppf(0.5 + confidence / 2) * np.sqrt(variance)
    return Auc(auc, float(max(auc - half, 0.0)), float(min(auc + half, 1.0)), variance)


@dataclass(frozen=True)
class TprAtFpr:
    fpr: float
    resolvable: bool
    tpr: float
    low: float
    high: float
    threshold: float


def tpr_at_fpr(in_scores, out_scores, fpr: float, confidence: float = CONFIDENCE) -> TprAtFpr:
    """The TPR at the threshold allowing floor(fpr * n_out) false positives (module doc)."""
    x, y = np.asarray(in_scores, dtype=float), np.sort(np.asarray(out_scores, dtype=float))[::-1]
    allowed = int(np.floor(fpr * len(y) + 1e-9))
    if allowed < 1:
        return TprAtFpr(fpr, False, np.nan, np.nan, np.nan, np.nan)
    threshold = float(y[allowed]) if allowed < len(y) else -np.inf
    hits = int((x > threshold).sum())
    interval = binomtest(hits, len(x)).proportion_ci(confidence, method="exact")
    return TprAtFpr(fpr, True, hits / len(x), float(interval.low), float(interval.high), threshold)


def attack_scores(train_x: np.ndarray, train_y: np.ndarray, eval_x: np.ndarray, n_trees: int = N_TREES,
                  seed: int = 0) -> np.ndarray:
    """The forest's probability of "in" for each evaluation dataset."""
    forest = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1)
    forest.fit(train_x, train_y)
    return forest.predict_proba(eval_x)[:, list(forest.classes_).index(1)]


def attack_target(train_x, train_y, eval_x, eval_y, n_trees: int = N_TREES, seed: int = 0,
                  fprs=FPRS, confidence: float = CONFIDENCE) -> dict:
    """One target's attack: AUC and its interval, TPR at each FPR with its interval, the counts, and
    whether the AUC interval lies above chance."""
    train_y, eval_y = np.asarray(train_y, dtype=int), np.asarray(eval_y, dtype=int)
    row = {"n_train": len(train_y), "n_in": int(eval_y.sum()), "n_out": int((1 - eval_y).sum())}
    if len(set(train_y)) < 2 or min(row["n_in"], row["n_out"]) < 2:
        return {**row, "auc": np.nan, "auc_low": np.nan, "auc_high": np.nan, "above_chance": False,
                **{f"{key}@{f:g}": np.nan for f in fprs for key in ("tpr", "tpr_low", "tpr_high")}}
    scores = attack_scores(np.asarray(train_x), train_y, np.asarray(eval_x), n_trees, seed)
    auc = delong_auc(scores[eval_y == 1], scores[eval_y == 0], confidence)
    row.update(auc=auc.auc, auc_low=auc.low, auc_high=auc.high, above_chance=bool(auc.low > CHANCE))
    for f in fprs:
        tpr = tpr_at_fpr(scores[eval_y == 1], scores[eval_y == 0], f, confidence)
        row.update({f"tpr@{f:g}": tpr.tpr, f"tpr_low@{f:g}": tpr.low, f"tpr_high@{f:g}": tpr.high})
    return row
