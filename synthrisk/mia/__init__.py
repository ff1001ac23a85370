"""Membership inference: exact Gower nearest neighbours, KDE attacks, threshold baseline, metrics.

`from synthrisk.mia import membership_attack, nearest_synthetic, GowerSpace`
"""

from .._measure_modules import callable_as_measure
from .attacks import MiaResult, membership_attack
from .gower import GowerSpace, gower_matrix, nearest_synthetic

__all__ = ["GowerSpace", "MiaResult", "gower_matrix", "membership_attack", "nearest_synthetic"]

# `synthrisk.mia(train, synthetic, holdout, ...)` is the uniform measure function (synthrisk.measure_api):
# a call of this package forwards to it.
callable_as_measure(__name__)
