"""Reading and writing tables and JSON sidecars in the formats of the data-flow contract."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import DataError

#: what synthrisk writes (and what every command's output path must end in)
TABLE_SUFFIXES = {".csv", ".parquet", ".pq"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
#: delimited text, by suffix, with its default separator (`sep` in the reader options overrides it)
TEXT_SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": ",", ".dat": ",", ".data": ","}
#: compression recognised by suffix (pandas decompresses these itself)
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz"}
#: `sep: whitespace` reads columns separated by any run of spaces or tabs
WHITESPACE = "whitespace"


@dataclass(frozen=True)
class ReadOptions:
    """How to read a delimited text file: the `options` of a schema's `source: {path: ...}`.

    Defaults read a plain CSV: a header line, comma-separated (tab for .tsv), UTF-8, and only empty
    cells missing. Missing-value markers are opt-in (`na_values`): a string such as "NA" or "?" stays
    a level unless the schema says it means "missing", so nothing is reinterpreted behind the user's
    back."""

    sep: str | None = None
    header: bool = True
    names: tuple[str, ...] | None = None
    encoding: str = "utf-8"
    na_values: tuple[str, ...] = ()
    decimal: str = "."
    comment: str | None = None
    skip_rows: int = 0

    @classmethod
    def from_mapping(cls, options: dict | None, what: str = "options") -> ReadOptions:
        """Check every option by name and type, with an error naming the bad key."""
        import codecs

        options = dict(options or {})
        unknown = sorted(set(options) - set(cls.__dataclass_fields__))
        if unknown:
            raise DataError(f"{what}: unknown reader option(s) {unknown}; known: {sorted(cls.__dataclass_fields__)}")

        def text(key, single=False):
            value = options[key]
            if not isinstance(value, str) or not value or (single and len(value) != 1):
                need = "one character" if single else "a non-empty string"
                raise DataError(f"{what}.{key}: must be {need}, got {value!r}")
            return value

        def strings(key):
            value = options[key]
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DataError(f"{what}.{key}: must be a list of strings, got {value!r}")
            return tuple(value)

        kwargs = {}
        if "sep" in options:
            kwargs["sep"] = text("sep")
        if "header" in options:
            if not isinstance(options["header"], bool):
                raise DataError(f"{what}.header: must be true or false, got {options['header']!r}")
            kwargs["header"] = options["header"]
        if "names" in options:
            kwargs["names"] = strings("names")
            _check_unique(list(kwargs["names"]), what + ".names")
        if "encoding" in options:
            try:
                kwargs["encoding"] = codecs.lookup(text("encoding")).name
            except LookupError:
                raise DataError(f"{what}.encoding: unknown encoding {options['encoding']!r} "
                                "(e.g. utf-8, latin-1, cp1252)") from None
        if "na_values" in options:
            kwargs["na_values"] = strings("na_values")
        for key in ("decimal", "comment"):
            if key in options:
                kwargs[key] = text(key, single=True)
        if "skip_rows" in options:
            value = options["skip_rows"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise DataError(f"{what}.skip_rows: must be a whole number >= 0, got {value!r}")
            kwargs["skip_rows"] = value
        read = cls(**kwargs)
        if not read.header and not read.names:
            raise DataError(f"{what}: header: false needs names: [...], one per column of the file, in order")
        return read

    @property
    def is_default(self) -> bool:
        return self == ReadOptions()


def table_format(path: str | Path) -> tuple[str, str | None]:
    """('parquet' | a text suffix such as '.csv', compression or None) of a file, from its name."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    compression = COMPRESSION_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in PARQUET_SUFFIXES and not compression:
        return "parquet", None
    if suffix in TEXT_SUFFIXES:
        return suffix, compression
    known = sorted(TEXT_SUFFIXES) + sorted(PARQUET_SUFFIXES)
    raise DataError(f"{path}: unsupported file type {(suffix or '(none)')!r}; use one of {known} "
                    f"(text files may be compressed: {sorted(COMPRESSION_SUFFIXES)})")


def read_table(path: str | Path, options: ReadOptions | None = None) -> pd.DataFrame:
    """Read a table file, with an error naming the file when it cannot be read.

    Parquet, or delimited text (.csv, .tsv, .txt, ...; compressed as .gz, .bz2, .zip or .xz) read with
    `options`. Repeated column names are refused (pandas would rename the second `age` to `age.1`, and
    a command that reads one column by name would silently take the first)."""
    path = Path(path)
    options = options or ReadOptions()
    if not path.exists():
        raise DataError(f"{path}: file does not exist")
    if path.is_dir():
        raise DataError(f"{path}: is a folder, not a table file")
    kind, compression = table_format(path)
    if kind == "parquet":
        if not options.is_default:
            raise DataError(f"{path}: reader options apply to text files, not to Parquet; remove them")
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - re-raised with the file name
            raise DataError(f"{path}: cannot be read as parquet: {exc}") from exc
    else:
        sep = options.sep or TEXT_SUFFIXES[kind]
        frame = _read_text(path, compression, sep, options)
        _check_separator(frame, sep, path)
    _check_unique([str(c) for c in frame.columns], path)
    return frame


