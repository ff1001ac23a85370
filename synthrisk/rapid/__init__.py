"""RAPID attribute-inference risk: `from synthrisk.rapid import rapid, RapidResult`."""

from .._measure_modules import callable_as_measure
from .attackers import ATTACKERS, applicable
from .core import RapidResult, rapid

__all__ = ["ATTACKERS", "RapidResult", "applicable", "rapid"]

# `synthrisk.rapid(train, synthetic, holdout, ...)` is the uniform measure function (synthrisk.measure_api):
# a call of this package forwards to it.
callable_as_measure(__name__)
