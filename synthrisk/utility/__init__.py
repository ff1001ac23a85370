"""Utility of synthetic data, reported next to its risk: machine-learning efficacy and fidelity.

`from synthrisk.utility import utility` scores one synthetic table against the real members it was
trained on and the real holdout it never saw.
"""

from .._measure_modules import callable_as_measure
from .core import UtilityResult, utility
from .efficacy import efficacy
from .fidelity import fidelity

__all__ = ["UtilityResult", "efficacy", "fidelity", "utility"]

# `synthrisk.utility(train, synthetic, holdout, ...)` is the uniform measure function (synthrisk.measure_api):
# a call of this package forwards to it.
callable_as_measure(__name__)
