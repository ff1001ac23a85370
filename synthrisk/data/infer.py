"""Draft a dataset schema from a data file: column types, suggested drops, roles.

What is inferred is a proposal for a person to read and edit, so every guess that matters is said
in a comment of the written YAML:
- types from the values (integers, other numbers, everything else categorical; an integer column
  with at most two values is a flag and so categorical);
- columns suggested for `drop`, each with its reason: direct identifiers (they identify, they do not
  describe: a column named like one, such as a name, an e-mail address or a case number, or a text
  column with a distinct value for nearly every record), columns equal value for value to an
  earlier column (`decile_score.1` beside `decile_score`), free text, dates, constant or empty
  columns;
- every kept column a quasi-identifier except the sensitive ones, which only the user can name; a
  column equal to a sensitive column is dropped, never kept as a quasi-identifier that would give
  the sensitive value away.

Domain metadata (levels, bounds) is what DP code may know without reading the records, so it must
come from documentation. Read from the data it would leak the records' extremes and rare levels
into every DP release and void its guarantee; so the draft carries it commented out, to be checked
against documentation and then uncommented, unless `domain_from_data` asks for it explicitly (then
each entry says where it came from).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import DataError
from .types import CATEGORICAL

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
#: a text column with at least this share of distinct values among its non-missing ones is a direct
#: identifier: nearly every value points to one record (a case number, a name with a few namesakes)
IDENTIFIER_SHARE = 0.9
#: a column named like an identifier is called one only when it takes more than two values and at
#: least this share of distinct values, or more than MANY_LEVELS: a yes/no `telephone` or an
#: urban/rural `address` (German credit, student performance) describes, it does not identify
NAMED_IDENTIFIER_SHARE = 0.1

# Column names of direct identifiers, matched against the whole name in snake case (`FirstName`,
# `first name` and `first_name.1` all read as `first_name`), each with what it reads as. Only whole
# names match, so a measurement (`last_visit_days`, `is_recid`, `paid`) never does; a numeric
# column is named an identifier only when its values are whole numbers, never a measurement.
IDENTIFIER_NAMES = tuple((re.compile(pattern), kind) for pattern, kind in (
    (r"(.+_)?(id|uid|uuid|guid|identifier)", "an identifier code"),
    (r"(full|first|last|given|middle|family|maiden|sur|fore|nick|user|person|patient|client|customer)?_?name"
     r"|first|last|fname|lname", "a person's name"),
    (r"ssn|social_security(_number|_no)?|national_(id|insurance)(_number|_no)?|passport(_number|_no)?"
     r"|nhs_(number|no)|mrn|medical_record(_number|_no)?|tax_(id|number|no)|drivers?_licen[cs]e(_number|_no)?"
     r"|licen[cs]e_(number|no)", "an official identification number"),
    (r"e_?mail(_address)?", "an e-mail address"),
    (r"(tele)?phone(_number|_no)?|mobile(_phone|_number|_no)?|cell_?phone|fax(_number|_no)?", "a telephone number"),
    (r"(street|home|postal|mailing)?_?address(_line)?|street|ip_address|mac_address", "an address"),
    (r"(.+_)?(case|record|account|acct|card|credit_card|docket|booking|ticket|serial|policy|member|customer"
     r"|client|patient|employee|student|claim|invoice|order)_?(number|no|num|nr)|iban|login|username",
     "a case, record or account number"),
))
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
    same_as: str | None = None     # the first column this one equals value for value, if any


def _looks_like_dates(values: pd.Series) -> bool:
    sample = values.drop_duplicates().head(DATE_SAMPLE).astype(str)
    if sample.empty or not sample.str.contains(r"\d").all():
        return False
    # Dates have separators or are long digit runs (20240131); plain short numbers are not dates.
    if not sample.str.contains(r"\d[-/.:T ]\d|^\d{8}$|[A-Za-z]{3}").mean() >= DATE_SHARE:
        return False
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return parsed.notna().mean() >= DATE_SHARE


def _snake(name: str) -> str:
    """`FirstName`, `first name`, `First-Name.1` -> `first_name`: the name to match identifier names
    against (a trailing number, such as pandas' `.1` for a repeated header, is not part of it)."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").lower()
    return re.sub(r"_?\d+$", "", name)


def identifier_name(name: str) -> str | None:
    """What a column's name says it holds when it is a direct identifier's ('a person's name'), else None."""
    snake = _snake(name)
    return next((kind for pattern, kind in IDENTIFIER_NAMES if pattern.fullmatch(snake)), None)


def _named_identifier(name: str, distinct: int, n_present: int) -> str | None:
    kind = identifier_name(name)
    if kind is None or distinct <= 2 or (distinct < NAMED_IDENTIFIER_SHARE * n_present and distinct <= MANY_LEVELS):
        return None
    return (f"direct identifier: named as {kind} ({distinct:,} distinct values in {n_present:,} records); "
            "it names a record instead of describing it, so drop it rather than use it as a quasi-identifier")


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
        # A number is an identifier by its name only when it is a whole number (a code, not a measurement).
        named = _named_identifier(name, distinct, n_present) if whole else None
        if named:
            return ColumnGuess(name, "integer", drop=named, bounds=bounds)
        if whole and unique_per_row:
            return ColumnGuess(name, "integer", drop="direct identifier: a distinct whole number on every row; "
                                                     "drop it rather than use it as a quasi-identifier",
                               bounds=bounds)
        return ColumnGuess(name, "integer" if whole else "continuous", bounds=bounds)
    text = present.astype(str)
    # A name that says what the column is comes first (an address is free text too, and says more).
    named = _named_identifier(name, distinct, n_present)
    if named:
        return ColumnGuess(name, CATEGORICAL, drop=named)
    # Free text and dates next: they are often distinct on every row too, and their reason says more.
    words = text.str.split().str.len().mean()
    if text.str.len().mean() > FREE_TEXT_LENGTH or (words >= FREE_TEXT_WORDS and distinct > n_present / 2):
        return ColumnGuess(name, CATEGORICAL, drop=f"free text: {words:.1f} words on average")
    if _looks_like_dates(text):
        return ColumnGuess(name, CATEGORICAL, drop="a date: as a category every day is its own level; "
                                                  "derive what matters (a year, an age) into a column of its own")
    if n_present >= MIN_ROWS_FOR_IDENTIFIER and distinct >= IDENTIFIER_SHARE * n_present:
        every = "a distinct value on every row" if unique_per_row else \
            f"{distinct:,} distinct values in {n_present:,} records ({distinct / n_present:.1%})"
        return ColumnGuess(name, CATEGORICAL, drop=f"direct identifier: {every}, so nearly every value points to "
                                                   "one record; drop it rather than use it as a quasi-identifier "
                                                   "(no grouping of levels makes it one)")
    levels = tuple(sorted(text.unique().tolist()))
    note = (f"{distinct} levels: consider grouping rare levels or dropping the column"
            if distinct > MANY_LEVELS else None)
    return ColumnGuess(name, CATEGORICAL, levels=levels, note=note)


def _equal(a: pd.Series, b: pd.Series) -> bool:
    """The same value on every row, missing in the same rows (numbers compared as numbers)."""
    missing = a.isna().to_numpy()
    if not np.array_equal(missing, b.isna().to_numpy()):
        return False
    a, b = a[~missing], b[~missing]
    numeric_a, numeric_b = pd.api.types.is_numeric_dtype(a), pd.api.types.is_numeric_dtype(b)
    if numeric_a != numeric_b:
        return False
    if numeric_a:
        return bool(np.array_equal(a.to_numpy(dtype=float), b.to_numpy(dtype=float)))
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())


