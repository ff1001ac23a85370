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


def _read(source, options: ReadOptions) -> pd.DataFrame:
    """A DataFrame as given (a copy: the audit types its columns), or a file read with the reader
    options (they concern text files; Parquet carries its own types)."""
    from ..io import read_table, table_format

    if isinstance(source, pd.DataFrame):
        return source.copy()
    return read_table(source, None if table_format(source)[0] == "parquet" else options)


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


def read_inputs(train, synthetic, holdout=None, schema=None, sensitive: list[str] | str | None = None,
                read_options: dict | None = None, aux=None) -> AuditInput:
    """Read and check every input; errors name the file (or DataFrame) and the column. `train`,
    `synthetic`, `holdout`, `aux`: pandas DataFrames or paths of CSV/Parquet files. `schema`: a schema
    file, a `DatasetSchema` or its dict; None infers one from `train` (then `sensitive` is needed).
    `read_options` (separator, encoding, missing-value markers: `synthrisk.io.ReadOptions`) apply to
    every text file; by default the schema's `source.options` do. `aux`: records of the population
    that are neither members nor holdout (the attacker's sample, for DOMIAS)."""
    from ..data.infer import dataset_name, guess_columns, infer_schema, schema_yaml

    sensitive = list(dict.fromkeys([sensitive] if isinstance(sensitive, str) else (sensitive or [])))
    sources = {"train": train, "synthetic": synthetic, "holdout": holdout, "aux": aux}
    paths = {what: _label(source, what) for what, source in sources.items()}
    given, schema = _given_schema(schema)
    train, synthetic, holdout, aux = (paths[k] for k in ("train", "synthetic", "holdout", "aux"))
    options = _reader(given, read_options)
    frames = {"train": _read(sources["train"], options), "synthetic": _read(sources["synthetic"], options)}
    if holdout:
        frames["holdout"] = _read(sources["holdout"], options)
    if aux:
        if not holdout:
            raise ConfigError("--aux: the auxiliary records serve the membership attacks, which need --holdout too")
        frames["aux"] = _read(sources["aux"], options)
    for what, frame in frames.items():
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
        data = frames["train"].drop(columns=[ROW_ID], errors="ignore")
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
    typed = {what: parsed.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=paths[what])
             for what, frame in frames.items()}
    parsed.check_levels(typed["train"], what=train)
    # Synthetic categories the real data never hold: a recoded release is refused here, by column.
    real = pd.concat([typed["train"]] + ([typed["holdout"]] if holdout else []), ignore_index=True)
    parsed.unknown_level_shares(real, typed["synthetic"], what=synthetic, reference=f"real records ({train})")
    if holdout:
        # Each real file against the other too: pooled, a holdout typed apart from the training file
        # (another encoding of one column) would pass and mismatch every synthetic record.
        parsed.unknown_level_shares(typed["train"], typed["holdout"], what=holdout, reference=f"training records ({train})")
    if aux:
        parsed.unknown_level_shares(typed["train"], typed["aux"], what=aux, reference=f"training records ({train})")
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
                      aux=auxiliary)


def _empty_like(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=frame[c].dtype) for c in frame.columns})
