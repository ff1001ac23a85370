"""Membership inference: exact Gower nearest neighbours, KDE attacks, threshold baseline, metrics.

`from synthrisk.mia import membership_attack, nearest_synthetic, GowerSpace`
"""

from .attacks import MiaResult, membership_attack
from .gower import GowerSpace, gower_matrix, nearest_synthetic

__all__ = ["GowerSpace", "MiaResult", "gower_matrix", "membership_attack", "nearest_synthetic"]
