"""One value, one meaning: the canonical text of a categorical value, whatever file format, reader
type guess or spelling it arrived in.

Attacks compare categorical values as text, exactly. So formatting that carries no information
would otherwise invent or hide a leak: a trailing space, a string in Unicode NFD against NFC, a
code read as the integer 1 from one CSV and as the text "01" from another (pandas guesses each
file's types on its own), `true` against `True`, or 1/0 in a file whose column is boolean in the
others. Every categorical value is therefore written in one canonical form before any measure
runs:

- text: Unicode NFC, surrounding whitespace removed, case folded only where the schema says so
  (`ignore_case: true`);
- booleans and their spellings (`true`, `FALSE`, ...) as `True` / `False`; 1 and 0 as `True` /
  `False` only in a column that is boolean (`boolean_columns`: it holds a boolean somewhere and
  nothing but booleans and 0/1), decided once for all the files read together (counted as a
  change, typed or not: the file wrote the truth value as a number);
- numbers, typed or written as text, as the number they are: whole ones as the integer (`1.0`,
  `"01"`, `"+1"` -> `1`; exact, with no detour through floating point), others as Python writes
  the float (`"1.50"` -> `1.5`).

Every change made to a text value is counted per kind (`CHANGE_KINDS`), so that the audit can say
what it normalised, per file and column; typed values (a float 1.0 pandas read from a column with a
blank cell, a bool from Parquet) are written canonically without being counted as changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import numpy as np
import pandas as pd

#: what a normalisation of a text value changed, by kind, as the audit reports it
CHANGE_KINDS = {
    "whitespace": "surrounding whitespace removed",
    "unicode": "Unicode written in another normal form (NFC used)",
    "case": "letter case folded (the schema's ignore_case)",
    "boolean": "boolean spelling unified (True/False)",
    "number": "number written another way (leading zeros, '+', trailing '.0')",
}
TRUE, FALSE = "True", "False"
_BOOLEAN_TEXT = {"true": TRUE, "false": FALSE}
_BOOLEAN_NUMBERS = {1: TRUE, 0: FALSE}
_INTEGER = re.compile(r"[+-]?\d+(\.0*)?")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _number_text(number) -> str:
    """A finite number as its canonical text: whole numbers as integers, others as the float's
    shortest text (`str`, so that a float32 0.1 stays "0.1")."""
    if isinstance(number, (int, np.integer)):
        return str(int(number))
    return str(int(number)) if float(number).is_integer() else str(number)


def _text_number(text: str) -> str | None:
    """The canonical text of a number written as text, or None when `text` is not a plain number."""
    if _INTEGER.fullmatch(text):
        return str(int(text.split(".")[0]))  # exact for codes of any length
    if _DECIMAL.fullmatch(text):
        value = float(text)
        return _number_text(value) if np.isfinite(value) else None
    return None


def canonical_value(value, boolean: bool = False, ignore_case: bool = False) -> tuple[str, tuple[str, ...]]:
    """(canonical text, kinds of change made to a text value) of one non-missing value."""
    if isinstance(value, (bool, np.bool_)):
        return (TRUE if value else FALSE), ()
    if isinstance(value, (int, np.integer, float, np.floating)):
        if not np.isfinite(float(value)):
            return str(value), ()
        if boolean and float(value) in _BOOLEAN_NUMBERS:
            return _BOOLEAN_NUMBERS[int(value)], ("boolean",)
        return _number_text(value), ()
    if not isinstance(value, str):
        return str(value), ()
    changes = []
    text = unicodedata.normalize("NFC", value)
    if text != value:
        changes.append("unicode")
    stripped = text.strip()
    if stripped != text:
        changes.append("whitespace")
    text = stripped
    if text.lower() in _BOOLEAN_TEXT:
        canonical = _BOOLEAN_TEXT[text.lower()]
        return canonical, tuple(changes + (["boolean"] if canonical != text else []))
    number = _text_number(text)
    if number is not None:
        if boolean and number in ("0", "1"):
            return _BOOLEAN_NUMBERS[int(number)], tuple(changes + ["boolean"])
        return number, tuple(changes + (["number"] if number != text else []))
    if ignore_case:
        folded = text.casefold()
        if folded != text:
            changes.append("case")
        text = folded
    return text, tuple(changes)


#: what `pandas.api.types.infer_dtype` calls a column that holds no bool beside a number (where
#: `True == 1` would make one dict key of two values)
_NO_BOOL_AND_NUMBER = {"string", "empty", "boolean", "integer", "floating", "mixed-integer-float", "decimal",
                       "bytes", "unicode"}


def _groups_by_type(values: pd.Series) -> list[pd.Series]:
    """`values` split so that no group holds a bool beside a number: `True == 1` and `hash(True) ==
    hash(1)`, so a plain `pd.unique` or dict over a column holding both would merge them. Most
    columns are one group (told apart by pandas' C-level `infer_dtype`); a mixed one is split by type."""
    if pd.api.types.infer_dtype(values, skipna=True) in _NO_BOOL_AND_NUMBER:
        return [values]
    types = values.map(type)
    return [values[types == kind] for kind in pd.unique(types)]


def _distinct_by_type(values: pd.Series) -> list:
    """Each distinct value once, a bool never merged with the number it equals."""
    return [value for group in _groups_by_type(values) for value in pd.unique(group)]


def canonical_column(series: pd.Series, boolean: bool = False, ignore_case: bool = False
                     ) -> tuple[pd.Series, Counter]:
    """The column's non-missing values in canonical text (missing ones stay missing), and how many
    values each kind of change touched. Each distinct value is rewritten once (a census file holds
    millions of cells and few levels)."""
    # Positions, not labels: a caller's DataFrame may repeat index labels.
    values = series.astype(object).reset_index(drop=True)
    present = values.notna()
    out = values.copy()
    changes: Counter = Counter()
    try:
        groups = _groups_by_type(values[present])
    except TypeError:  # unhashable cells (lists, dicts): their text, one at a time
        out = values.where(~present, values.map(str))
        return out.set_axis(series.index).astype(object), changes
    for group in groups:
        counts = group.value_counts(sort=False)
        texts = {value: canonical_value(value, boolean, ignore_case) for value in counts.index}
        out[group.index] = group.map({value: text for value, (text, _) in texts.items()})
        for value, (_, kinds) in texts.items():
            for kind in kinds:
                changes[kind] += int(counts[value])
    return out.set_axis(series.index).astype(object), changes
def _boolean_like(value) -> tuple[bool, bool]:
    """(is a boolean or a boolean's spelling, is 0 or 1 as a number or its text), read off the
    value's canonical text."""
    text, _ = canonical_value(value)
    return text in (TRUE, FALSE), text in ("0", "1")


def boolean_columns(frames: list[pd.DataFrame], columns: list[str]) -> set[str]:
    """The columns that are boolean across all `frames` read together: at least one value anywhere
    is a boolean (or spelled as one), and every non-missing value is a boolean or 0/1. In those, 1/0
    mean True/False; in any other column they stay numbers."""
    found = set()
    for column in columns:
        seen_boolean, all_boolean = False, True
        for frame in frames:
            if column not in frame:
                continue
            values = frame[column].dropna()
            if values.empty:
                continue
            try:
                distinct = _distinct_by_type(values.astype(object))
            except TypeError:
                all_boolean = False
                break
            flags = [_boolean_like(v) for v in distinct]
            seen_boolean |= any(is_bool for is_bool, _ in flags)
            all_boolean &= all(is_bool or is_01 for is_bool, is_01 in flags)
        if seen_boolean and all_boolean:
            found.add(column)
    return found


def canonical_name(name) -> str:
    """A column name as text in NFC, without surrounding whitespace (a header written with a trailing
    space or in NFD names the same column)."""
    return unicodedata.normalize("NFC", str(name)).strip()
