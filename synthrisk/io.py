"""Reading and writing tables and JSON sidecars in the formats of the data-flow contract."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pandas as pd

from .errors import DataError

TABLE_SUFFIXES = {".csv", ".parquet", ".pq"}


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet file, with an error naming the file when it cannot be read.

    Repeated column names are refused (pandas would rename the second `age` to `age.1`, and a
    command that reads one column by name would silently take the first)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file does not exist")
    if path.is_dir():
        raise DataError(f"{path}: is a folder, not a table file")
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError(f"{path}: unsupported file type {suffix!r}; use .csv or .parquet")
    try:
        if suffix == ".csv":
            _check_unique(_csv_header(path), path)
            # keep_default_na=False keeps strings such as "NA" or "?" as levels; only empty
            # cells are missing, so nothing is reinterpreted behind the user's back.
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_parquet(path)
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with the file name
        raise DataError(f"{path}: cannot be read as {suffix[1:]}: {exc}") from exc
    _check_unique([str(c) for c in frame.columns], path)
    return frame


def _csv_header(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        return next(csv.reader(handle), [])


def _check_unique(names: list[str], path: Path) -> None:
    seen, repeated = set(), []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    if repeated:
        raise DataError(f"{path}: duplicate column name(s) {repeated}; each column needs a unique name: "
                        "rename or remove the repeats")


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write CSV or Parquet by the suffix (anything else is refused), atomically: the file appears
    complete or not at all."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DataError(f"{path}: unsupported file type {suffix!r} for a table; use .csv or .parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        if suffix == ".csv":
            df.to_csv(partial, index=False)
        else:
            df.to_parquet(partial, index=False)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_json(obj: dict, path: str | Path) -> None:
    """Write JSON atomically: the file appears complete or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n"
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        partial.write_text(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def read_json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text())


def finite_or_null(value):
    """`value` with every NaN or infinity replaced by None, so that it is valid (strict) JSON:
    null reads as "undefined", never as a number."""
    import math

    import numpy as np

    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(v) for v in value]
    if isinstance(value, np.ndarray):
        return [finite_or_null(v) for v in value.tolist()]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


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
