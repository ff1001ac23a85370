"""Distance to closest record (DCR) and NNDR of synthetic records against members and a holdout.

`from synthrisk.dcr import dcr, DcrResult, two_nearest`
"""

from .core import DcrResult, dcr, two_nearest

__all__ = ["DcrResult", "dcr", "two_nearest"]
