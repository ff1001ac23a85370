"""Distance to closest record (DCR) and NNDR of synthetic records against members and a holdout.

`from synthrisk.dcr import dcr, DcrResult, two_nearest`
"""

from .._measure_modules import callable_as_measure
from .core import DcrResult, dcr, two_nearest

__all__ = ["DcrResult", "dcr", "two_nearest"]

# `synthrisk.dcr(train, synthetic, holdout, ...)` is the uniform measure function (synthrisk.measure_api):
# a call of this package forwards to it.
callable_as_measure(__name__)
