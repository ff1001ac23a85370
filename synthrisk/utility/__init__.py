"""Utility of synthetic data, reported next to its risk: machine-learning efficacy and fidelity.

`from synthrisk.utility import utility` scores one synthetic table against the real members it was
trained on and the real holdout it never saw.
"""

from .core import UtilityResult, utility
from .efficacy import efficacy
from .fidelity import fidelity

__all__ = ["UtilityResult", "efficacy", "fidelity", "utility"]
