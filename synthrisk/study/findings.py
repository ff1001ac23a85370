"""Published findings as data, recomputed from a finished run and rendered as REPRODUCE.md.

Each finding of `config/findings.yaml` names the tables of `results/tables/` it reads, the rows
(`where`, a pandas query) and columns that give our numbers, an expression of those numbers
(`ours`, evaluated by `pandas.eval`) and a test: `within` a published range (± `tolerance`),
`at_least` / `at_most` a bound (a claimed direction), or `increasing` / `decreasing` along a
column (a claimed shape). Rendering reads only the run's files (its tables and
`results/provenance.json`), never the clock or the checkout, so the same run renders to the same
bytes, and a number in REPRODUCE.md cannot drift from the run it names.

A finding whose table the run did not produce, or whose rows it does not hold (a generator, an
attacker or a dataset the configuration leaves out), is rendered "not run in this configuration"
with what is missing: never blank, never passing.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import ConfigError, SynthriskError

PROVENANCE_FILE = "results/provenance.json"
TABLES_DIR = "results/tables"

WITHIN = "within tolerance"
HOLDS = "direction holds"
NOT_REPRODUCED = "not reproduced"
NOT_RUN = "not run in this configuration"
AGREEMENTS = (WITHIN, HOLDS, NOT_REPRODUCED, NOT_RUN)

# Scalar tests compare every element of `ours`; shape tests walk along the `by` column of a series.
SCALAR_TESTS = ("within", "at_least", "at_most")
SHAPE_TESTS = ("increasing", "decreasing")
VALUE_KEYS = {"table", "where", "column", "by", "label", "at", "reduce", "optional"}
#: how an optional value the run does not have is shown
ABSENT = "(not in this run)"
FINDING_KEYS = {"id", "paper", "finding", "setting", "published", "table", "where", "values", "ours", "shown",
                "test", "note"}
REDUCERS = ("min", "max", "mean")


class NotRun(Exception):
    """The run holds no data for a finding (its table or rows are absent): says what is missing."""


@dataclass
class Result:
    finding: dict
    agreement: str
    ours: str
    missing: str = ""
    values: dict = field(default_factory=dict)


def load_findings(path: str | Path) -> dict:
    """The findings file, checked: every finding names a known paper, values, `ours` and one test."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the findings file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ConfigError(f"{path}: expected a mapping with `papers` and a list `findings`")
    papers = data.get("papers") or {}
    seen = set()
    for index, finding in enumerate(data["findings"]):
        where = f"{path}: findings[{index}]"
        if not isinstance(finding, dict) or "id" not in finding:
            raise ConfigError(f"{where}: each finding needs an `id`")
        where = f"{path}: finding {finding['id']!r}"
        if finding["id"] in seen:
            raise ConfigError(f"{where}: duplicate id")
        seen.add(finding["id"])
        unknown = set(finding) - FINDING_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(FINDING_KEYS)}")
        for key in ("paper", "finding", "published", "values", "ours", "test"):
            if key not in finding:
                raise ConfigError(f"{where}: missing `{key}`")
        for key in ("finding", "setting", "published", "note", "shown"):
            if key in finding and not isinstance(finding[key], str):
                raise ConfigError(f"{where}: `{key}` must be text, got {finding[key]!r} (quote YAML's yes/no/numbers)")
        if finding["paper"] not in papers:
            raise ConfigError(f"{where}: paper {finding['paper']!r} is not under `papers` ({sorted(papers)})")
        _check_test(finding["test"], where)
        if not isinstance(finding["ours"], (str, list)):
            raise ConfigError(f"{where}: `ours` must be an expression or a list of expressions")
        for name, spec in finding["values"].items():
            spec = _value_spec(finding, name, spec, where)
            if not isinstance(spec["optional"], bool):
                raise ConfigError(f"{where}: value {name!r}: optional must be true or false")
            if spec["reduce"] is not None and spec["reduce"] not in REDUCERS:
                raise ConfigError(f"{where}: value {name!r}: reduce must be one of {REDUCERS}")
            if spec["optional"] and any(re.search(rf"\b{re.escape(name)}\b", str(e)) for e in _expressions(finding)):
                raise ConfigError(f"{where}: value {name!r} is optional but `ours` uses it: "
                                  f"a test cannot rest on a value the run may not have")
        if isinstance(finding["ours"], list) and "shown" not in finding:
            raise ConfigError(f"{where}: several expressions in `ours` need a `shown` template")
    return data


