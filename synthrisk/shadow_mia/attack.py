"""The attack on one target: a random forest on the training datasets' features, judged on the
evaluation datasets; its AUC and TPR at fixed FPRs with intervals.

AUC interval: DeLong, DeLong & Clarke-Pearson (1988), the variance of the Mann-Whitney AUC from its
structural components, a normal interval clipped to [0, 1] (as pROC's `ci.auc`); the unit is the
evaluation dataset. At perfect separation the variance is 0 and the interval collapses onto the
AUC: the TPR intervals below then show the uncertainty that remains (30 of 30 "in" datasets
detected bounds the TPR below by 0.88 at 95 %).

TPR at FPR f: the threshold is chosen on the training datasets, never on the datasets that judge
it: the forest's out-of-bag scores of the training "out" datasets give the threshold that lets
floor(f * n) of those n pass (a dataset is called "in" when its score is above it). On the
evaluation datasets the TPR and the FPR reached at that threshold are then counted, each with its
Clopper-Pearson interval: the FPR is measured, not assumed. Reading the threshold off the
evaluation ROC curve instead would judge it on the datasets that chose it, and understate the FPR
(the 4th highest of 30 "out" scores passes about 4 / 31 of fresh ones, not 0.1). An FPR below
1 / n_out on either side (FPR 0.01 needs 100 "out" datasets among the training and among the
evaluation datasets) cannot be told apart from 0: its TPR is not reported (NaN) rather than given
a precision the runs do not have.

A target whose AUC interval includes 0.5 (chance) is "not above chance", never a risk.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from sklearn.ensemble import RandomForestClassifier

from ..errors import DataError
from ..stats.proportions import clopper_pearson

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
    fpr: float             # the FPR asked for
    resolvable: bool
    threshold: float
    tpr: float
    tpr_low: float
    tpr_high: float
    fpr_reached: float     # on the evaluation "out" datasets, at the threshold
    fpr_high: float


def threshold_at_fpr(out_scores, fpr: float) -> float | None:
    """The threshold that lets floor(fpr * n) of the n "out" scores above it, or None when that is
    0 (fewer than 1 / fpr scores: the FPR cannot be told apart from 0)."""
    y = np.sort(np.asarray(out_scores, dtype=float))[::-1]
    allowed = int(np.floor(fpr * len(y) + 1e-9))
    if allowed < 1:
        return None
    return float(y[allowed]) if allowed < len(y) else -np.inf


def tpr_at_fpr(threshold_out_scores, in_scores, out_scores, fpr: float, confidence: float = CONFIDENCE) -> TprAtFpr:
    """TPR and reached FPR on (in_scores, out_scores) at the threshold chosen on
    `threshold_out_scores` (module doc)."""
    x, y = np.asarray(in_scores, dtype=float), np.asarray(out_scores, dtype=float)
    threshold = threshold_at_fpr(threshold_out_scores, fpr)
    if threshold is None or np.floor(fpr * len(y) + 1e-9) < 1:
        return TprAtFpr(fpr, False, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan)
    hits, false = int((x > threshold).sum()), int((y > threshold).sum())
    tpr_low, tpr_high = clopper_pearson(hits, len(x), confidence)
    _, fpr_high = clopper_pearson(false, len(y), confidence)
    return TprAtFpr(fpr, True, threshold, hits / len(x), tpr_low, tpr_high, false / len(y), fpr_high)


def attack_scores(train_x: np.ndarray, train_y: np.ndarray, eval_x: np.ndarray, n_trees: int = N_TREES,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The forest's probability of "in": out-of-bag for each training dataset (the scores of
    datasets no tree that scores them has seen, to choose thresholds on), and for each evaluation
    dataset. The out-of-bag bookkeeping does not change the trees."""
    forest = RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1, oob_score=True)
    with warnings.catch_warnings():
        # a training dataset that every tree drew has no out-of-bag score (NaN; left out below)
        warnings.simplefilter("ignore", UserWarning)
        forest.fit(train_x, train_y)
    column = list(forest.classes_).index(1)
    return forest.oob_decision_function_[:, column], forest.predict_proba(eval_x)[:, column]


def release_p_value(release_score: float, out_scores) -> float:
    """(1 + #{out scores >= the release's}) / (1 + n_out): how often a dataset fitted without the
    target scores at least as high as the release does (low: the release looks fitted on it)."""
    out = np.asarray(out_scores, dtype=float)
    return float((1 + np.sum(out >= release_score)) / (1 + len(out)))


def attack_target(train_x, train_y, eval_x, eval_y, n_trees: int = N_TREES, seed: int = 0,
                  fprs=FPRS, confidence: float = CONFIDENCE, release_x=None) -> dict:
    """One target's attack: AUC and its interval, TPR (and the FPR reached) at each FPR with their
    intervals, the counts, and whether the AUC interval lies above or below chance (missing when
    the target could not be measured: too few successful fits). With `release_x` (the features of
    a release under audit) also the forest's score of the release and its p-value against the
    evaluation datasets fitted without the target (`release_p_value`)."""
    train_y, eval_y = np.asarray(train_y, dtype=int), np.asarray(eval_y, dtype=int)
    row = {"n_train": len(train_y), "n_in": int(eval_y.sum()), "n_out": int((1 - eval_y).sum())}
    per_fpr = [f"{key}@{f:g}" for f in fprs for key in ("tpr", "tpr_low", "tpr_high", "fpr_reached", "fpr_high")]
    if release_x is not None:
        row.update(release_score=np.nan, release_p=np.nan)
    if len(set(train_y)) < 2 or min(row["n_in"], row["n_out"]) < 2:
        return {**row, "auc": np.nan, "auc_low": np.nan, "auc_high": np.nan, "above_chance": None,
                "below_chance": None, **dict.fromkeys(per_fpr, np.nan)}
    scored = np.asarray(eval_x) if release_x is None else np.vstack([eval_x, np.asarray(release_x).reshape(1, -1)])
    oob, scores = attack_scores(np.asarray(train_x), train_y, scored, n_trees, seed)
    if release_x is not None:
        scores, release_score = scores[:-1], float(scores[-1])
        row.update(release_score=release_score, release_p=release_p_value(release_score, scores[eval_y == 0]))
    oob_out = oob[(train_y == 0) & ~np.isnan(oob)]
    auc = delong_auc(scores[eval_y == 1], scores[eval_y == 0], confidence)
    row.update(auc=auc.auc, auc_low=auc.low, auc_high=auc.high, above_chance=bool(auc.low > CHANCE),
               below_chance=bool(auc.high < CHANCE))
    for f in fprs:
        tpr = tpr_at_fpr(oob_out, scores[eval_y == 1], scores[eval_y == 0], f, confidence)
        row.update({f"tpr@{f:g}": tpr.tpr, f"tpr_low@{f:g}": tpr.tpr_low, f"tpr_high@{f:g}": tpr.tpr_high,
                    f"fpr_reached@{f:g}": tpr.fpr_reached, f"fpr_high@{f:g}": tpr.fpr_high})
    return row