def _mark_duplicates(frame: pd.DataFrame, guesses: list[ColumnGuess]) -> list[ColumnGuess]:
    """A column equal to an earlier one is suggested for drop as its duplicate (an empty or constant
    column keeps that reason). Only columns with the same count of missing and of distinct values
    are compared."""
    seen: dict[tuple, list[int]] = {}
    out = list(guesses)
    for j, guess in enumerate(guesses):
        if guess.drop and guess.drop.startswith(("empty", "constant")):
            continue
        column = frame.iloc[:, j]
        key = (int(column.isna().sum()), int(column.nunique()))
        first = next((i for i in seen.get(key, []) if _equal(frame.iloc[:, i], column)), None)
        if first is None:
            seen.setdefault(key, []).append(j)
            continue
        original = guesses[first]
        also = f"; {original.name!r} is suggested for drop too ({original.drop.split(':')[0]})" if original.drop else ""
        out[j] = replace(guess, same_as=original.name, drop=guess.drop or (
            f"duplicate of {original.name!r}: the same value on every row (missing in the same rows), "
            f"so it adds nothing{also}"))
    return out


def guess_columns(frame: pd.DataFrame) -> list[ColumnGuess]:
    guesses = [guess_column(str(name), frame.iloc[:, j]) for j, name in enumerate(frame.columns)]
    return _mark_duplicates(frame, guesses)