def _expressions(finding: dict) -> list:
    """A finding's `ours` as a list of expressions."""
    return finding["ours"] if isinstance(finding["ours"], list) else [finding["ours"]]


def _check_test(test, where):
    if not isinstance(test, dict):
        raise ConfigError(f"{where}: `test` must be a mapping such as {{within: [0.7, 0.74], tolerance: 0.02}}")
    kinds = [k for k in test if k in SCALAR_TESTS + SHAPE_TESTS]
    if len(kinds) != 1:
        raise ConfigError(f"{where}: `test` needs exactly one of {SCALAR_TESTS + SHAPE_TESTS}, got {sorted(test)}")
    unknown = set(test) - set(SCALAR_TESTS + SHAPE_TESTS) - {"tolerance", "slack", "describe"}
    if unknown:
        raise ConfigError(f"{where}: `test`: unknown key(s) {sorted(unknown)}")
    if kinds[0] == "within":
        bounds = test["within"]
        if not (isinstance(bounds, list) and len(bounds) == 2 and bounds[0] <= bounds[1]):
            raise ConfigError(f"{where}: `test.within` must be [low, high] with low <= high")


def _value_spec(finding: dict, name: str, spec, where: str) -> dict:
    """A value's full spec: a bare column name inherits the finding's `table` and `where`."""
    if isinstance(spec, str):
        spec = {"column": spec}
    if not isinstance(spec, dict) or "column" not in spec:
        raise ConfigError(f"{where}: value {name!r} must be a column name or a mapping with `column`")
    unknown = set(spec) - VALUE_KEYS
    if unknown:
        raise ConfigError(f"{where}: value {name!r}: unknown key(s) {sorted(unknown)}")
    full = {"table": finding.get("table"), "where": finding.get("where"), "by": None, "label": None, "at": None,
            "reduce": None, "optional": False, **spec}
    if not full["table"]:
        raise ConfigError(f"{where}: value {name!r} names no `table` (set it on the value or the finding)")
    return full


# --- computing our numbers ---------------------------------------------------------------------

class Tables:
    """The run's tables, read once each; a missing table is a `NotRun`, not an error."""

    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir) / TABLES_DIR
        self._cache: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            path = self.dir / f"{name}.csv"
            if not path.is_file():
                raise NotRun(f"{name}.csv not produced")
            self._cache[name] = pd.read_csv(path)
        return self._cache[name]


def compute_value(tables: Tables, spec: dict, where: str):
    """One named number (or a series along `by`) from the run's tables."""
    frame = tables[spec["table"]]
    missing = [c for c in [spec["column"], spec["by"], *(spec["at"] or {})] if c and c not in frame.columns]
    if missing and spec["optional"]:  # context a run made before the column existed does not have
        raise NotRun(f"{spec['table']}.csv has no column(s) {missing}")
    if missing:
        raise ConfigError(f"{where}: {spec['table']}.csv has no column(s) {missing}; "
                          f"its columns: {list(frame.columns)}")
    rows = frame
    if spec["where"]:
        try:
            rows = frame.query(spec["where"], engine="python")
        except Exception as exc:  # pandas raises many kinds for a bad query; name the finding
            raise ConfigError(f"{where}: `where` {spec['where']!r} on {spec['table']}.csv: {exc}") from None
    if rows.empty:
        raise NotRun(f"no rows of {spec['table']}.csv with {spec['where']}")
    for column, extreme in (spec["at"] or {}).items():
        if extreme not in ("min", "max"):
            raise ConfigError(f"{where}: `at: {{{column}: {extreme}}}` must be min or max")
        rows = rows[rows[column] == getattr(rows[column], extreme)()]
    if spec["by"]:
        grouped = rows.groupby(spec["by"], sort=True)[spec["column"]]
        if spec["reduce"]:
            return getattr(grouped, spec["reduce"])()
        if grouped.size().max() > 1:
            raise ConfigError(f"{where}: several rows of {spec['table']}.csv per {spec['by']}; "
                              f"narrow `where` or set `reduce` ({', '.join(REDUCERS)})")
        series = grouped.first()
        series.attrs["label"] = spec["label"] or spec["by"]
        return series
    if spec["reduce"]:
        return getattr(rows[spec["column"]], spec["reduce"])()
    if len(rows) > 1:
        raise ConfigError(f"{where}: `where` matches {len(rows)} rows of {spec['table']}.csv; "
                          f"narrow it, or set `by` or `reduce` ({', '.join(REDUCERS)})")
    value = rows[spec["column"]].iloc[0]
    return value.item() if isinstance(value, np.generic) else value


