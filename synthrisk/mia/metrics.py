"""Attack metrics: precision/recall/F1 (and F1 relative to calling everyone a member), AUC,
ROC points, and TPR at low FPR down to what the number of non-members can resolve."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import precision_recall_fscore_support, roc_auc_score, roc_curve


def naive_f1(member_share):
    """F1 of calling every record a member when members make up `member_share` of the attack set."""
    return 2 * member_share / (1 + member_share)


def relative_f1(f1, member_share):
    """(F1 - F1_naive) / (1 - F1_naive): 0 for the all-member guess, 1 for a perfect attack."""
    naive = naive_f1(member_share)
    return (f1 - naive) / (1 - naive)


def label_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """Hard-label metrics. Relative F1 = (F1 - F1_naive) / (1 - F1_naive), with F1_naive =
    2t / (1 + t) the F1 of calling everyone a member when the member share is t
    (El Emam, Mosquera & Fang 2022)."""
    precision, recall, f1, _ = precision_recall_fscore_support(
        y_true, y_pred, average="binary", zero_division=0.0)
    t = float(np.mean(y_true))
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1),
            "f1_naive": naive_f1(t), "f1_relative": relative_f1(float(f1), t),
            "accuracy": float(np.mean(y_true == y_pred)), "n_predicted_members": int(np.sum(y_pred))}


def fpr_levels(n_non_members: int) -> list[float]:
    """1e-1, 1e-2, ... down to the smallest power of ten that n non-members resolve (1/n)."""
    levels, level = [], 0.1
    while level >= 1.0 / n_non_members - 1e-15:
        levels.append(level)
        level /= 10
    return levels


#: the low false-positive rates at which every membership attack's TPR is reported (Carlini et al.
#: 2022: a privacy attack is judged by its TPR there, not by its AUC), lowest first
LOW_FPRS = ("1e-03", "1e-02", "1e-01")


def tpr_at_levels(fpr: np.ndarray, tpr: np.ndarray, n_non_members: int) -> dict[str, float]:
    """The largest TPR of a ROC curve reachable with FPR <= each level that n non-members resolve
    (`fpr_levels`), keyed as LOW_FPRS ("1e-02"); no interpolation below 1/n. The curve must keep
    every threshold (`roc_curve(..., drop_intermediate=False)`): a point dropped for lying on a
    straight segment of tied scores can be the one reachable at a level."""
    return {f"{level:.0e}": float(tpr[fpr <= level + 1e-15].max()) for level in fpr_levels(n_non_members)}


def tpr_at_fpr(member_scores, non_member_scores) -> dict[str, float]:
    """`tpr_at_levels` of a score (higher = more likely a member) on members and non-members."""
    members, others = np.asarray(member_scores, dtype=float), np.asarray(non_member_scores, dtype=float)
    fpr, tpr, _ = roc_curve(np.r_[np.ones(len(members)), np.zeros(len(others))], np.r_[members, others],
                            drop_intermediate=False)
    return tpr_at_levels(fpr, tpr, len(others))


def score_metrics(y_true: np.ndarray, score: np.ndarray, max_points: int = 300) -> dict:
    """Threshold-free metrics of a membership score (higher = more likely a member)."""
    n_members, n_non = int(np.sum(y_true)), int(np.sum(1 - y_true))
    fpr, tpr, _ = roc_curve(y_true, score, drop_intermediate=False)
    tpr_at = tpr_at_levels(fpr, tpr, n_non)
    keep = _thin(fpr, max_points)
    return {"auc": float(roc_auc_score(y_true, score)), "tpr_at_fpr": tpr_at,
            "fpr_floor": 1.0 / n_non, "n_members": n_members, "n_non_members": n_non,
            "roc": {"fpr": fpr[keep].tolist(), "tpr": tpr[keep].tolist()}}


def _thin(fpr: np.ndarray, max_points: int) -> np.ndarray:
    """ROC points evenly spaced on a log FPR axis (plus the ends), for log-log figures."""
    if len(fpr) <= max_points:
        return np.arange(len(fpr))
    positive = np.maximum(fpr, 1e-12)
    grid = np.logspace(np.log10(positive[positive > 1e-12].min()), 0, max_points)
    picks = np.unique(np.concatenate([[0, len(fpr) - 1], np.searchsorted(fpr, grid, side="right") - 1]))
    return picks[picks >= 0]


def auc_against_chance(auc: float, n_members: int, n_non_members: int, level: float = 0.95) -> dict:
    """One-sided test of AUC > 0.5 and an interval for the AUC of one attack set.

    p-value: the Mann-Whitney U test (AUC = U / (n1 n2)) in its normal approximation, whose null
    variance of the AUC is (n1 + n2 + 1) / (12 n1 n2). Interval: Hanley & McNeil (1982), with
    Q1 = A / (2 - A) and Q2 = 2A^2 / (1 + A). Both are what a reader can check by hand from the
    AUC and the two counts in the tables."""
    from scipy.stats import norm

    n1, n0 = int(n_members), int(n_non_members)
    if n1 < 1 or n0 < 1 or auc is None or not np.isfinite(auc):
        return {"p_value": None, "ci_low": None, "ci_high": None}
    se0 = np.sqrt((n1 + n0 + 1) / (12.0 * n1 * n0))
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    se = np.sqrt(max(auc * (1 - auc) + (n1 - 1) * (q1 - auc ** 2) + (n0 - 1) * (q2 - auc ** 2), 0.0) / (n1 * n0))
    z = norm.ppf(0.5 + level / 2)
    return {"p_value": float(norm.sf((auc - 0.5) / se0)), "ci_low": float(max(auc - z * se, 0.0)),
            "ci_high": float(min(auc + z * se, 1.0))}


def tpr_against_chance(tpr: float, level: float, n_members: int, n_non_members: int) -> float | None:
    """One-sided p-value of the TPR an attack reaches at FPR <= `level` (the low-FPR regime where a
    leak of a few records shows and the AUC barely moves; Carlini et al. 2022).

    At that threshold r = floor(level n0) non-members score above it, so it is the (r+1)-th highest
    non-member score. When members and non-members are exchangeable (no membership signal), each
    member exceeds it with probability (r + 1) / (n0 + 1) and the count of members above it is
    beta-binomial(n1, r + 1, n0 - r): exact, whatever the score's distribution (ties aside). None
    when n0 cannot resolve `level` (fewer than 1 / level non-members)."""
    from scipy.stats import betabinom

    n1, n0 = int(n_members), int(n_non_members)
    if tpr is None or not np.isfinite(tpr) or n1 < 1 or n0 * level < 1:
        return None
    r = int(np.floor(level * n0 + 1e-9))
    k = int(round(tpr * n1))
    return float(betabinom.sf(k - 1, n1, r + 1, n0 - r))
