"""Generator registry and backends (cart, sdv, baselines; synthcity and dpss run elsewhere)."""

from .base import Generator, backends, make_generator, register

__all__ = ["Generator", "backends", "make_generator", "register"]
