"""The registry of measures: built-in ones are the modules of this package (found, not listed),
plug-ins are any importable module named by a config block's `module` key."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..errors import ConfigError
from .base import Measure

_REGISTRY: dict[str, Measure] = {}
# Modules of this package that hold the machinery, not a measure.
_MACHINERY = {"base", "registry", "runner", "verdict", "tabulate", "wording"}


def register_measure(cls: type[Measure]) -> type[Measure]:
    """Class decorator: registers one instance under `cls.name`."""
    if not getattr(cls, "name", None) or not getattr(cls, "title", None):
        raise TypeError(f"measure {cls.__name__} needs the class attributes `name` and `title`")
    _REGISTRY[cls.name] = cls()
    return cls


def _load_builtin() -> None:
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name not in _MACHINERY and not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")


def registered_measures() -> dict[str, Measure]:
    """Every measure registered in this process: the built-in ones and any plug-in imported (the
    audit runs them all)."""
    _load_builtin()
    return dict(_REGISTRY)


def builtin_measures() -> dict[str, Measure]:
    """The measures of this package alone (a plug-in registered in the process is not one)."""
    return {name: m for name, m in registered_measures().items() if type(m).__module__.startswith(f"{__package__}.")}


def configured_measures(config: dict) -> dict[str, Measure]:
    """The measures a config runs, in their `order`: those whose key the config has (a plug-in's
    block names its module: `{module: my_package.my_measure, ...}`) and those on by default."""
    _load_builtin()
    for key, block in config.items():
        if isinstance(block, dict) and "module" in block and key not in _REGISTRY:
            try:
                importlib.import_module(block["module"])
            except ImportError as exc:
                raise ConfigError(f"config: {key}.module: cannot import {block['module']!r}: {exc}") from None
            if key not in _REGISTRY:
                raise ConfigError(f"config: {key}.module: module {block['module']!r} registers no measure "
                                  f"named {key!r} (use @register_measure on a Measure with name = {key!r})")
    chosen = [m for name, m in _REGISTRY.items() if name in config or m.default_on]
    return {m.name: m for m in sorted(chosen, key=lambda m: (m.order, m.name))}


def measure(name: str) -> Measure:
    _load_builtin()
    if name not in _REGISTRY:
        raise ConfigError(f"unknown measure {name!r}; known: {sorted(_REGISTRY)}")
    return _REGISTRY[name]
