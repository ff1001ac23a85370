"""Utility of synthetic data, reported next to its risk: machine-learning efficacy and fidelity.

`from synthrisk.utility import utility` scores one synthetic table against the real members it was
trained on and the real holdout it never saw.
"""

from .efficacy import efficacy
from .fidelity import fidelity
from .core import UtilityResult, utility

__all__ = ["UtilityResult", "efficacy", "fidelity", "utility"]