def evaluate(expression: str, values: dict, where: str):
    try:
        result = pd.eval(expression, local_dict=values, engine="python")
    except Exception as exc:  # a name or operator pandas.eval refuses; name the finding
        raise ConfigError(f"{where}: cannot evaluate `ours` {expression!r}: {exc}") from None
    if isinstance(result, pd.Series):
        label = next((v.attrs.get("label") for v in values.values() if isinstance(v, pd.Series)), None)
        result.attrs["label"] = label
    return result


def _elements(result) -> list[float]:
    if isinstance(result, pd.Series):
        return [float(v) for v in result.to_numpy()]
    return [float(result)]


def judge(test: dict, results: list, where: str = "finding") -> str:
    """Agreement of our numbers with the published finding under its test; a missing value
    (NaN) never agrees."""
    tolerance = float(test.get("tolerance", 0.0))
    if "increasing" in test or "decreasing" in test:
        slack = float(test.get("slack", 0.0))
        sign = 1.0 if "increasing" in test else -1.0
        for result in results:
            if not isinstance(result, pd.Series) or len(result) < 2:
                raise ConfigError(f"{where}: a shape test (increasing/decreasing) needs a series of at least two "
                                  "points: set `by` on its value")
            steps = np.diff(result.to_numpy(dtype=float)) * sign
            if not (np.all(np.isfinite(steps)) and np.all(steps >= -slack) and steps.sum() > 0):
                return NOT_REPRODUCED
        return HOLDS
    numbers = [x for result in results for x in _elements(result)]
    if not numbers or not all(math.isfinite(x) for x in numbers):
        return NOT_REPRODUCED
    if "within" in test:
        low, high = test["within"]
        return WITHIN if all(low - tolerance <= x <= high + tolerance for x in numbers) else NOT_REPRODUCED
    if "at_least" in test:
        return HOLDS if all(x >= test["at_least"] - tolerance for x in numbers) else NOT_REPRODUCED
    return HOLDS if all(x <= test["at_most"] + tolerance for x in numbers) else NOT_REPRODUCED


def describe_test(test: dict) -> str:
    if "describe" in test:
        return test["describe"]
    tol = f" ± {fmt(test['tolerance'])}" if test.get("tolerance") else ""
    if "within" in test:
        low, high = test["within"]
        return f"in [{fmt(low)}, {fmt(high)}]{tol}" if low != high else f"{fmt(low)}{tol}"
    if "at_least" in test:
        return f"≥ {fmt(test['at_least'])}" + (f" − {fmt(test['tolerance'])}" if test.get("tolerance") else "")
    if "at_most" in test:
        return f"≤ {fmt(test['at_most'])}" + (f" + {fmt(test['tolerance'])}" if test.get("tolerance") else "")
    kind = "increasing" if "increasing" in test else "decreasing"
    return kind + (f" (steps may reverse by ≤ {fmt(test['slack'])})" if test.get("slack") else "")


# --- formatting -------------------------------------------------------------------------------

def fmt(value) -> str:
    """Three significant digits; integers as integers; a missing number as 'none'."""
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    value = float(value)
    if abs(value) < 5e-13:
        return "0"
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"