def dataset_name(path: str | Path, default: str = "data") -> str:
    """A schema name (letters, digits, _) from a file name: data/My File.csv.gz -> My_File."""
    stem = Path(path).name.split(".")[0]
    return re.sub(r"[^A-Za-z0-9_]+", "_", stem).strip("_") or default


def _sensitive(guesses: list[ColumnGuess], sensitive) -> list[str]:
    names = [g.name for g in guesses]
    sensitive = list(dict.fromkeys(sensitive or ()))
    unknown = [c for c in sensitive if c not in names]
    if unknown:
        raise DataError(f"--sensitive: column(s) {unknown} are not in the data; its columns: {names}")
    return sensitive


def _with_roles(guesses: list[ColumnGuess], sensitive: list[str]) -> list[ColumnGuess]:
    """A column equal to a sensitive one (before or after it) is dropped: as a quasi-identifier it
    would hand every attacker the sensitive value."""
    group = {g.name: g.same_as or g.name for g in guesses}
    sensitive_of = {group[c]: c for c in sensitive}
    out = []
    for g in guesses:
        twin = sensitive_of.get(group[g.name])
        if twin is not None and g.name not in sensitive:
            g = replace(g, drop=f"equal to the sensitive column {twin!r} value for value: as a quasi-identifier "
                                "it would give the sensitive value away")
        out.append(g)
    return out


def _roles(guesses: list[ColumnGuess], sensitive) -> tuple[list[str], list[str]]:
    kept = [g.name for g in guesses if g.drop is None or g.name in sensitive]
    return [c for c in kept if c not in sensitive], sensitive


def infer_schema(frame: pd.DataFrame, name: str = "data", sensitive=(), source: dict | None = None,
                 domain_from_data: bool = False, guesses: list[ColumnGuess] | None = None) -> dict:
    """A schema mapping (as in config/datasets/*.yaml) for `frame`; a column named sensitive is kept
    even when it would be suggested for dropping. `guesses`: `guess_columns(frame)`, when known."""
    guesses = guess_columns(frame) if guesses is None else guesses
    sensitive = _sensitive(guesses, sensitive)
    guesses = _with_roles(guesses, sensitive)
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
    by_name = {g.name: g for g in _with_roles(guesses, schema["sensitive"])}
    domain = ("read from the data (--domain-from-data): NOT public metadata; replace with documented values "
              "before trusting any DP guarantee" if domain_from_data else
              "seen in the data, commented out: DP code may only use a domain from documentation, so check "
              "these against it before uncommenting")
    lines = [f"# Drafted by `synthrisk schema infer` from {what} ({len(frame):,} rows, {frame.shape[1]} columns).",
             "# Check every type and role. Columns suggested for `drop` say why: direct identifiers (names, "
             "case numbers, values nearly unique per record) and duplicated columns are never quasi-identifiers.",
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
