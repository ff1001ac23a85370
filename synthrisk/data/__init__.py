"""Datasets: schemas, loaders, the simulator and the member/non-member/aux split."""

from .schema import DatasetSchema, load_schema
from .loaders import load_dataset
from .split import split_real

__all__ = ["DatasetSchema", "load_schema", "load_dataset", "split_real"]
