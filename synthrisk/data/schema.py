"""Dataset schema: column types and roles, validated on load and against data."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

from ..errors import ConfigError, DataError, DomainError, SchemaError
from .canonical import CHANGE_KINDS, boolean_columns, canonical_column, canonical_name, canonical_value
from .types import CATEGORICAL, CONTINUOUS, INTEGER, NUMERIC_TYPES  # noqa: F401 - re-exported: the schema's types

#: the split files' record id column (synthrisk.data.split.ROW_ID); no data column may take it
RESERVED_COLUMNS = ("row_id",)
#: characters a sensitive column's name may not hold: it becomes part of output file names
#: (results/rapid/.../{attacker}-{sensitive}.json); '/' and '\\' would make folders, braces are
#: Snakemake's wildcard syntax, control characters break file names and logs
PATH_BREAKING = ("/", "\\", "{", "}")
MAX_NAME_BYTES = 200
#: largest magnitude of a numeric value: scikit-learn's trees compute in float32, which ends here
LARGEST_VALUE = float(np.finfo(np.float32).max)


def _json_schema() -> dict:
    text = resources.files("synthrisk").joinpath("schemas/dataset.schema.yaml").read_text()
    return yaml.safe_load(text)


@dataclass(frozen=True)
class DatasetSchema:
    name: str
    columns: dict[str, str]
    quasi_identifiers: list[str]
    sensitive: list[str]
    source: dict = field(default_factory=dict)
    drop: list[str] = field(default_factory=list)
    origin: str = "<dict>"
    # Public domain metadata (docs/design.md "Config"): what DP code may know without reading the data.
    levels: dict[str, list[str]] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: categorical columns whose letter case carries no information (`ignore_case: true`)
    ignore_case: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, raw: dict, origin: str = "<dict>") -> DatasetSchema:
        """Validate a parsed schema (structure, then roles) and build it."""
        try:
            jsonschema.validate(raw, _json_schema())
        except jsonschema.ValidationError as exc:
            key = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
            raise SchemaError(f"{origin}: invalid dataset schema at '{key}': {exc.message}") from None
        columns = {name: spec["type"] for name, spec in raw["columns"].items()}
        qi, sensitive = list(raw["quasi_identifiers"]), list(raw["sensitive"])
        _check_names(columns, sensitive, origin)
        for role, names in (("quasi_identifiers", qi), ("sensitive", sensitive)):
            unknown = [c for c in names if c not in columns]
            if unknown:
                raise SchemaError(f"{origin}: {role} lists {unknown} which are not in 'columns'")
        both = sorted(set(qi) & set(sensitive))
        if both:
            raise SchemaError(
                f"{origin}: column(s) {both} are both quasi-identifier and sensitive; "
                "an attribute the attacker already knows cannot be disclosed"
            )
        dropped_and_used = sorted(set(raw.get("drop", [])) & set(columns))
        if dropped_and_used:
            raise SchemaError(f"{origin}: column(s) {dropped_and_used} are in both 'drop' and 'columns'")
        ignore_case = _ignore_case(raw["columns"], origin)
        levels, bounds = _domain_metadata(raw["columns"], origin, ignore_case)
        if "path" in raw["source"]:
            # Reader options are checked where the schema is read, not when the file is.
            from ..io import ReadOptions

            try:
                ReadOptions.from_mapping(raw["source"].get("options"), what="source.options")
            except DataError as exc:
                raise SchemaError(f"{origin}: {exc}") from None
        return cls(
            name=raw["name"], columns=columns, quasi_identifiers=qi, sensitive=sensitive,
            source=dict(raw["source"]), drop=list(raw.get("drop", [])), origin=origin,
            levels=levels, bounds=bounds, ignore_case=ignore_case,
        )

    @classmethod
    def infer(cls, frame: pd.DataFrame, sensitive: str | list[str] = (), name: str = "data") -> DatasetSchema:
        """A schema guessed from `frame` (as `synthrisk schema infer` does): column types, every column
        but the sensitive ones a quasi-identifier, direct identifiers and duplicate columns dropped.
        Check it (`to_dict()`) before relying on it: types and roles are guesses."""
        from .infer import infer_schema

        sensitive = [sensitive] if isinstance(sensitive, str) else list(sensitive)
        return cls.from_dict(infer_schema(frame, name, sensitive, {"frame": "the DataFrame given"}),
                             origin=f"schema inferred from DataFrame '{name}'")

    def to_dict(self) -> dict:
        return {
            "name": self.name, "source": self.source,
            "columns": {c: {"type": t,
                            **({"ignore_case": True} if c in self.ignore_case else {}),
                            **({"levels": list(self.levels[c])} if c in self.levels else {}),
                            **({"bounds": list(self.bounds[c])} if c in self.bounds else {})}
                        for c, t in self.columns.items()},
            "quasi_identifiers": self.quasi_identifiers, "sensitive": self.sensitive,
            "drop": self.drop,
        }

    def restricted(self, columns: list[str], what: str) -> DatasetSchema:
        """This schema on `columns` only (their roles, levels and bounds kept); an error naming
        `what` (the config key that lists them) when one is not a column of the schema."""
        unknown = [c for c in columns if c not in self.columns]
        if unknown:
            raise ConfigError(f"{what}: {unknown} are not columns of dataset {self.name!r} ({self.origin})")
        return replace(self, columns={c: self.columns[c] for c in columns},
                       quasi_identifiers=[c for c in self.quasi_identifiers if c in columns],
                       sensitive=[c for c in self.sensitive if c in columns])

    @property
    def categorical(self) -> list[str]:
        return [c for c, t in self.columns.items() if t == CATEGORICAL]

    @property
    def numeric(self) -> list[str]:
        return [c for c, t in self.columns.items() if t in NUMERIC_TYPES]

    def is_categorical(self, column: str) -> bool:
        return self.columns[column] == CATEGORICAL

    def public_levels(self, column: str) -> list[str]:
        """The declared levels of a categorical column; an error naming it when none are declared."""
        if column not in self.levels:
            raise DomainError(
                f"{self.origin}: categorical column '{column}' has no public 'levels'; a DP release may not "
                "read its levels from the private data. Declare them in the schema (from documentation), "
                "or opt in explicitly with domain: from_data (the result is then marked not DP)"
            )
        return list(self.levels[column])

    def public_bounds(self, column: str) -> tuple[float, float]:
        """The declared [low, high] of a numeric column; an error naming it when none are declared."""
        if column not in self.bounds:
            raise DomainError(
                f"{self.origin}: numeric column '{column}' has no public 'bounds'; a DP release may not "
                "read its range from the private data (min and max reveal extreme records). Declare "
                "bounds: [low, high] in the schema, or opt in explicitly with domain: from_data (the "
                "result is then marked not DP)"
            )
        return self.bounds[column]

    def conform(self, df: pd.DataFrame, what: str = "data", booleans: set[str] | None = None,
                changes: list | None = None) -> pd.DataFrame:
        """Check that `df` has exactly the schema's columns and cast them to their types.

        This is where every table enters synthrisk (generate, rapid, mia, utility, the workflow's
        loader, the audit), so what a value may be is decided here once:
        - column names are read as text in NFC without surrounding whitespace (`canonical_name`);
        - columns listed under `drop` are removed from every file that has them; any other column
          the schema does not know is an error rather than being dropped silently;
        - a repeated column name is an error naming it;
        - categorical values are written in their canonical text (`synthrisk.data.canonical`): NFC,
          no surrounding whitespace, one spelling of True/False, numbers as the number they are.
          `booleans`: the categorical columns in which 1/0 mean True/False, when decided for several
          files read together (default: decided from `df` alone). `changes`: a list that receives
          one entry per column and kind of change made to text values, with its count;
        - missing values are kept as missing;
        - infinite values (inf, -inf, or numbers too large for a float) in a numeric column are an
          error naming the column and the number of rows: no method here has a meaning for them
          (a Gower range, a mean, a DP clip would silently turn them into NaN or drop the column).
        """
        df = _canonical_names(df, what, changes)
        repeated = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        if repeated:
            raise SchemaError(f"{what}: duplicate column name(s) {repeated}; each column needs a unique name")
        df = df.drop(columns=[c for c in self.drop if c in df.columns])
        missing = [c for c in self.columns if c not in df.columns]
        if missing:
            raise SchemaError(f"{what}: column(s) {missing} of schema {self.origin} are missing from the data")
        extra = [c for c in df.columns if c not in self.columns]
        if extra:
            raise SchemaError(
                f"{what}: column(s) {extra} are not in schema {self.origin}; "
                "add them to 'columns' or list them under 'drop'"
            )
        if booleans is None:
            booleans = boolean_columns([df], self.categorical)
        out = pd.DataFrame(index=df.index)
        for column, kind in self.columns.items():
            where = f"{what}: column '{column}'"
            if kind == CATEGORICAL:
                out[column], counts = canonical_column(df[column], column in booleans, column in self.ignore_case)
                if changes is not None:
                    changes += [{"column": column, "change": CHANGE_KINDS[k], "count": n} for k, n in sorted(counts.items())]
            else:
                out[column] = _cast(df[column], kind, where)
            if column in self.levels:
                _check_declared_levels(out[column], self.levels[column], where)
        return out.reset_index(drop=True)

    def unknown_levels(self, real: pd.DataFrame, other: pd.DataFrame, what: str = "synthetic data",
                       reference: str = "real data") -> dict[str, dict]:
        """Per categorical column, the values of `other` whose level is neither in `real` nor among the
        declared `levels` (both conformed): {column: {"share", "count", "levels"}}, `share` of the
        column's non-missing values, `levels` the unknown levels, most frequent first. A column that
        shares no level at all with them is refused: its values are another encoding (codes for
        labels, say), and an attack on them would be measured against nothing. Columns with no
        unknown level are left out."""
        found = {}
        for column in self.categorical:
            values = other[column].dropna()
            if not len(values):
                continue
            known = set(real[column].dropna()) | set(self.levels.get(column, []))
            inside = values.isin(known)
            if not inside.any():
                raise DataError(
                    f"{what}: categorical column '{column}' shares no level with the {reference}: "
                    f"{what} levels {_show_levels(values)}, {reference} levels {_show_levels(pd.Series(sorted(known)))}; "
                    f"{what} writes this column in another encoding than the {reference}: recode it to the same "
                    "levels")
            if not inside.all():
                outside = values[~inside]
                found[column] = {"share": float(1.0 - inside.mean()), "count": int(len(outside)),
                                 "levels": [str(v) for v in outside.value_counts().index]}
        return found

    def unknown_level_shares(self, real: pd.DataFrame, synthetic: pd.DataFrame, what: str = "synthetic data",
                             reference: str = "real data") -> dict[str, float]:
        """Per categorical column, the share of `synthetic`'s non-missing values whose level no real
        record or declared level has (`unknown_levels`)."""
        return {column: entry["share"]
                for column, entry in self.unknown_levels(real, synthetic, what, reference).items()}

    def check_levels(self, df: pd.DataFrame, what: str = "data") -> None:
        """Categorical columns need at least two levels (missing counts as a level)."""
        for column in self.categorical:
            n_levels = df[column].nunique(dropna=False)
            if n_levels < 2:
                raise SchemaError(
                    f"{what}: categorical column '{column}' has a single level "
                    f"({df[column].iloc[0]!r}); it carries no information: remove it or list it under 'drop'"
                )


def _ignore_case(columns: dict, origin: str) -> tuple[str, ...]:
    """The categorical columns marked `ignore_case: true`."""
    marked = tuple(name for name, spec in columns.items() if spec.get("ignore_case"))
    for name in marked:
        if columns[name]["type"] != CATEGORICAL:
            raise SchemaError(f"{origin}: column '{name}' is {columns[name]['type']}; 'ignore_case' belongs to "
                              "categorical columns")
    return marked


def _domain_metadata(columns: dict, origin: str, ignore_case: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """`levels` (categorical only, in the canonical text of the data: `synthrisk.data.canonical`) and
    `bounds` (numeric only, low < high)."""
    levels, bounds = {}, {}
    for name, spec in columns.items():
        if "levels" in spec:
            if spec["type"] != CATEGORICAL:
                raise SchemaError(f"{origin}: column '{name}' is {spec['type']}; 'levels' belong to categorical "
                                  "columns (give a numeric column 'bounds')")
            strings = [canonical_value(v, ignore_case=name in ignore_case)[0] for v in spec["levels"]]
            if len(set(strings)) != len(strings):
                raise SchemaError(f"{origin}: column '{name}': 'levels' repeat a value once written in canonical "
                                  "text (the same text, number or truth value written two ways)")
            levels[name] = strings
        if "bounds" in spec:
            if spec["type"] == CATEGORICAL:
                raise SchemaError(f"{origin}: column '{name}' is categorical; 'bounds' belong to numeric "
                                  "columns (give a categorical column 'levels')")
            low, high = (float(v) for v in spec["bounds"])
            if not (np.isfinite(low) and np.isfinite(high) and low < high):
                raise SchemaError(f"{origin}: column '{name}': 'bounds' must be finite with low < high, "
                                  f"got {spec['bounds']}")
            bounds[name] = (low, high)
    return levels, bounds


def _check_declared_levels(values: pd.Series, levels: list[str], where: str) -> None:
    present = values.dropna()
    unknown = present[~present.isin(levels)]
    if len(unknown):
        examples = unknown.unique()[:3].tolist()
        raise SchemaError(f"{where} holds {len(unknown)} value(s) outside its declared levels, such as "
                          f"{examples}; add them to 'levels' or recode the data")


def _cast(series: pd.Series, kind: str, where: str) -> pd.Series:
    """A numeric column (integer or continuous) checked and cast."""
    try:
        numeric = pd.to_numeric(series, errors="coerce")
    except (TypeError, ValueError, OverflowError):  # e.g. lists or other objects in a cell
        numeric = pd.to_numeric(series.map(lambda v: v if np.ndim(v) == 0 else repr(v)), errors="coerce")
    bad = numeric.isna() & series.notna()
    if bad.any():
        examples = series[bad].astype(str).unique()[:3].tolist()
        raise SchemaError(f"{where} is declared {kind} but holds non-numeric values such as {examples}")
    values = numeric.astype("float64")
    infinite = np.isinf(values.to_numpy(dtype="float64", na_value=np.nan))
    if infinite.any():
        raise SchemaError(f"{where} holds infinite values (inf or -inf) in {int(infinite.sum())} row(s); "
                          "synthrisk refuses them: replace them with finite values or leave the cells empty "
                          "(missing)")
    with np.errstate(invalid="ignore"):
        huge = np.abs(values.to_numpy(dtype="float64", na_value=np.nan)) > LARGEST_VALUE
    if huge.any():
        raise SchemaError(f"{where} holds values beyond +-{LARGEST_VALUE:.3g} in {int(huge.sum())} row(s), such as "
                          f"{values[huge].iloc[0]:g}; the attack models compute in 32-bit floats, which end there: "
                          "rescale the column (e.g. other units)")
    if kind == INTEGER:
        finite = values.dropna()
        if not np.allclose(finite, np.round(finite)):
            raise SchemaError(f"{where} is declared integer but holds fractional values")
        if len(finite) and float(np.abs(finite).max()) >= 2.0**63:
            raise SchemaError(f"{where} is declared integer but holds values beyond the 64-bit integer range "
                              f"(such as {float(finite.abs().max()):g}); declare it continuous or rescale it")
        if numeric.dtype.kind in "iu" or str(numeric.dtype) in ("Int64", "Int32", "Int16", "Int8"):
            return numeric.astype("Int64")  # exact: no detour through float
        return values.round().astype("Int64")
    return values


def _canonical_names(df: pd.DataFrame, what: str, changes: list | None) -> pd.DataFrame:
    """`df` with its column names in canonical text; two names that become one are refused."""
    names = [canonical_name(c) for c in df.columns]
    if names == list(df.columns):
        return df
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise SchemaError(f"{what}: column names {[str(c) for c in df.columns if canonical_name(c) in clashes]} are "
                          "the same name once spaces and the Unicode form are set aside; rename one of them")
    if changes is not None:
        changes += [{"column": new, "change": "column name written another way (whitespace, Unicode form, a number)",
                     "count": 1} for old, new in zip(df.columns, names) if old != new]
    return df.set_axis(names, axis=1)


def _show_levels(values: pd.Series, limit: int = 10) -> str:
    levels = sorted({str(v) for v in values.unique()})
    shown = ", ".join(repr(v) for v in levels[:limit])
    return f"[{shown}{f', ... ({len(levels)} levels)' if len(levels) > limit else ''}]"


def _check_names(columns: dict, sensitive: list[str], origin: str) -> None:
    """Names that cannot work end to end are refused here, with the reason."""
    for name in columns:
        if name in RESERVED_COLUMNS:
            raise SchemaError(f"{origin}: column name '{name}' is reserved for the split files' record ids; "
                              "rename the column")
        if not str(name).strip():
            raise SchemaError(f"{origin}: a column name is empty or blank; give every column a name")
    for name in sensitive:
        bad = [c for c in PATH_BREAKING if c in name] + [repr(c) for c in name if ord(c) < 32 or ord(c) == 127]
        if bad:
            raise SchemaError(
                f"{origin}: sensitive column '{name}' contains {bad}: a sensitive column's name becomes part "
                "of output file names (results/rapid/.../{attacker}-{sensitive}.json), so it may not hold "
                "'/', '\\', '{', '}' or control characters; rename the column")
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise SchemaError(f"{origin}: sensitive column '{name[:40]}...' has a name longer than {MAX_NAME_BYTES} "
                              "bytes, too long for the output file names it becomes part of; shorten it")


def load_schema(path: str | Path) -> DatasetSchema:
    """Read and validate a dataset schema YAML file; errors name the file and the cause."""
    from ..io import read_yaml

    raw = read_yaml(path, "schema", SchemaError)
    if raw is None:
        raise SchemaError(f"{path}: the schema file is empty; write one with `synthrisk schema infer`")
    if not isinstance(raw, dict):
        raise SchemaError(f"{path}: a dataset schema must be a mapping")
    return DatasetSchema.from_dict(raw, origin=str(path))