def _read_text(path: Path, compression: str | None, sep: str, options: ReadOptions) -> pd.DataFrame:
    common = dict(sep=r"\s+" if sep == WHITESPACE else sep, compression=compression,
                  encoding="utf-8-sig" if options.encoding == "utf-8" else options.encoding,
                  decimal=options.decimal, comment=options.comment, skiprows=options.skip_rows)
    try:
        # The first line as text, to count fields and check the header's names before pandas
        # renames repeats (age, age.1) or, given fewer names than fields, makes the first
        # columns an index.
        first = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False, **common)
        fields = first.shape[1]
        if options.header:
            _check_unique([str(v) for v in first.iloc[0]] if len(first) else [], path)
        if options.names is not None and len(options.names) != fields:
            raise DataError(f"{path}: names lists {len(options.names)} columns but the file has {fields} "
                            "fields per line; give one name per field, in order")
        header = 0 if options.header else None
        return pd.read_csv(path, header=header, names=list(options.names) if options.names else None,
                           keep_default_na=False, na_values=["", *options.na_values], **common)
    except DataError:
        raise
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid {options.encoding} text ({exc.reason} at byte {exc.start}); "
                        "set the reader option encoding (e.g. latin-1 or cp1252)") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: is empty (not even a header line)") from None
    except Exception as exc:  # noqa: BLE001 - re-raised with the file name
        raise DataError(f"{path}: cannot be read as {sep!r}-separated text: {exc}") from exc


#: separators a file read as one column most likely uses, by the name of that column
LIKELY_SEPARATORS = {";": ";", "\t": "\\t", "|": "|"}


def _check_separator(frame: pd.DataFrame, sep: str, path) -> None:
    """A file read as a single column whose header holds another separator: refused with the hint,
    rather than later as "every column of the schema is missing"."""
    if frame.shape[1] != 1:
        return
    header = str(frame.columns[0])
    for candidate, shown in LIKELY_SEPARATORS.items():
        if candidate != sep and header.count(candidate) >= 1:
            raise DataError(f"{path}: read as one column named {header[:60]!r}; the file looks {shown!r}-separated: "
                            f"set the reader option sep (command line: --sep '{shown}'; schema: source.options.sep)")


def _check_unique(names: list[str], path) -> None:
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
    text = json_text(obj, indent=2, sort_keys=True) + "\n"
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        partial.write_text(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def json_text(obj, **options) -> str:
    """`obj` as JSON text, numpy's numbers and arrays as Python's."""
    return json.dumps(obj, default=_json_default, **options)


def read_yaml(path: str | Path, what: str, error: type[Exception] = DataError):
    """The parsed content of a YAML text file (None when it holds nothing), or `error` naming `what`
    (the option or key, e.g. '--policy') and the file: missing, a folder, unreadable, not UTF-8 text
    (a binary file given by mistake), or not valid YAML."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise error(f"{what}: {path} does not exist")
    if path.is_dir():
        raise error(f"{what}: {path} is a folder; give the path of a YAML file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what}: {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); give a YAML file") from None
    except OSError as exc:
        raise error(f"{what}: {path} cannot be read: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{what}: {path} is not valid YAML: {exc}") from None


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


def write_table_formats(frame: pd.DataFrame, stem: str | Path, floatfmt: str = ".3f",
                        formats=("csv", "md")) -> list[Path]:
    """`frame` in the formats a reader needs, beside one another: CSV, Markdown, LaTeX (booktabs)."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    if "csv" in formats:
        frame.to_csv(stem.with_suffix(".csv"), index=False)
        written.append(stem.with_suffix(".csv"))
    if "md" in formats:
        stem.with_suffix(".md").write_text(frame.to_markdown(index=False, floatfmt=floatfmt) + "\n")
        written.append(stem.with_suffix(".md"))
    if "tex" in formats:
        stem.with_suffix(".tex").write_text(
            frame.style.format(precision=3, na_rep="--").hide(axis="index").to_latex(hrules=True))
        written.append(stem.with_suffix(".tex"))
    return written


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks (the bundle's and the output folder's records)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class TableFolder(Mapping):
    """A folder of CSV tables read as a mapping of name to frame (`name.csv`, read on first use):
    how the workflow's report hands the measures the tables their `summarise` wrote, where the audit
    hands them the frames themselves."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._read: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._read:
            path = self.folder / f"{name}.csv"
            if not path.is_file():
                raise KeyError(name)
            self._read[name] = pd.read_csv(path)
        return self._read[name]

    def __iter__(self):
        return iter(sorted(path.stem for path in self.folder.glob("*.csv")))

    def __len__(self) -> int:
        return sum(1 for _ in self)
