"""The generator in hand (`synthrisk audit --generator NAME|module:Class [--generator-config FILE]`):
checked where it enters, before any measure runs, so that a misspelt backend or parameter is an
error naming the flag, never a failed measure an hour later."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from ..errors import ConfigError
from ..measures.base import GeneratorInHand

#: the keys of a generator's config entry besides `backend` (as under config.yaml's `generators:`)
ENTRY_KEYS = ("model", "plugin", "params", "timeout")


def generator_spec(generator, config=None) -> tuple[str, dict]:
    """(name, config entry) from a backend name (or `module:Class`) and an optional YAML file, or
    from a config entry given as a mapping ({backend: ..., params: ...})."""
    if isinstance(generator, Mapping):
        if config is not None:
            raise ConfigError("generator: give its config entry as a mapping or a --generator-config file, not both")
        spec = dict(generator)
    elif isinstance(generator, str) and generator.strip():
        spec = {"backend": generator.strip(), **_entry_from_file(config, generator.strip())}
    else:
        raise ConfigError(f"--generator: give a backend name (cart, mst, sdv, ...) or package.module:Class, "
                          f"not {generator!r}")
    unknown = sorted(set(spec) - {"backend", *ENTRY_KEYS})
    if unknown:
        raise ConfigError(f"--generator-config: unknown key(s) {unknown}; a generator's entry has "
                          f"{['backend', *ENTRY_KEYS]} (its parameters go under params:)")
    backend = spec.get("backend")
    if not isinstance(backend, str) or not backend:
        raise ConfigError(f"--generator: the entry names no backend: {spec!r}")
    return backend, spec


def _entry_from_file(path, backend: str) -> dict:
    if path is None:
        return {}
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"--generator-config: {path}: no such file")
    try:
        entry = yaml.safe_load(file.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"--generator-config: {path}: not valid YAML ({exc})") from None
    if not isinstance(entry, dict):
        raise ConfigError(f"--generator-config: {path}: expected a mapping such as {{params: {{epsilon: 1.0}}}}")
    named = entry.pop("backend", backend)
    if named != backend:
        raise ConfigError(f"--generator-config: {path} names backend {named!r}, but --generator is {backend!r}")
    return entry


def generator_in_hand(generator, config=None, progress=None) -> GeneratorInHand | None:
    """The checked `GeneratorInHand`, or None without a generator. The generator is built once here
    (its class found, its parameters accepted). One that runs in an environment of its own (synthcity's)
    is checked there, by its own library (an unknown plugin or parameter is refused here, not an hour
    later), and is refitted there (`synthrisk.generators.environment_fits`)."""
    from ..generators.base import BACKEND_ENVIRONMENTS, make_generator
    from ..generators.environment_fits import EnvironmentFits
    from ..mia.mama_mia_privbayes import is_privbayes, privbayes_of

    if generator is None:
        if config is not None:
            raise ConfigError("--generator-config: given without --generator")
        return None
    name, spec = generator_spec(generator, config)
    try:
        make_generator(spec, name=name)  # built once: its parameters checked
        if is_privbayes(spec):
            privbayes_of(spec)
    except ConfigError as exc:
        raise ConfigError(f"--generator {name} (--generator-config): {exc}") from None
    if name not in BACKEND_ENVIRONMENTS:
        return GeneratorInHand(name, spec, progress)
    python = _environment_python(spec, f"--generator: {name!r} runs in its own environment "
                                       f"({BACKEND_ENVIRONMENTS[name]})")
    with EnvironmentFits(python) as environment:
        try:
            environment.check(name, spec)
        except ConfigError as exc:
            raise ConfigError(f"--generator {name} (--generator-config): {exc}") from None
    return GeneratorInHand(name, spec, progress, python=str(python), refit_in_environment=True)


def _environment_python(spec: dict, where: str) -> Path:
    """The interpreter of the environment the generator runs in, refused while it is not built."""
    import synthrisk

    from ..generators.environments import built_python

    repo = Path(synthrisk.__file__).resolve().parents[1]
    python = built_python(spec, repo)
    if python is None:
        raise ConfigError(f"{where}, which is not built in {repo}: a workflow run with a synthcity generator builds "
                          "it there (make run CONFIG=\"config/config.yaml config/synthcity.yaml\")")
    return python


def check_shadow_fits(value, generator) -> int | None:
    """--shadow-fits: None, or an even number of refits, at least 8 (4 to train and 4 to judge), of a
    generator in hand (`generator`: the --generator given, or None)."""
    if value is None:
        return None
    if generator is None:
        raise ConfigError("--shadow-fits: given without --generator (there is nothing to refit)")
    if isinstance(value, bool) or not isinstance(value, int) or value < 8 or value % 2:
        raise ConfigError(f"--shadow-fits: give an even number of refits of at least 8, got {value!r}")
    return value
