"""Installed versions of named packages, recorded with every result for provenance."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata

#: this package's version, stated once: pyproject.toml reads it (statically) and `synthrisk.__version__` is it
SYNTHRISK_VERSION = "0.1.0"


def library_versions(names) -> dict[str, str]:
    """{"python": ..., name: version or "not installed"} (a new dict each call)."""
    return {"python": platform.python_version(), **{name: _version(name) for name in names}}


@cache
def _version(name: str) -> str:
    # Read once per process: the audit's shadow models refit a generator hundreds of times, and each
    # fit's status records the versions (reading the installed metadata was 10 % of a small refit).
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
