"""Generator interface and registry.

A generator is a small class with `fit(train, schema)` and `sample(n, seed)`, registered under a
backend name; a config entry picks a backend and passes its parameters to the constructor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError

_REGISTRY: dict[str, type["Generator"]] = {}


class Generator(ABC):
    """Fit on the members (train) only; sample any number of rows with a seed."""

    #: names of libraries whose versions go into the status JSON
    libraries: tuple[str, ...] = ()

    def __init__(self, seed: int = 0, **params):
        self.seed = seed
        self.params = params

    @abstractmethod
    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> "Generator": ...

    @abstractmethod
    def sample(self, n: int, seed: int) -> pd.DataFrame: ...


def register(backend: str) -> Callable[[type[Generator]], type[Generator]]:
    def decorate(cls: type[Generator]) -> type[Generator]:
        _REGISTRY[backend] = cls
        cls.backend = backend
        return cls
    return decorate


def backends() -> list[str]:
    _import_builtin_backends()
    return sorted(_REGISTRY)


def make_generator(spec: dict, seed: int = 0, name: str = "generator") -> Generator:
    """Build a generator from a config entry such as {backend: sdv, model: ..., params: {...}}."""
    _import_builtin_backends()
    spec = dict(spec)
    backend = spec.pop("backend", None)
    if backend not in _REGISTRY:
        raise ConfigError(
            f"generators.{name}.backend: unknown generator backend {backend!r}; known: {sorted(_REGISTRY)}"
        )
    spec.pop("timeout", None)
    params = spec.pop("params", {}) or {}
    try:
        return _REGISTRY[backend](seed=seed, **spec, **params)
    except TypeError as exc:
        raise ConfigError(f"generators.{name}: bad parameters for backend {backend!r}: {exc}") from None


def _import_builtin_backends() -> None:
    # Imported lazily so that `synthrisk --help` does not pay for torch/SDV imports.
    from . import baselines, cart, mst, sdv  # noqa: F401
