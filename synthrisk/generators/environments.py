"""Generators that run in an environment of their own, built by the workflow from a requirements file.

A config entry names it with `environment: path/to/requirements.txt` (a relative path is read from
the repository, like dataset schema paths); a built-in backend may have one by default
(BACKEND_ENVIRONMENTS: synthcity). The environment is a virtualenv called `.venv-<file stem>`:
in the repository for files under its `envs/` (so `.venv-synthcity` is built once for every run),
next to the requirements file otherwise. Its jobs run synthrisk's generate entry point with that
interpreter, so the file must allow what that entry point imports (GENERATE_JOB_REQUIREMENTS, which
is installed with it, at versions pip finds compatible with the file's own pins).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ConfigError
from .base import BACKEND_ENVIRONMENTS

#: the packages the generate job itself imports, unpinned: pip picks versions that fit the file
GENERATE_JOB_REQUIREMENTS = "envs/generate-job.txt"


def requirements_file(spec: dict, repo: str | Path) -> Path | None:
    """The requirements file of a generator's own environment, or None for the main environment."""
    path = spec.get("environment") or BACKEND_ENVIRONMENTS.get(spec.get("backend"))
    if path is None:
        return None
    path = Path(path)
    return path if path.is_absolute() else Path(repo) / path


def environment_dir(requirements: Path, repo: str | Path) -> Path:
    repo = Path(repo).resolve()
    requirements = requirements.resolve()
    home = repo if requirements.parent == repo / "envs" else requirements.parent
    return home / f".venv-{requirements.stem}"


def generator_environments(specs: dict[str, dict], repo: str | Path) -> dict[str, Path]:
    """{environment name: requirements file} of the configured generators; checked at DAG build time:
    the file must exist, and two files may not share a name (they would share a virtualenv)."""
    found: dict[str, Path] = {}
    for name, spec in specs.items():
        requirements = requirements_file(spec, repo)
        if requirements is None:
            continue
        if not requirements.is_file():
            raise ConfigError(f"generators.{name}.environment: requirements file {str(requirements)!r} does not "
                              "exist (a relative path is read from the repository)")
        env = requirements.stem
        if env in found and found[env].resolve() != requirements.resolve():
            raise ConfigError(f"generators.{name}.environment: {str(requirements)!r} and {str(found[env])!r} would "
                              f"both be built as .venv-{env}; rename one of them")
        found[env] = requirements
    return found


def generator_environment(spec: dict, repo: str | Path) -> str | None:
    requirements = requirements_file(spec, repo)
    return None if requirements is None else requirements.stem


def built_python(spec: dict, repo: str | Path) -> Path | None:
    """The interpreter of a generator's own environment once the workflow has built it (its `.installed`
    stamp), else None: for the attacks that run a generator's own code there (MAMA-MIA on PrivBayes)."""
    requirements = requirements_file(spec, repo)
    if requirements is None:
        return None
    python = interpreter(requirements, repo)
    return python if python.exists() and (python.parents[1] / ".installed").exists() else None


def environment_variables(hash_seed: int | None) -> dict:
    """This process's environment for a process of a generator's own environment: this checkout of
    synthrisk first on PYTHONPATH (that environment has synthrisk's dependencies, not synthrisk), and
    `hash_seed` as PYTHONHASHSEED (synthcity's PrivBayes iterates over sets: a study that reruns fixes it)."""
    package_root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
            **({} if hash_seed is None else {"PYTHONHASHSEED": str(hash_seed % 2**32)})}


def interpreter(requirements: Path, repo: str | Path) -> Path:
    """The Python of the environment built from `requirements` (`environment_dir`), built or not."""
    return environment_dir(requirements, repo) / "bin" / "python"