def fmt_series(series: pd.Series, points: int = 5) -> str:
    """A series as 'value at label = x' for at most `points` evenly spaced entries (ends kept)."""
    label = series.attrs.get("label")
    index = np.unique(np.linspace(0, len(series) - 1, min(points, len(series))).round().astype(int))
    parts = []
    for i in index:
        key, value = series.index[i], series.iloc[i]
        numeric = isinstance(key, (int, float, np.number)) and not isinstance(key, bool)
        parts.append(f"{fmt(value)} at {label} = {fmt(key)}" if numeric else f"{fmt(value)} ({key})")
    shown = ", ".join(parts)
    return shown if len(index) == len(series) else f"{shown} ({len(index)} of {len(series)} points)"


def fmt_any(value) -> str:
    return fmt_series(value) if isinstance(value, pd.Series) else fmt(value)


def compute(finding: dict, tables: Tables) -> Result:
    where = f"finding {finding['id']!r}"
    values = {}
    for name, spec in finding["values"].items():
        spec = _value_spec(finding, name, spec, where)
        try:
            values[name] = compute_value(tables, spec, where)
        except NotRun as missing:
            if not spec["optional"]:
                return Result(finding, NOT_RUN, f"({missing})", missing=str(missing))
            values[name] = None  # context beside the test, not part of it: shown as ABSENT
    results = [evaluate(expression, values, where) for expression in _expressions(finding)]
    shape = any(kind in finding["test"] for kind in SHAPE_TESTS)
    short = [r for r in results if shape and isinstance(r, pd.Series) and len(r) < 2]
    if short:  # the configuration has one point of the curve: no direction to test
        missing = f"a single {short[0].attrs.get('label')} in the run: no direction to test"
        return Result(finding, NOT_RUN, f"({missing})", missing=missing, values=values)
    agreement = judge(finding["test"], results, where)
    if "shown" in finding:
        try:
            shown = finding["shown"].format_map({name: ABSENT if v is None else fmt_any(v)
                                                 for name, v in values.items()})
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"{where}: `shown` names {exc}, not one of its values {sorted(values)}") from None
    else:
        shown = fmt_any(results[0])
    return Result(finding, agreement, shown, values=values)


# --- provenance and rendering -----------------------------------------------------------------

def read_provenance(run_dir: str | Path) -> dict:
    path = Path(run_dir) / PROVENANCE_FILE
    if not path.is_file():
        raise SynthriskError(f"{path} not found: findings are rendered from a finished run, whose "
                             "`provenance` rule writes it (snakemake results/provenance.json)")
    return json.loads(path.read_text())


def _repository_relative(path: str) -> str:
    """A config file as the user names it (config/x.yaml), not where this checkout happens to be."""
    parts = Path(path).parts
    return str(Path(*parts[parts.index("config"):])) if "config" in parts else path


def describe_run(run_dir: str | Path) -> str:
    """One paragraph saying what the run holds, from its configuration as run (results/config.yaml):
    the page describes the run it was rendered from, whichever configuration that was."""
    import yaml

    path = Path(run_dir) / "results/config.yaml"
    if not path.is_file():
        return "The run's configuration (results/config.yaml) is missing."
    config = yaml.safe_load(path.read_text()) or {}
    datasets = ", ".join(f"{name} ({spec.get('n_train', '?'):,} members, {spec.get('n_holdout', '?'):,} holdout)"
                         if isinstance(spec.get("n_train"), int) and isinstance(spec.get("n_holdout"), int)
                         else name for name, spec in (config.get("datasets") or {}).items())
    generators = [name for name, spec in (config.get("generators") or {}).items() if spec.get("enabled", True)]
    off = [name for name, spec in (config.get("generators") or {}).items() if not spec.get("enabled", True)]
    seeds = config.get("seeds") or []
    from ..measures import builtin_measures

    measures = [name for name, m in builtin_measures().items() if name in config or m.default_on]
    text = (f"This run: datasets {datasets}; generators {', '.join(f'`{g}`' for g in generators)}"
            + (f" (switched off: {', '.join(f'`{g}`' for g in off)})" if off else "")
            + f"; {len(seeds)} seed{'s' if len(seeds) != 1 else ''}; measures {', '.join(measures) or 'utility only'}"
            + ("; the DP experiments" if "dp" in config else "; no DP experiments")
            + _describe_audits(config) + ".")
    return text


