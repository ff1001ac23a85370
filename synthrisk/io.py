"""Reading and writing tables and JSON sidecars in the formats of the data-flow contract."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .errors import DataError

TABLE_SUFFIXES = {".csv", ".parquet", ".pq"}


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet file, with an error naming the file when it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file does not exist")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            # keep_default_na=False keeps strings such as "NA" or "?" as levels; only empty
            # cells are missing, so nothing is reinterpreted behind the user's back.
            return pd.read_csv(path, keep_default_na=False, na_values=[""])
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - re-raised with the file name
        raise DataError(f"{path}: cannot be read as {suffix[1:]}: {exc}") from exc
    raise DataError(f"{path}: unsupported file type {suffix!r}; use .csv or .parquet")


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, index=False)


def write_json(obj: dict, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def read_json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
