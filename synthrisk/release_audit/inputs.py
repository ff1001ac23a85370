"""The audit's input: the user's files read, checked against one schema and given record ids,
before any measure runs, so that bad input stops the audit at once with the file and column named.

Without a schema file one is inferred from the training file (`synthrisk.data.infer`: types,
suggested drops with reasons, every column but the sensitive ones a quasi-identifier) and written
next to the report, with its comments, so that the user can edit it and rerun with `--schema`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..data.split import ROW_ID
from ..errors import ConfigError, DataError, SchemaError
from ..io import ReadOptions
from .checks import aux_checks, check_blank_columns, check_sizes, record_checks


@dataclass(frozen=True)
class AuditInput:
    """Members, holdout (empty when none was given) and synthetic data, conformed to `schema`,
    the real ones with a `row_id` column; where the schema came from (a path, or None when
    inferred); the files read."""

    members: pd.DataFrame
    holdout: pd.DataFrame
    synthetic: pd.DataFrame
    schema: DatasetSchema
    schema_path: str | None
    files: dict
    #: the inferred schema as commented YAML (None when a schema file was given)
    inferred_yaml: str | None = None
    #: what the checks of the records found (`checks.record_checks`), for the page
    checks: dict = field(default_factory=dict)
    #: sentences the page and the command line show before the verdicts (small files, overlaps,
    #: a holdout from another population, roles changed by --sensitive)
    notes: list = field(default_factory=list)
    #: the attacker's population sample (neither members nor holdout; DOMIAS's reference density),
    #: empty when none was given
    aux: pd.DataFrame | None = None
    #: what the typing pass normalised: one entry per file, column and kind of change, with its count
    #: (`synthrisk.data.canonical`)
    normalised: list = field(default_factory=list)
    #: levels of a file that the reference records never have, per file and column, with their share
    unknown_levels: list = field(default_factory=list)


def _with_sensitive(schema: DatasetSchema, sensitive: list[str], origin: str) -> tuple[DatasetSchema, list[str]]:
    """`schema` with `sensitive` as its sensitive attributes (taken out of the quasi-identifiers), and a
    note naming the schema's sensitive columns that are no longer attacked (never silently)."""
    unknown = [c for c in sensitive if c not in schema.columns]
    if unknown:
        raise ConfigError(f"--sensitive: column(s) {unknown} are not in schema {origin}; "
                          f"its columns: {list(schema.columns)}")
    raw = schema.to_dict()
    replaced = [c for c in raw["sensitive"] if c not in sensitive]
    raw["sensitive"] = list(sensitive)
    raw["quasi_identifiers"] = [c for c in raw["quasi_identifiers"] if c not in sensitive]
    notes = [f"--sensitive replaces the schema's sensitive column(s) {replaced}: they are no longer attacked as "
             f"sensitive (name them in --sensitive too to keep them)"] if replaced else []
    return DatasetSchema.from_dict(raw, origin=origin), notes


def _ids(frame: pd.DataFrame, start: int, what: str) -> pd.Series:
    """The file's own `row_id` column (as the workflow's split files carry), else row positions
    from `start` (members from 0, holdout after them: ids never repeat across the two)."""
    if ROW_ID not in frame:
        return pd.Series(np.arange(start, start + len(frame)), name=ROW_ID)
    ids = pd.to_numeric(frame[ROW_ID], errors="coerce")
    if ids.isna().any() or (ids != np.round(ids)).any() or ids.duplicated().any():
        raise DataError(f"{what}: column '{ROW_ID}' must hold distinct whole numbers (record ids); "
                        "rename it if it is a data column")
    return ids.astype("int64").reset_index(drop=True)


def _reader(schema: DatasetSchema | None, read_options: dict | None) -> ReadOptions:
    """The reader options for the text files: given ones, else those of the schema's file source
    (a built-in source's options are its loader's, not a reader's)."""
    if read_options is not None:
        return ReadOptions.from_mapping(read_options, what="reader options")
    if schema is not None and "path" in schema.source:
        return ReadOptions.from_mapping(schema.source.get("options"), what=f"{schema.origin}: source.options")
    return ReadOptions()


def _read(source, options: ReadOptions, label: str) -> pd.DataFrame:
    """A DataFrame as given (a copy: the audit types its columns), or a file read with the reader
    options (they concern text files; Parquet carries its own types). Column names are text:
    a DataFrame's integer names become "0", "1", ... (two names that become one are refused)."""
    from ..io import _check_unique, read_table, table_format

    frame = source.copy() if isinstance(source, pd.DataFrame) else \
        read_table(source, None if table_format(source)[0] == "parquet" else options)
    names = [str(c) for c in frame.columns]
    _check_unique(names, label)
    return frame.set_axis(names, axis=1)


