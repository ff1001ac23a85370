"""Load a dataset described by a schema: built-in Adult, the simulator, or a user file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import SchemaError
from ..io import ReadOptions, read_table
from .adult import load_adult
from .schema import DatasetSchema
from .simulate import simulate

#: the schemas of the datasets the package ships (the workflow's config/datasets/ links to them)
BUILTIN_SCHEMAS = Path(__file__).resolve().parent / "builtin"


def builtin_schema(name: str) -> DatasetSchema:
    """The schema of a dataset the package ships: `adult` (UCI Adult) or `simulation` (the simulator)."""
    from .schema import load_schema

    known = sorted(p.stem for p in BUILTIN_SCHEMAS.glob("*.yaml"))
    if name not in known:
        raise SchemaError(f"no built-in dataset {name!r}; built in: {known}")
    return load_schema(BUILTIN_SCHEMAS / f"{name}.yaml")


def load_raw(schema: DatasetSchema) -> pd.DataFrame:
    source = schema.source
    kinds = [k for k in ("builtin", "path", "simulate", "frame") if k in source]
    if len(kinds) != 1:
        raise SchemaError(f"{schema.origin}: 'source' needs exactly one of builtin, path, simulate; got {kinds}")
    if "frame" in source:
        raise SchemaError(f"{schema.origin}: source 'frame' ({source['frame']}) was a DataFrame given in Python; "
                          "to load the dataset from this schema, write the records to a file and set source.path")
    options = source.get("options", {})
    if "builtin" in source:
        if source["builtin"] == "adult":
            unknown = set(options) - {"part"}
            if unknown:
                raise SchemaError(f"{schema.origin}: unknown source option(s) {sorted(unknown)} for adult")
            return load_adult(**options)
        raise SchemaError(f"{schema.origin}: unknown builtin source {source['builtin']!r}")
    if "simulate" in source:
        return simulate(**source["simulate"])
    path = Path(source["path"])
    if not path.is_absolute() and not path.exists():
        raise SchemaError(
            f"{schema.origin}: source.path '{path}' does not exist. A relative source.path is read from the "
            f"working directory ({Path.cwd()}; in the workflow, the run's --directory), not from the schema "
            "file's folder: give an absolute path, or one relative to that directory")
    return read_table(path, ReadOptions.from_mapping(options, what=f"{schema.origin}: source.options"))


def load_dataset(schema: DatasetSchema) -> pd.DataFrame:
    """The dataset as the schema types it: exactly its columns, missing values kept."""
    frame = schema.conform(load_raw(schema), what=f"dataset '{schema.name}'")
    schema.check_levels(frame, what=f"dataset '{schema.name}'")
    return frame
