"""Installed versions of named packages, recorded with every result for provenance."""

from __future__ import annotations

import platform
from importlib import metadata

#: this package's version, stated once: pyproject.toml reads it (statically) and `synthrisk.__version__` is it
SYNTHRISK_VERSION = "0.1.0"


def library_versions(names) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
