"""DOMIAS membership inference (density ratio of synthetic to reference data, van Breugel et al. 2023).

`from synthrisk.domias import domias, DomiasResult, MixedKde`
"""

from .core import DomiasResult, MixedEncoding, MixedKde, domias

__all__ = ["DomiasResult", "MixedEncoding", "MixedKde", "domias"]
