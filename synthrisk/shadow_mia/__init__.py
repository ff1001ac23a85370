"""Per-target shadow-model membership inference (issue 15, part 1; Stadler et al. 2022, TAPAS,
Meeus et al. 2023): outlier and random targets, shadow datasets with and without each target
sharing one generator fit per dataset, a feature map of each synthetic dataset, and a classifier
per target judged on fresh datasets (AUC and TPR at low FPR with intervals)."""

from .attack import CHANCE, Auc, TprAtFpr, attack_target, delong_auc, tpr_at_fpr
from .features import FeatureMap
from .shadow import dataset_rows, generator_seed, membership_matrix
from .targets import choose_targets, plan, vulnerability_scores

__all__ = ["CHANCE", "Auc", "FeatureMap", "TprAtFpr", "attack_target", "choose_targets", "dataset_rows",
           "delong_auc", "generator_seed", "membership_matrix", "plan", "tpr_at_fpr", "vulnerability_scores"]
