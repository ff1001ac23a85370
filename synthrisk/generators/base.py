"""Generator interface and registry.

A generator is a small class with `fit(train, schema)` and `sample(n, seed)`, registered under a
backend name; a config entry picks a backend and passes its parameters to the constructor.

A backend is found, in this order: registered in this process (`@register`); built in (imported on
demand); named as `package.module:ClassName`, imported from wherever Python finds it; or advertised
by an installed package under the entry-point group `synthrisk.generators`. So a generator of
one's own needs no change to synthrisk.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError

_REGISTRY: dict[str, type[Generator]] = {}


class Generator(ABC):
    """Fit on the members (train) only; sample any number of rows with a seed."""

    #: names of libraries whose versions go into the status JSON
    libraries: tuple[str, ...] = ()

    def __init__(self, seed: int = 0, **params):
        self.seed = seed
        self.params = params

    @abstractmethod
    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> Generator: ...

    @abstractmethod
    def sample(self, n: int, seed: int) -> pd.DataFrame: ...

    def check(self) -> None:
        """Raise ConfigError on an entry that only the backend's own library can judge (for a
        generator in an environment of its own, run there: `environment_fits`). The constructor
        checks the rest; by default there is nothing more."""
        return None

    @classmethod
    def takes_noise_seed(cls, spec: dict) -> bool:
        """Whether the generator of config entry `spec` draws its DP noise from `params.noise_seed` when
        given one (an auditor's refits seed it so that an audit repeats): by default, when the
        constructor names it."""
        return _names_noise_seed(cls)

    def privacy(self) -> dict | None:
        """A DP generator's guarantee for the status JSON ({epsilon, delta, neighbours, domain,
        guarantee}; neighbours: "replace-one" or "add-remove", the relation its accounting assumes,
        which the empirical epsilon audit builds); None for a generator that promises none."""
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


#: installed packages advertise backends here: [project.entry-points."synthrisk.generators"] name = "pkg.mod:Class"
ENTRY_POINT_GROUP = "synthrisk.generators"

# Built-in backends that run in an environment of their own: the requirements file, relative to the
# repository (the workflow builds it into .venv-<stem> of the repository; docs/design.md "Environments").
BACKEND_ENVIRONMENTS = {"synthcity": "envs/synthcity.txt"}


def _entry_points() -> dict:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def backends() -> list[str]:
    return sorted(set(BUILTIN_BACKENDS) | set(_REGISTRY) | set(_entry_points()))


def _load_class(backend: str, target: str, where: str) -> type:
    """The class `target` (module:Class) names, registered under `backend`; errors say what is missing."""
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import module {module_name!r} for backend {backend!r} ({exc}); "
                          "is its package installed or on PYTHONPATH?") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and callable(getattr(cls, "fit", None)) and callable(getattr(cls, "sample", None))):
        raise ConfigError(f"{where}: {target!r} is not a generator class (a class with fit(train, schema) and "
                          "sample(n, seed), usually a subclass of synthrisk.generators.Generator)")
    _REGISTRY[backend] = cls
    return cls


def generator_class(backend, name: str = "generator") -> type[Generator]:
    """The class of a backend: registered, built in, `module:Class`, or an entry point."""
    where = f"generators.{name}.backend"
    if not isinstance(backend, str) or not backend:
        raise ConfigError(f"{where}: expected a backend name, got {backend!r}")
    if backend not in _REGISTRY and backend in BUILTIN_BACKENDS:
        importlib.import_module(f"{__package__}.{BUILTIN_BACKENDS[backend]}")
    if backend in _REGISTRY:
        return _REGISTRY[backend]
    if ":" in backend:
        return _load_class(backend, backend, where)
    point = _entry_points().get(backend)
    if point is not None:
        return _load_class(backend, point.value, f"{where} (entry point {point.value!r} of {ENTRY_POINT_GROUP})")
    raise ConfigError(f"{where}: unknown generator backend {backend!r}; known: {backends()}, or name a class "
                      "as 'package.module:ClassName'")


#: keys of a config entry that the workflow reads and the generator never gets
WORKFLOW_KEYS = ("timeout", "environment", "enabled")


def make_generator(spec: dict, seed: int = 0, name: str = "generator") -> Generator:
    """Build a generator from a config entry such as {backend: sdv, model: ..., params: {...}}."""
    spec = dict(spec)
    backend = spec.pop("backend", None)
    cls = generator_class(backend, name)
    for key in WORKFLOW_KEYS:  # for the workflow, not the generator
        spec.pop(key, None)
    params = spec.pop("params", {}) or {}
    try:
        return cls(seed=seed, **spec, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"generators.{name}: bad parameters for backend {backend!r}: {exc}") from None


def _names_noise_seed(cls) -> bool:
    import inspect

    return "noise_seed" in inspect.signature(cls.__init__).parameters


def with_noise_seed(spec: dict, seed: int) -> dict:
    """`spec` with `params.noise_seed` set from `seed` when its generator draws DP noise from one
    (`Generator.takes_noise_seed`; a class of one's own that is no `Generator` subclass: when its
    constructor names it) and the spec sets none; else `spec` unchanged. For an auditor's simulations
    of a generator (shadow refits, selection runs), never for a release: a seeded release is not
    private."""
    params = dict(spec.get("params") or {})
    if "noise_seed" in params:
        return spec
    cls = generator_class(spec.get("backend"), str(spec.get("backend")))
    if not (cls.takes_noise_seed(spec) if hasattr(cls, "takes_noise_seed") else _names_noise_seed(cls)):
        return spec
    words = np.random.SeedSequence([int(seed), 0x5EED]).generate_state(1)
    return {**spec, "params": {**params, "noise_seed": int(words[0])}}


def job_settings(settings: dict, keys: tuple[str, ...], generator: str | None = None) -> dict:
    """The part of a stage's settings that one of its jobs reads: `keys`, and of `specs` only the
    job's generator. Snakemake reruns a job whose params change, so a job given the whole block
    would be redone, hundreds of generator fits, when an unrelated key changes (another generator
    listed, the confidence level of the gathered table)."""
    part = {key: settings[key] for key in keys}
    if generator is not None:
        part["specs"] = {generator: settings["specs"][generator]}
    return part
