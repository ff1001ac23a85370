"""synthpop's disclosure measures: identity (UiO, repU, ...) and attribute (DiSCO, ...) disclosure
on key variables and a target, with synthpop's filters and checks.

`from synthrisk.disclosure import disclosure, DisclosureResult`
"""

from .core import DisclosureResult, disclosure

__all__ = ["DisclosureResult", "disclosure"]
