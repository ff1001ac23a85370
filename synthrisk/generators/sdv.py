"""Any SDV 2.0 single-table synthesizer by class name, with metadata built from our schema."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from ..data.schema import CATEGORICAL, DatasetSchema
from ..errors import ConfigError
from .base import Generator, register


def sdv_metadata(schema: DatasetSchema):
    from sdv.metadata import Metadata

    columns = {}
    for column, kind in schema.columns.items():
        if kind == CATEGORICAL:
            columns[column] = {"sdtype": "categorical"}
        else:
            # SDV 2.0 dropped `computer_representation`; integer columns are rounded in sample().
            columns[column] = {"sdtype": "numerical"}
    return Metadata.load_from_dict({"tables": {schema.name: {"columns": columns}}})


def seed_everything(seed: int) -> None:
    """SDV draws from numpy's and torch's global generators; seed both (and Python's)."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


@register("sdv")
class SDVGenerator(Generator):
    """`model` is a class name in `sdv.single_table` (GaussianCopulaSynthesizer, CTGANSynthesizer,
    TVAESynthesizer, CopulaGANSynthesizer, ...); other keys are passed to its constructor.

    Seeding: numpy's, torch's and Python's global generators are seeded before fit and sample.
    On the CPU this makes GaussianCopula, CTGAN and TVAE reproduce identical data for the same seed
    (checked in tests for GaussianCopula and TVAE); torch's multithreaded kernels could in
    principle reorder float sums, so torch is run with deterministic algorithms where available.
    """

    libraries = ("sdv", "torch")

    def __init__(self, seed: int = 0, model: str = "GaussianCopulaSynthesizer", **params):
        super().__init__(seed=seed, **params)
        self.model = model

    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> SDVGenerator:
        import sdv.single_table
        import torch

        cls = getattr(sdv.single_table, self.model, None)
        if cls is None or not isinstance(cls, type):
            known = [n for n in dir(sdv.single_table) if n.endswith("Synthesizer")]
            raise ConfigError(f"sdv: unknown synthesizer {self.model!r}; known: {known}")
        torch.use_deterministic_algorithms(True, warn_only=True)
        self.table_ = schema.name
        seed_everything(self.seed)
        try:
            self.synthesizer_ = cls(sdv_metadata(schema), **self.params)
        except TypeError as exc:
            raise ConfigError(f"sdv: bad parameters for {self.model}: {exc}") from None
        self.dtypes_ = train.dtypes.to_dict()
        self.synthesizer_.fit({self.table_: train})
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        seed_everything(seed)
        out = self.synthesizer_.sample(n)
        if isinstance(out, dict):
            out = out[self.table_]
        for column, dtype in self.dtypes_.items():
            if str(dtype) == "Int64":
                out[column] = pd.to_numeric(out[column]).round()
        return out.astype(self.dtypes_).reset_index(drop=True)