def _describe_audits(config: dict) -> str:
    """The stages of config/audit.yaml, when the run has them."""
    from ..epsilon_audit.stage import DEFAULTS as AUDIT_DEFAULTS
    from ..shadow_mia.stage import DEFAULTS as SHADOW_DEFAULTS

    parts = []
    if "shadow_mia" in config:
        shadow = {**SHADOW_DEFAULTS, **(config["shadow_mia"] or {})}
        parts.append(f"the shadow-model attack on {', '.join(f'`{g}`' for g in shadow['generators'])}"
                     f" ({shadow['dataset']})")
    if "epsilon_audit" in config:
        audit = {**AUDIT_DEFAULTS, **(config["epsilon_audit"] or {})}
        epsilons = ", ".join(f"{e:g}" for e in audit["epsilons"])
        parts.append(f"the empirical ε audit of {', '.join(f'`{g}`' for g in audit['generators'])}"
                     f" at ε {epsilons}")
    return "".join(f"; {part}" for part in parts)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(run_dir: str | Path, findings_path: str | Path) -> str:
    """REPRODUCE.md for the run in `run_dir`, from its tables and its provenance only."""
    provenance = read_provenance(run_dir)
    data = load_findings(findings_path)
    tables = Tables(run_dir)
    results = [compute(finding, tables) for finding in data["findings"]]

    lines = ["# Reproducing the published findings", "",
             "<!-- Generated by `synthrisk findings` from config/findings.yaml and the run named below; "
             "do not edit by hand: edit config/findings.yaml and rerun `make reproduce`. -->", ""]
    lines += [data.get("intro", "").strip(), ""] if data.get("intro") else []
    commit = provenance.get("commit", "unknown")
    dirty = provenance.get("dirty")
    configfiles = " ".join(_repository_relative(f) for f in provenance.get("configfiles", []))
    lines += ["## The run", "", describe_run(run_dir), "",
              "| | |", "|---|---|",
              f"| run directory | {_cell(provenance.get('run_directory', 'unknown'))} |",
              f"| configuration | {_cell(configfiles or 'unknown')} |",
              f"| config sha256 | `{provenance.get('config_sha256', 'unknown')}` |",
              f"| commit | `{commit}`" + (" (with local changes)" if dirty else "") + " |",
              f"| synthrisk version | {provenance.get('synthrisk_version', 'unknown')} |",
              f"| completed | {provenance.get('completed', 'unknown')} |", ""]
    counts = {agreement: sum(r.agreement == agreement for r in results) for agreement in AGREEMENTS}
    lines += ["Agreement over all findings: " + ", ".join(f"{n} {a}" for a, n in counts.items()) + ".", ""]

    for key, paper in data["papers"].items():
        chosen = [r for r in results if r.finding["paper"] == key]
        if not chosen:
            continue
        lines += [f"## {paper['title']}", ""]
        if paper.get("citation"):
            lines += [paper["citation"].strip(), ""]
        if paper.get("setting"):
            lines += [paper["setting"].strip(), ""]
        lines += ["| published finding | setting | published | ours | test | agreement |",
                  "|---|---|---|---|---|---|"]
        for r in chosen:
            f = r.finding
            lines.append("| " + " | ".join(_cell(x) for x in (
                f["finding"], f.get("setting", ""), f["published"], r.ours, describe_test(f["test"]),
                r.agreement)) + " |")
        notes = [r for r in chosen if r.finding.get("note")]
        if notes:
            lines += [""] + [f"- *{_cell(r.finding['finding'])}*: {r.finding['note'].strip()}" for r in notes]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def results_for(run_dir: str | Path, findings_path: str | Path) -> list[Result]:
    """Every finding's result for a run (tests and other tools; `render` formats the same)."""
    data = load_findings(findings_path)
    tables = Tables(run_dir)
    return [compute(finding, tables) for finding in data["findings"]]
