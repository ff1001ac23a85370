"""synthrisk: privacy risk of tabular synthetic data and valid inference on DP releases.

    import synthrisk
    result = synthrisk.audit(train, synthetic, holdout, sensitive="income")
    found = synthrisk.dcr(train, synthetic, holdout, sensitive="income")   # one measure at a time
"""

from .versions import SYNTHRISK_VERSION as __version__  # noqa: F401 - the package's version, stated in versions.py

__all__ = ["Audit", "Measurement", "audit", "dcr", "domias", "inference", "linkability", "measure", "mia", "rapid",
           "singling_out", "utility"]

#: names of the audit (synthrisk.api); the others are the measure functions (synthrisk.measure_api)
_AUDIT = {"Audit", "audit"}
#: measure functions that share their name with a subpackage (the method): the subpackage is the
#: attribute, and a call of it forwards to the function (synthrisk._measure_modules)
_SUBPACKAGES = {"dcr", "domias", "mia", "rapid", "utility"}


def __getattr__(name: str):
    # The Python API is imported on first use, so that `import synthrisk` (and the command line's
    # start) does not load pandas and the measures.
    if name in _AUDIT:
        from . import api

        return getattr(api, name)
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name in __all__:
        from . import measure_api

        return getattr(measure_api, name)
    raise AttributeError(f"module 'synthrisk' has no attribute {name!r}")
