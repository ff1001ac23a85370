"""synthrisk: privacy risk of tabular synthetic data and valid inference on DP releases.

    import synthrisk
    result = synthrisk.audit(train, synthetic, holdout, sensitive="income")
"""

__version__ = "0.1.0"
__all__ = ["Audit", "audit"]


def __getattr__(name: str):
    # The Python API is imported on first use, so that `import synthrisk` (and the command line's
    # start) does not load pandas and the measures.
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'synthrisk' has no attribute {name!r}")
