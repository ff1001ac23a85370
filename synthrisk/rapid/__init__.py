"""RAPID attribute-inference risk: `from synthrisk.rapid import rapid, RapidResult`."""

from .attackers import ATTACKERS, applicable
from .core import RapidResult, rapid

__all__ = ["ATTACKERS", "RapidResult", "applicable", "rapid"]
