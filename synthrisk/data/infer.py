"""Draft a dataset schema from a data file: column types, suggested drops, roles.

What is inferred is a proposal for a person to read and edit, so every guess that matters is said
in a comment of the written YAML:
- types from the values (integers, other numbers, everything else categorical; an integer column
  with at most two values is a flag and so categorical);
- columns suggested for `drop`, each with its reason: identifiers (a distinct value on every row:
  they identify, they do not describe), free text, dates, constant or empty columns;
- every kept column a quasi-identifier except the sensitive ones, which only the user can name.

Domain metadata (levels, bounds) is what DP code may know without reading the records, so it must
come from documentation. Read from the data it would leak the records' extremes and rare levels
into every DP release and void its guarantee; so the draft carries it commented out, to be checked
against documentation and then uncommented, unless `domain_from_data` asks for it explicitly (then
each entry says where it came from).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import DataError
from .schema import CATEGORICAL

#: fewer rows than this and "a distinct value on every row" says nothing about identifiers
MIN_ROWS_FOR_IDENTIFIER = 20
#: strings longer than this on average, or with this many words, read as free text
FREE_TEXT_LENGTH = 40
FREE_TEXT_WORDS = 4
#: share of non-missing values that must parse as dates for a text column to be called one
DATE_SHARE = 0.95
#: values looked at to recognise dates (parsing every row of a large file takes long)
DATE_SAMPLE = 500
#: a categorical column with more levels than this is noted (consider grouping or dropping)
MANY_LEVELS = 100
#: at most this many levels are written out in the draft
LEVELS_WRITTEN = 200


@dataclass(frozen=True)
class ColumnGuess:
    name: str
    type: str                      # categorical | integer | continuous
    drop: str | None = None        # why it should not be used, or None
    note: str | None = None        # anything else the user should know
    levels: tuple | None = None    # categorical levels seen in the data
    bounds: tuple | None = None    # numeric [min, max] seen in the data


def _looks_like_dates(values: pd.Series) -> bool:
    sample = values.drop_duplicates().head(DATE_SAMPLE).astype(str)
    if sample.empty or not sample.str.contains(r"\d").all():
        return False
    # Dates have separators or are long digit runs (20240131); plain short numbers are not dates.
    if not sample.str.contains(r"\d[-/.:T ]\d|^\d{8}$|[A-Za-z]{3}").mean() >= DATE_SHARE:
        return False
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return parsed.notna().mean() >= DATE_SHARE


def _number(value):
    value = value.item() if hasattr(value, "item") else value
    return int(value) if float(value).is_integer() else float(value)


def guess_column(name: str, column: pd.Series) -> ColumnGuess:
    present = column.dropna()
    n_rows, n_present = len(column), len(present)
    if n_present == 0:
        return ColumnGuess(name, CATEGORICAL, drop="empty: every value is missing")
    distinct = present.nunique()
    if distinct == 1:
        return ColumnGuess(name, CATEGORICAL, drop=f"constant: every value is {present.iloc[0]!r}")
    unique_per_row = distinct == n_rows and n_rows >= MIN_ROWS_FOR_IDENTIFIER
    if pd.api.types.is_bool_dtype(present):
        return ColumnGuess(name, CATEGORICAL, levels=tuple(sorted(present.unique().tolist())))
    if pd.api.types.is_numeric_dtype(present):
        values = present.to_numpy(dtype=float)
        whole = bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))
        bounds = (_number(values.min()), _number(values.max()))
        if whole and distinct <= 2:
            return ColumnGuess(name, CATEGORICAL, levels=tuple(sorted(_number(v) for v in np.unique(values))),
                               note="integer with two values: read as a categorical flag")
        if whole and unique_per_row:
            return ColumnGuess(name, "integer", drop="identifier: a distinct whole number on every row",
                               bounds=bounds)
        return ColumnGuess(name, "integer" if whole else "continuous", bounds=bounds)
    text = present.astype(str)
    # Free text and dates first: they are often distinct on every row too, and their reason says more.
    words = text.str.split().str.len().mean()
    if text.str.len().mean() > FREE_TEXT_LENGTH or (words >= FREE_TEXT_WORDS and distinct > n_present / 2):
        return ColumnGuess(name, CATEGORICAL, drop=f"free text: {words:.1f} words on average")
    if _looks_like_dates(text):
        return ColumnGuess(name, CATEGORICAL, drop="a date: as a category every day is its own level; "
                                                  "derive what matters (a year, an age) into a column of its own")
    if unique_per_row:
        return ColumnGuess(name, CATEGORICAL, drop="identifier: a distinct value on every row")
    levels = tuple(sorted(text.unique().tolist()))
    note = (f"{distinct} levels: consider grouping rare levels or dropping the column"
            if distinct > MANY_LEVELS else None)
    return ColumnGuess(name, CATEGORICAL, levels=levels, note=note)


def guess_columns(frame: pd.DataFrame) -> list[ColumnGuess]:
    return [guess_column(str(name), frame[name]) for name in frame.columns]


def dataset_name(path: str | Path, default: str = "data") -> str:
    """A schema name (letters, digits, _) from a file name: data/My File.csv.gz -> My_File."""
    stem = Path(path).name.split(".")[0]
    return re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or default


def _roles(guesses: list[ColumnGuess], sensitive) -> tuple[list[str], list[str]]:
    names = [g.name for g in guesses]
    sensitive = list(dict.fromkeys(sensitive or ()))
    unknown = [c for c in sensitive if c not in names]
    if unknown:
        raise DataError(f"--sensitive: column(s) {unknown} are not in the data; its columns: {names}")
    kept = [g.name for g in guesses if g.drop is None or g.name in sensitive]
    return [c for c in kept if c not in sensitive], sensitive


def infer_schema(frame: pd.DataFrame, name: str = "data", sensitive=(), source: dict | None = None,
                 domain_from_data: bool = False, guesses: list[ColumnGuess] | None = None) -> dict:
    """A schema mapping (as in config/datasets/*.yaml) for `frame`; a column named sensitive is kept
    even when it would be suggested for dropping. `guesses`: `guess_columns(frame)`, when known."""
    guesses = guess_columns(frame) if guesses is None else guesses
    quasi_identifiers, sensitive = _roles(guesses, sensitive)
    used = set(quasi_identifiers) | set(sensitive)
    columns = {}
    for g in guesses:
        if g.name not in used:
            continue
        spec = {"type": g.type}
        if domain_from_data and g.levels is not None:
            spec["levels"] = list(g.levels)
        if domain_from_data and g.bounds is not None and g.type != CATEGORICAL:
            spec["bounds"] = list(g.bounds)
        columns[g.name] = spec
    return {"name": name, "source": source or {"path": "data.csv"}, "columns": columns,
            "quasi_identifiers": quasi_identifiers, "sensitive": sensitive,
            "drop": [g.name for g in guesses if g.name not in used]}


def _flow(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=math.inf, allow_unicode=True, sort_keys=False).strip()


def _key(name: str) -> str:
    return yaml.safe_dump(name, allow_unicode=True).strip().removesuffix("...").strip()


def schema_yaml(frame: pd.DataFrame, name: str, source: dict, sensitive=(), domain_from_data: bool = False,
                what: str = "the data", guesses: list[ColumnGuess] | None = None) -> str:
    """The inferred schema as commented YAML, ready to edit and to use."""
    guesses = guess_columns(frame) if guesses is None else guesses
    schema = infer_schema(frame, name, sensitive, source, domain_from_data, guesses)
    by_name = {g.name: g for g in guesses}
    domain = ("read from the data (--domain-from-data): NOT public metadata; replace with documented values "
              "before trusting any DP guarantee" if domain_from_data else
              "seen in the data, commented out: DP code may only use a domain from documentation, so check "
              "these against it before uncommenting")
    lines = [f"# Drafted by `synthrisk schema infer` from {what} ({len(frame):,} rows, {frame.shape[1]} columns).",
             "# Check every type and role. Columns suggested for `drop` say why.",
             f"# Levels and bounds: {domain}.",
             f"name: {_key(schema['name'])}",
             f"source: {_flow(schema['source'])}",
             "columns:"]
    for column, spec in schema["columns"].items():
        g = by_name[column]
        comment = f"  # {g.note}" if g.note else ""
        lines.append(f"  {_key(column)}:{comment}")
        lines.append(f"    type: {spec['type']}")
        for key, seen in (("levels", g.levels), ("bounds", g.bounds if g.type != CATEGORICAL else None)):
            if seen is None:
                continue
            shown = list(seen)[:LEVELS_WRITTEN]
            more = f" (first {LEVELS_WRITTEN} of {len(seen)})" if len(seen) > LEVELS_WRITTEN else ""
            if key in spec:
                lines.append(f"    {key}: {_flow(shown)}  # from the data{more}")
            else:
                lines.append(f"    # {key}: {_flow(shown)}  # seen in the data{more}")
    lines.append(f"quasi_identifiers: {_flow(schema['quasi_identifiers'])}")
    if schema["sensitive"]:
        lines.append(f"sensitive: {_flow(schema['sensitive'])}")
    else:
        lines.append("sensitive: []  # name at least one (rerun with --sensitive COL, or edit here); "
                     "then take it out of quasi_identifiers")
    if schema["drop"]:
        lines.append("drop:")
        for column in schema["drop"]:
            lines.append(f"  - {_key(column)}  # {by_name[column].drop or 'not used'}")
    else:
        lines.append("drop: []")
    return "\n".join(lines) + "\n"
