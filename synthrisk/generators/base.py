"""Generator interface and registry.

A generator is a small class with `fit(train, schema)` and `sample(n, seed)`, registered under a
backend name; a config entry picks a backend and passes its parameters to the constructor.
"""

from __future__ import annotations

import importlib
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

    def privacy(self) -> dict | None:
        """A DP generator's guarantee for the status JSON ({epsilon, delta, domain, guarantee});
        None for a generator that promises none."""
        return None


def register(backend: str) -> Callable[[type[Generator]], type[Generator]]:
    def decorate(cls: type[Generator]) -> type[Generator]:
        _REGISTRY[backend] = cls
        cls.backend = backend
        return cls
    return decorate


# Built-in backends and the module that registers each. A module is imported only when its backend
# is asked for: the main environment has no synthcity, the synthcity environment no SDV or mbi.
BUILTIN_BACKENDS = {"cart": "cart", "identity": "baselines", "independent": "baselines", "leaky": "baselines",
                    "sdv": "sdv",
                    "mst": "mst", "synthcity": "synthcity"}


def backends() -> list[str]:
    return sorted(set(BUILTIN_BACKENDS) | set(_REGISTRY))


def make_generator(spec: dict, seed: int = 0, name: str = "generator") -> Generator:
    """Build a generator from a config entry such as {backend: sdv, model: ..., params: {...}}."""
    spec = dict(spec)
    backend = spec.pop("backend", None)
    if backend not in _REGISTRY and backend in BUILTIN_BACKENDS:
        importlib.import_module(f"{__package__}.{BUILTIN_BACKENDS[backend]}")
    if backend not in _REGISTRY:
        raise ConfigError(
            f"generators.{name}.backend: unknown generator backend {backend!r}; known: {backends()}"
        )
    spec.pop("timeout", None)
    params = spec.pop("params", {}) or {}
    try:
        return _REGISTRY[backend](seed=seed, **spec, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"generators.{name}: bad parameters for backend {backend!r}: {exc}") from None