#: what pandas calls the column of a header's empty first field (a DataFrame's index written with
#: `to_csv(index=True)`)
UNNAMED_FIRST = ("Unnamed: 0", "")


def _without_written_index(frame: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """`frame` without a row index its writer put in an unnamed first column (0, 1, ..., n - 1, or
    from 1): it numbers rows, it describes nobody. Returns (frame, the dropped column's name or None)."""
    if not len(frame.columns) or str(frame.columns[0]) not in UNNAMED_FIRST:
        return frame, None
    first = pd.to_numeric(frame.iloc[:, 0], errors="coerce").to_numpy()
    for start in (0, 1):
        if np.array_equal(first, np.arange(start, start + len(frame))):
            return frame.iloc[:, 1:], str(frame.columns[0])
    return frame, None


#: A release's levels that no real record has (nor the schema declares) are refused in a column where
#: they are more than MAX_UNKNOWN_LEVEL_SHARE of its values *and* more than records of the population
#: would hold: generators sample the levels they were trained on, so such values are another
#: spelling or a recoding, and the attacks would measure them against nothing. A fresh draw of the
#: population holds unseen levels too, at about the Good-Turing mass of the real records (the share
#: of them whose level occurs once, plus one record); the release is refused when its count is
#: beyond that mass at UNKNOWN_LEVEL_P (binomial upper tail), so that a high-cardinality column's
#: rare levels are reported, not refused.
MAX_UNKNOWN_LEVEL_SHARE = 0.01
UNKNOWN_LEVEL_P = 1e-4


def unseen_mass(real: pd.Series) -> float:
    """Good-Turing estimate of the share of a population draw whose level `real` never holds: the
    share of `real`'s non-missing values whose level occurs once, with one pseudo-record added."""
    values = real.dropna()
    singletons = int((values.value_counts() == 1).sum())
    return (singletons + 1) / (len(values) + 1)


def _beyond_population(entry: dict, real: pd.Series, n_values: int) -> bool:
    from scipy.stats import binom

    return (entry["share"] > MAX_UNKNOWN_LEVEL_SHARE
            and binom.sf(entry["count"] - 1, n_values, unseen_mass(real)) < UNKNOWN_LEVEL_P)


def _unknown_levels(schema: DatasetSchema, typed: dict, paths: dict) -> list[dict]:
    """Levels each file holds that its reference never has: the release against every real record,
    the holdout and the auxiliary records against the training records. A release past
    MAX_UNKNOWN_LEVEL_SHARE in a column is refused, naming the column and its levels."""
    real = pd.concat([typed["train"]] + ([typed["holdout"]] if "holdout" in typed else []), ignore_index=True)
    real_files = ", ".join(paths[w] for w in ("train", "holdout") if w in typed)
    references = {"synthetic": (real, f"real records ({real_files})")}
    for what in ("holdout", "aux"):
        if what in typed:
            # Each real file against the training file too: pooled, a holdout typed apart from the
            # training file (another encoding of one column) would pass and mismatch every record.
            references[what] = (typed["train"], f"training records ({paths['train']})")
    found = []
    for what, (reference, named) in references.items():
        for column, entry in schema.unknown_levels(reference, typed[what], what=paths[what], reference=named).items():
            found.append({"file": what, "path": paths[what], "column": column, **entry})
            n_values = int(typed[what][column].notna().sum())
            if what == "synthetic" and _beyond_population(entry, reference[column], n_values):
                raise DataError(
                    f"{paths[what]}: column '{column}': {entry['count']} value(s) ({entry['share']:.1%}) hold level(s) "
                    f"{entry['levels'][:5]} that no real record has (nor the schema declares): more than "
                    f"{MAX_UNKNOWN_LEVEL_SHARE:.0%} of the column, and more than a draw of the population holds "
                    f"(about {unseen_mass(reference[column]):.1%} unseen levels, Good-Turing). The release spells or "
                    "codes this column otherwise than the real records: recode it, or declare the levels in the "
                    "schema's 'levels' if the generator may produce them")
    return found


def _typed(schema: DatasetSchema, frames: dict, paths: dict) -> tuple[dict, list[dict]]:
    """The typing pass: every file conformed to the schema together, so that one column has one type
    and one spelling of each value in all of them (`synthrisk.data.canonical`; 1/0 read as True/False
    where the column is boolean in the files taken together). Returns (typed frames, what was
    normalised: one entry per file, column and kind of change)."""
    from ..data.canonical import boolean_columns

    booleans = boolean_columns(list(frames.values()), schema.categorical)
    typed, normalised = {}, []
    for what, frame in frames.items():
        changes: list[dict] = []
        typed[what] = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=paths[what],
                                     booleans=booleans, changes=changes)
        normalised += [{"file": what, "path": paths[what], **change} for change in changes]
    return typed, normalised


