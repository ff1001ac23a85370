"""Datasets: schemas, loaders, the simulator and the member/non-member/aux split."""

from .loaders import load_dataset
from .schema import DatasetSchema, load_schema
from .split import split_real

__all__ = ["DatasetSchema", "load_schema", "load_dataset", "split_real"]
