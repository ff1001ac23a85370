"""Checks and preparation shared by the three evaluators: every refusal names the argument."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID, row_ids
from ..errors import ConfigError, DataError, SchemaError

# Attacks per evaluator unless a caller says otherwise (anonymeter uses 500; more attacks, narrower
# intervals, and the evaluators stay seconds long at 30k records).
DEFAULT_N_ATTACKS = 2000
# Relabellings of the singling-out permutation test (its p-value is at least 1 / (B + 1)).
DEFAULT_PERMUTATIONS = 999

def check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name}: must be a positive integer, got {value!r}")
    return int(value)


def check_confidence(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        raise ConfigError(f"confidence: must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def check_columns(columns, schema: DatasetSchema, name: str) -> list[str]:
    """A non-empty list of distinct schema columns."""
    if isinstance(columns, str) or not hasattr(columns, "__iter__"):
        raise ConfigError(f"{name}: must be a list of column names, got {columns!r}")
    columns = list(columns)
    if not columns:
        raise ConfigError(f"{name}: is empty; the attacker needs at least one column")
    unknown = [c for c in columns if c not in schema.columns]
    if unknown:
        raise ConfigError(f"{name}: column(s) {unknown} are not in schema {schema.origin} "
                          f"(columns: {list(schema.columns)})")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise ConfigError(f"{name}: column(s) {repeated} are listed more than once")
    return columns


def prepare(frame, schema: DatasetSchema, name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """(the frame conformed to the schema, its row ids: the `row_id` column or the positions)."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{name}: must be a pandas DataFrame, got {type(frame).__name__}")
    if len(frame) == 0:
        what = ("the control set (real records never given to the generator) is empty; the risk is "
                "measured against it, so hold out some real records") if name == "control" else "has no records"
        raise DataError(f"{name}: {what}")
    ids = row_ids(frame)
    try:
        conformed = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=name)
    except SchemaError as exc:  # the frame does not fit the schema: a data problem, named as such
        raise DataError(str(exc)) from None
    return conformed, ids


def prepare_all(members, synthetic, control, schema: DatasetSchema):
    """Conformed members, synthetic and control frames with the row ids of members and control.

    Members and control must be disjoint when both carry row ids: the control set stands for
    people who were not in the training data."""
    if not isinstance(schema, DatasetSchema):
        raise ConfigError(f"schema: must be a DatasetSchema, got {type(schema).__name__}")
    both_ids = all(isinstance(f, pd.DataFrame) and ROW_ID in f.columns for f in (members, control))
    members, member_ids = prepare(members, schema, "members")
    synthetic, _ = prepare(synthetic, schema, "synthetic")
    control, control_ids = prepare(control, schema, "control")
    # Positions (no row_id column) say nothing about identity; row ids do.
    shared = np.intersect1d(member_ids, control_ids) if both_ids else []
    if len(shared):
        raise DataError(f"control: {len(shared)} record(s) (row ids such as {shared[:3].tolist()}) are also "
                        "members; the control set must hold real records never given to the generator")
    return members, member_ids, synthetic, control, control_ids


def sub_schema(schema: DatasetSchema, columns: list[str]) -> DatasetSchema:
    """The schema restricted to `columns` (for a Gower space over the attacker's columns only)."""
    return replace(schema, columns={c: schema.columns[c] for c in columns}, quasi_identifiers=[],
                   sensitive=[])


def streams(seed, n: int) -> list[np.random.Generator]:
    """`n` independent generators from one seed (main, control, baseline, ... draws)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed: must be a non-negative integer, got {seed!r}")
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(n)]


def targets(n_rows: int, n_attacks: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of min(n_attacks, n_rows) records drawn without replacement."""
    return rng.choice(n_rows, size=min(n_attacks, n_rows), replace=False)
