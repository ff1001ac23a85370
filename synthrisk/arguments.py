"""Argument types of the command line: every numeric option has a range, checked at parse time.

Each factory returns a function for argparse's `type=`; a value out of range raises
argparse.ArgumentTypeError, which argparse reports as `argument --name: ...` with exit code 2, so
the message always names the option. NaN and infinities are refused everywhere: no option of
synthrisk means anything with them.
"""

from __future__ import annotations

import argparse
import math

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return "finite"


def _check_range(value, low, high, low_open, high_open, kind: str, text: str):
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite {kind}, got {text!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        raise argparse.ArgumentTypeError(
            f"must be {'an' if kind == 'integer' else 'a'} {kind} {_interval(low, high, low_open, high_open)}, "
            f"got {text}")
    return value


def _range_parser(convert, kind: str, low, high, low_open: bool, high_open: bool):
    """An argparse type: `convert` the text, then check it lies in the interval."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an' if kind == 'integer' else 'a'} {kind}, got {text!r}") from None
        return _check_range(value, low, high, low_open, high_open, kind, text)

    parse.__name__ = kind
    return parse


def integer(low: int | None = None, high: int | None = None):
    """An int in [low, high] (either end may be open-ended)."""
    return _range_parser(int, "integer", low, high, False, False)


def number(low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False):
    """A finite float in the interval; `low_open`/`high_open` exclude the end points."""
    return _range_parser(float, "number", low, high, low_open, high_open)


def number_list(low: float | None = None, high: float | None = None):
    """Comma-separated finite numbers, each in [low, high]; at least one."""
    one = number(low, high)

    def parse(text: str) -> list[float]:
        parts = [part.strip() for part in text.split(",")]
        if not text.strip() or any(not part for part in parts):
            raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}")
        values = []
        for part in parts:
            try:
                values.append(one(part))
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(f"{part!r}: {exc}") from None
        return values

    parse.__name__ = "number list"
    return parse


def number_or_choice(choices: tuple[str, ...], low: float, high: float, low_open=True, high_open=True):
    """One of `choices`, or a finite number in the interval."""
    one = number(low, high, low_open, high_open)

    def parse(text: str):
        if text in choices:
            return text
        try:
            return one(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"expected one of {list(choices)} or a number: {exc}") from None

    parse.__name__ = "share"
    return parse


def table_path(text: str) -> str:
    """An output table: the suffix decides the format, so it must be one synthrisk writes."""
    from pathlib import Path

    suffix = Path(text).suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"unsupported file type {suffix or '(none)'!r} for {text!r}; use .csv or .parquet")
    return text


SEED = integer(0, 2**32 - 1)


#: the reader options of `synthrisk.io.ReadOptions` that commands taking text files accept, as
#: (flag, argparse keywords); one list, so `schema infer` and `audit` read files the same way
READER_FLAGS = (
    ("--sep", {"help": 'field separator, or "whitespace" for runs of spaces/tabs'}),
    ("--no-header", {"dest": "header", "action": "store_false", "default": None,
                     "help": "the file has no header line (then give --names)"}),
    ("--names", {"nargs": "+", "metavar": "COL", "help": "column names, in file order"}),
    ("--encoding", {"help": "text encoding, e.g. latin-1 (default utf-8)"}),
    ("--na-values", {"nargs": "+", "metavar": "TEXT", "help": 'missing-value markers, e.g. "?" NA'}),
    ("--decimal", {"help": "decimal mark, e.g. ,"}),
    ("--comment", {"help": "lines starting with this character are skipped"}),
    ("--skip-rows", {"type": integer(0), "help": "lines to skip at the top of the file"}),
)
READER_KEYS = ("sep", "header", "names", "encoding", "na_values", "decimal", "comment", "skip_rows")


def add_reader_options(parser, title: str) -> None:
    group = parser.add_argument_group(title)
    for flag, kwargs in READER_FLAGS:
        group.add_argument(flag, **kwargs)


def reader_options(args) -> dict:
    """The reader options given on the command line, as a `ReadOptions` mapping."""
    return {key: value for key in READER_KEYS if (value := getattr(args, key, None)) is not None}
