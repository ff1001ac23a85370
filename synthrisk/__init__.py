"""synthrisk: privacy risk of tabular synthetic data and valid inference on DP releases.

    import synthrisk
    result = synthrisk.audit(train, synthetic, holdout, sensitive="income")
    found = synthrisk.measure("dcr", train, synthetic, holdout, sensitive="income")   # one measure
"""

from .versions import SYNTHRISK_VERSION as __version__  # noqa: F401 - the package's version, stated in versions.py

__all__ = ["Audit", "Measurement", "audit", "measure"]

#: where each name of the Python API lives
_HOMES = {"Audit": "api", "audit": "api", "Measurement": "measure_api", "measure": "measure_api"}


def __getattr__(name: str):
    # The Python API is imported on first use, so that `import synthrisk` (and the command line's
    # start) does not load pandas and the measures.
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'synthrisk' has no attribute {name!r}")