def _normalised_notes(normalised: list[dict], unknown: list[dict]) -> list[str]:
    """One sentence per file on what the typing pass changed, and one per column with unknown levels."""
    notes = []
    for path in dict.fromkeys(entry["path"] for entry in normalised):
        parts = [f"{entry['count']} in '{entry['column']}' ({entry['change']})" for entry in normalised
                 if entry["path"] == path]
        notes.append(f"{path}: values written in canonical form before any attack: " + "; ".join(parts))
    for entry in unknown:
        notes.append(f"{entry['path']}: {entry['count']} value(s) ({entry['share']:.1%}) of column '{entry['column']}' "
                     f"hold level(s) {entry['levels'][:5]} that the "
                     f"{'real' if entry['file'] == 'synthetic' else 'training'} records never have")
    return notes


def _label(source, what: str) -> str | None:
    """How errors and the page name an input: its path, or 'the <what> DataFrame'."""
    if source is None:
        return None
    if isinstance(source, pd.DataFrame):
        return f"the {what} DataFrame"
    if isinstance(source, (str, Path)):
        return str(source)
    raise ConfigError(f"{what}: give a pandas DataFrame or the path of a CSV/Parquet file, not a "
                      f"{type(source).__name__}")


def _given_schema(schema) -> tuple[DatasetSchema | None, str | None]:
    """(schema, its path): a schema file, a `DatasetSchema`, its dict form, or None (inferred)."""
    from ..data import load_schema

    if schema is None:
        return None, None
    if isinstance(schema, DatasetSchema):
        return schema, None
    if isinstance(schema, dict):
        return DatasetSchema.from_dict(schema, origin="the schema dict"), None
    if isinstance(schema, (str, Path)):
        return load_schema(schema), str(schema)
    raise ConfigError(f"schema: give a DatasetSchema, a dict or the path of a schema YAML, not a "
                      f"{type(schema).__name__}")


def sensitive_names(sensitive) -> list[str]:
    """The sensitive column(s) as a list of names: one name, a list of names, or None (none)."""
    if sensitive is None:
        return []
    names = [sensitive] if isinstance(sensitive, str) else sensitive
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise ConfigError(f"sensitive: give a column name or a list of column names, not {sensitive!r}")
    return list(dict.fromkeys(names))


