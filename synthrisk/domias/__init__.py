"""DOMIAS membership inference (density ratio of synthetic to reference data, van Breugel et al. 2023).

`from synthrisk.domias import domias, DomiasResult, MixedKde`
"""

from .._measure_modules import callable_as_measure
from .core import DomiasResult, MixedEncoding, MixedKde, domias

__all__ = ["DomiasResult", "MixedEncoding", "MixedKde", "domias"]

# `synthrisk.domias(train, synthetic, holdout, ...)` is the uniform measure function (synthrisk.measure_api):
# a call of this package forwards to it.
callable_as_measure(__name__)
