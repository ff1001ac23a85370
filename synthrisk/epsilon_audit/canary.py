"""The worst-case canary of a marginal-based DP generator, and the neighbouring dataset holding it.

The canary is a record the public domain allows (the schema's `levels` and `bounds` only) whose cells
are as rare as possible in the fixed dataset: per column, a categorical level or an edge bin of the
numeric bounds with the fewest records, combined into a record whose cell combination no record
of the data occupies. In a marginal release every count it touches then moves from (near) zero, so
its presence is as visible as one record can make it. Missing values are left out of the
candidates: the canary is a record every generator must be able to represent.

Cells are those of MST's discretised domain (synthrisk.generators.mst.MSTColumn, the same levels and
the same `bins` equal-width bins of the public bounds), so that "matches the canary" means exactly
what MST's marginals see.

The dataset "with canary" is the fixed dataset's neighbour under the audited generator's own
relation (synthrisk.epsilon_audit.neighbours): replace-one (n public, as MST's and PrivBayes's
accounting assume), the fixed dataset with one record replaced by the canary, the replaced record
being one that shares no cell with it (the largest change a replacement can make to the
marginals); add-remove (AIM's, DP-SGD's), the fixed dataset with the canary added.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from ..generators.mst import MSTColumn
from .neighbours import ADD_REMOVE, check_relation

#: per column, how many of its rarest public values are tried when combining them into an absent record
CANDIDATES_PER_COLUMN = 2


@dataclass(frozen=True)
class Canary:
    """The canary's values (a record as the data hold it) and its cell per column (the column's code in
    the discretised domain)."""

    record: dict
    cells: dict[str, int]
    bins: int

    def domain(self, schema, columns) -> dict[str, MSTColumn]:
        return {c: MSTColumn.public(c, schema, self.bins) for c in columns}


def _column_candidates(column: MSTColumn, schema, values: pd.Series) -> list[tuple[object, int]]:
    """(value, cell) of the column's public values, rarest first: the levels of a categorical column,
    the two edge bins of a numeric one (the value at the bound)."""
    codes = column.encode(values)
    counts = np.bincount(codes, minlength=column.size)
    if column.categorical:
        options = [(level, k) for k, level in enumerate(column.levels[:-1])]  # the last level is "missing"
    else:
        low, high = schema.public_bounds(column.name)
        if schema.columns[column.name] == "integer":  # the canary must be a value the column can hold
            low, high = int(np.ceil(low)), int(np.floor(high))
        # the cell is the value's own (an integer bound rounded inward may leave a narrow edge bin)
        options = [(value, int(column.encode(pd.Series([value], dtype=float))[0])) for value in (low, high)]
    # stable sort: ties keep the public order, so the canary is the same on every run
    return sorted(options, key=lambda option: counts[option[1]])[:CANDIDATES_PER_COLUMN]


def worst_case_canary(data: pd.DataFrame, schema, bins: int) -> Canary:
    """The rarest absent record of `data` (module doc); a DataError when every combination of the
    columns' rarest public values already occurs in the data."""
    if data.empty:
        raise DataError("privacy audit: the dataset is empty; a canary needs a dataset to be absent from")
    domain = {c: MSTColumn.public(c, schema, bins) for c in data.columns}
    codes = np.column_stack([domain[c].encode(data[c]) for c in data.columns])
    occupied = {tuple(row) for row in codes}
    candidates = [_column_candidates(domain[c], schema, data[c]) for c in data.columns]
    for combination in itertools.product(*candidates):
        cells = tuple(cell for _, cell in combination)
        if cells not in occupied:
            record = {c: value for c, (value, _) in zip(data.columns, combination, strict=True)}
            return Canary(record=record, cells=dict(zip(data.columns, map(int, cells), strict=True)), bins=bins)
    raise DataError(
        f"privacy audit: every combination of the {CANDIDATES_PER_COLUMN} rarest public values of columns "
        f"{list(data.columns)} occurs in the data, so no worst-case canary is absent from it; declare a wider "
        "public domain (levels, bounds) or audit on fewer records")


def matching_cells(table: pd.DataFrame, canary: Canary, schema) -> np.ndarray:
    """Per row of `table`, in how many columns its cell is the canary's."""
    domain = canary.domain(schema, table.columns)
    return sum((domain[c].encode(table[c]) == canary.cells[c]).astype(np.int64) for c in table.columns)


def canary_matches(table: pd.DataFrame, canary: Canary, schema) -> np.ndarray:
    """Per row of `table`, whether all of its cells are the canary's."""
    return matching_cells(table, canary, schema) == len(table.columns)


def replaced_row(data: pd.DataFrame, canary: Canary, schema) -> int:
    """The record the canary replaces: the first sharing the fewest cells with it (none, usually)."""
    return int(np.argmin(matching_cells(data, canary, schema)))


def with_canary(data: pd.DataFrame, canary: Canary, schema, neighbours: str) -> pd.DataFrame:
    """The neighbour of `data` holding the canary under the relation `neighbours` (module doc):
    replace-one, the same n with one record replaced; add-remove, n + 1 records."""
    check_relation(neighbours)
    if canary_matches(data, canary, schema).any():
        raise DataError("privacy audit: the canary's cells already occur in the data; it would not be a new record")
    row = replaced_row(data, canary, schema)
    if neighbours == ADD_REMOVE:  # a copy of a record (its dtypes) made into the canary, appended
        added = data.iloc[[row]].copy()
        for column, value in canary.record.items():
            added.loc[added.index[0], column] = value
        return pd.concat([data, added], ignore_index=True)
    out = data.copy()
    for column, value in canary.record.items():
        out.loc[row, column] = value
    return out
