"""Any SDV 2.0 single-table synthesizer by class name, with metadata built from our schema."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import contextmanager

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


#: threads of every numeric library while an SDV synthesizer fits or samples (`fixed_numerics`)
THREADS = 1


@contextmanager
def fixed_numerics(threads: int = THREADS) -> Iterator[None]:
    """Run the enclosed fit or sample the same way every time on one machine type: torch, the MKL
    under it, OpenMP and OpenBLAS on `threads` threads (a fixed number of threads is MKL's condition
    for reproducible sums; one is what the workflow's generate jobs have, so a test, `synthrisk
    generate` and a workflow job give the same data), torch's deterministic algorithms, and MKL in its
    conditional numerical reproducibility mode (MKL_CBWR=AUTO: the instruction set MKL would choose
    anyway, without the code paths that depend on how arrays happen to be aligned in memory). MKL
    reads MKL_CBWR at its first call, so it is set before torch computes anything in this process
    (and it is inherited by a timeout's child process); a value already set, such as COMPATIBLE for
    comparisons across machines, is kept. The thread counts and torch's settings are restored after."""
    os.environ.setdefault("MKL_CBWR", "AUTO")
    import torch
    from threadpoolctl import threadpool_limits

    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1], warn_only=before[2])


@register("sdv")
class SDVGenerator(Generator):
    """`model` is a class name in `sdv.single_table` (GaussianCopulaSynthesizer, CTGANSynthesizer,
    TVAESynthesizer, CopulaGANSynthesizer, ...); other keys are passed to its constructor.

    Seeding: numpy's, torch's and Python's global generators are seeded before fit and sample.
    On the CPU this makes GaussianCopula, CTGAN and TVAE reproduce identical data for the same seed
    (checked in tests for GaussianCopula and TVAE); so that float sums are not reordered from one
    fit to the next, fit and sample run under `fixed_numerics` (one thread, deterministic
    algorithms, MKL's reproducibility mode).
    """

    libraries = ("sdv", "torch")

    def __init__(self, seed: int = 0, model: str = "GaussianCopulaSynthesizer", **params):
        super().__init__(seed=seed, **params)
        self.model = model

    def fit(self, train: pd.DataFrame, schema: DatasetSchema) -> SDVGenerator:
        os.environ.setdefault("MKL_CBWR", "AUTO")  # before anything imports torch (`fixed_numerics`)
        import sdv.single_table

        cls = getattr(sdv.single_table, self.model, None)
        if cls is None or not isinstance(cls, type):
            known = [n for n in dir(sdv.single_table) if n.endswith("Synthesizer")]
            raise ConfigError(f"sdv: unknown synthesizer {self.model!r}; known: {known}")
        self.table_ = schema.name
        with fixed_numerics():
            seed_everything(self.seed)
            try:
                self.synthesizer_ = cls(sdv_metadata(schema), **self.params)
            except TypeError as exc:
                raise ConfigError(f"sdv: bad parameters for {self.model}: {exc}") from None
            self.dtypes_ = train.dtypes.to_dict()
            self.synthesizer_.fit({self.table_: train})
        return self

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        with fixed_numerics():
            seed_everything(seed)
            out = self.synthesizer_.sample(n)
        if isinstance(out, dict):
            out = out[self.table_]
        for column, dtype in self.dtypes_.items():
            if str(dtype) == "Int64":
                out[column] = pd.to_numeric(out[column]).round()
        return out.astype(self.dtypes_).reset_index(drop=True)
