"""`synthrisk.dcr`, `mia`, `domias`, `rapid` and `utility` name both a subpackage (the method) and a
measure function of the uniform API (`synthrisk.measure_api`). Once a subpackage is imported, the
import system makes it the package's attribute of that name, so each of those subpackages makes
itself callable: `synthrisk.dcr(train, synthetic, holdout)` calls `synthrisk.measure_api.dcr`, and
`synthrisk.dcr.core` is still the module."""

from __future__ import annotations

import inspect
import sys
import types


class MeasureModule(types.ModuleType):
    """A subpackage that a call forwards to the measure function of the same name."""

    @property
    def _function(self):
        from . import measure_api

        return getattr(measure_api, self.__name__.rsplit(".", 1)[-1])

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._function)


def callable_as_measure(name: str) -> None:
    """Make the module `name` (a subpackage being imported) call its measure function."""
    sys.modules[name].__class__ = MeasureModule