def read_inputs(train, synthetic, holdout=None, schema=None, sensitive: list[str] | str | None = None,
                read_options: dict | None = None, aux=None) -> AuditInput:
    """Read and check every input; errors name the file (or DataFrame) and the column. `train`,
    `synthetic`, `holdout`, `aux`: pandas DataFrames or paths of CSV/Parquet files. `schema`: a schema
    file, a `DatasetSchema` or its dict; None infers one from `train` (then `sensitive` is needed).
    `read_options` (separator, encoding, missing-value markers: `synthrisk.io.ReadOptions`) apply to
    every text file; by default the schema's `source.options` do. `aux`: records of the population
    that are neither members nor holdout (the attacker's sample, for DOMIAS)."""
    from ..data.infer import dataset_name, guess_columns, infer_schema, schema_yaml

    sensitive = sensitive_names(sensitive)
    if read_options is not None and not isinstance(read_options, dict):
        raise ConfigError(f"read_options: give a mapping of reader options (sep, encoding, na_values, ...), not a "
                          f"{type(read_options).__name__}")
    sources = {"train": train, "synthetic": synthetic, "holdout": holdout, "aux": aux}
    paths = {what: _label(source, what) for what, source in sources.items()}
    given, schema = _given_schema(schema)
    train, synthetic, holdout, aux = (paths[k] for k in ("train", "synthetic", "holdout", "aux"))
    options = _reader(given, read_options)
    frames = {what: _read(sources[what], options, paths[what]) for what in ("train", "synthetic")}
    if holdout:
        frames["holdout"] = _read(sources["holdout"], options, holdout)
    if aux:
        if not holdout:
            raise ConfigError("--aux: the auxiliary records serve the membership attacks, which need --holdout too")
        frames["aux"] = _read(sources["aux"], options, aux)
    written_index = []
    for what, frame in frames.items():
        frames[what], dropped = _without_written_index(frame)
        if dropped:
            written_index.append({"file": what, "path": paths[what], "column": dropped, "count": len(frame),
                                  "change": "a row index written as an unnamed first column: dropped"})
        if frame.empty:
            raise DataError(f"{paths[what]}: has no rows; the audit needs records in every file")
    notes = check_sizes({what: (paths[what], len(frame)) for what, frame in frames.items()})
    if given is not None:
        parsed, inferred_yaml = given, None
        if sensitive:
            parsed, replaced = _with_sensitive(parsed, sensitive, given.origin)
            notes += replaced
    else:
        if not sensitive:
            raise ConfigError("--sensitive: name the sensitive column(s) when no --schema is given (the inferred "
                              "schema makes every other column a quasi-identifier)")
        data = _tidy_text(frames["train"].drop(columns=[ROW_ID], errors="ignore"))
        missing = [c for c in sensitive if c not in data.columns]
        if missing:
            raise ConfigError(f"--sensitive: column(s) {missing} are not in {train}; its columns: {list(data.columns)}")
        if len(data.columns) < 2:
            raise SchemaError(f"{train}: has {len(data.columns)} column(s); an audit needs quasi-identifiers and "
                              "a sensitive attribute")
        if isinstance(sources["train"], pd.DataFrame):
            # A DataFrame has no path the workflow could load it from: the schema says where it came from.
            source, name = {"frame": train}, "audit"
        else:
            source = {"path": str(Path(train).resolve()), **({"options": read_options} if read_options else {})}
            name = dataset_name(train, "audit")
        guesses = guess_columns(data)
        parsed = DatasetSchema.from_dict(infer_schema(data, name, sensitive, source, guesses=guesses),
                                         origin=f"schema inferred from {train}")
        inferred_yaml = schema_yaml(data, name, source, sensitive, what=Path(train).name if "path" in source else train,
                                    guesses=guesses)
    typed, normalised = _typed(parsed, frames, paths)
    normalised = written_index + normalised
    parsed.check_levels(typed["train"], what=train)
    # Categories a file holds that its reference never has: a recoded release is refused here, by column.
    unknown = _unknown_levels(parsed, typed, paths)
    notes += _normalised_notes(normalised, unknown)
    real = pd.concat([typed["train"]] + ([typed["holdout"]] if holdout else []), ignore_index=True)
    check_blank_columns(real, typed["synthetic"], list(parsed.columns), synthetic)
    members = typed["train"]
    members.insert(0, ROW_ID, _ids(frames["train"], 0, train))
    if holdout:
        non_members = typed["holdout"]
        non_members.insert(0, ROW_ID, _ids(frames["holdout"], int(members[ROW_ID].max()) + 1, holdout))
        clash = set(members[ROW_ID]) & set(non_members[ROW_ID])
        if clash:
            raise DataError(f"{holdout}: record id(s) {sorted(clash)[:3]} of column '{ROW_ID}' are also in {train}; "
                            "members and holdout must be different people")
        checks, found = record_checks(members, non_members, parsed, paths, seed=0)
        notes += found
    else:
        non_members = _empty_like(members)
        checks = {}
    if aux:
        auxiliary = typed["aux"]
        auxiliary.insert(0, ROW_ID, _ids(frames["aux"], int(non_members[ROW_ID].max()) + 1, aux))
        if set(auxiliary[ROW_ID]) & (set(members[ROW_ID]) | set(non_members[ROW_ID])):
            raise DataError(f"{aux}: record ids of column '{ROW_ID}' repeat ids of {train} or {holdout}; the "
                            "auxiliary records must be other people")
        checks["aux"] = aux_checks(members, non_members, auxiliary, parsed, paths)
    else:
        auxiliary = _empty_like(members)
    return AuditInput(members=members, holdout=non_members, synthetic=typed["synthetic"], schema=parsed,
                      schema_path=schema, files=paths, inferred_yaml=inferred_yaml, checks=checks, notes=notes,
                      aux=auxiliary, normalised=normalised, unknown_levels=unknown)


def _tidy_text(frame: pd.DataFrame) -> pd.DataFrame:
    """The training records as the schema is inferred from them: names and text values in NFC without
    surrounding whitespace (types untouched: the inference reads them), so that "a" and "a " are one
    level of the draft and a header's trailing space names the same column."""
    from ..data.canonical import canonical_name

    out = frame.set_axis([canonical_name(c) for c in frame.columns], axis=1)
    for column in out.select_dtypes(include="object").columns:
        values = out[column]
        try:
            texts = values.str.normalize("NFC").str.strip()  # missing where a value is not text
        except AttributeError:  # no text value at all
            continue
        out[column] = texts.where(texts.notna(), values)
    return out


def _empty_like(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=frame[c].dtype) for c in frame.columns})
