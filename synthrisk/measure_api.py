"""One measure at a time, with one signature and one result type.

    import synthrisk
    found = synthrisk.measure("dcr", train, synthetic, holdout, sensitive="income")
    found.level, found.value, found.reference, found.ci_low, found.ci_high, found.p_value
    found.verdict                     # the same in one sentence
    found.records                     # the per-record table
    found.evidence                    # every attack of the measure against its reference

`measure` takes the measure's name (any registered measure: `synthrisk.measures.registered_measures()`,
or a plug-in's), then the training records, the synthetic release and the holdout, in that order
(the only positional arguments), then keywords, and returns a `Measurement`. It runs one measure
exactly as `synthrisk.audit` runs it: the inputs read and checked where they enter
(`synthrisk.release_audit.inputs.read_inputs`: DataFrames or files, a schema inferred when none is
given), the measure's units through the shared runner (`synthrisk.measures.runner`) in memory, the
measure's own `tabulate` and `evidence`, and the verdict read by
`synthrisk.measures.verdict.risk_table` against a `Policy`. Settings default to the audit's
(`synthrisk.release_audit.run.AUDIT_SETTINGS`, else the measure's own `Settings`); keywords beyond
the common ones are the measure's settings (the fields of its `Settings`, as the configuration
reference lists them), and an unknown one is refused by name.

The verdict here reads the measure's own attacks (Holm over them); the audit reads every measure of
a risk together, so a risk's level in `synthrisk.audit` may differ from one measure's.
"""

from __future__ import annotations

import contextlib
import io
import math
from dataclasses import dataclass, field

import pandas as pd

from .data.schema import DatasetSchema
from .errors import ConfigError
from .measures import EVIDENCE_COLUMNS, Measure
from .measures.policy import as_policy

__all__ = ["Measurement", "measure"]

#: the summary keys the runner adds for the workflow's tables; a lone release has no dataset or generator
_RUN_KEYS = ("dataset", "generator")


@dataclass(frozen=True, eq=False)
class Measurement:
    """What one measure found on one release: its strongest attack against its reference, with the
    interval, the p-value and the verdict, and the tables behind them.

    Attributes
    ----------
    measure : str
        The measure's name (`"dcr"`, `"rapid"`, ... or a plug-in's).
    risk : str or None
        The risk it measures (`membership`, `attribute_inference`, `singling_out`, `linkability`);
        None for utility.
    attack : str or None
        The strongest attack: the one with the largest simultaneous lower bound among those that
        beat their reference, else the one closest to doing so (smallest p-value).
    metric : str or None
        What `value` is (`AUC`, `share closer to members`, `RAPID member excess`, `risk vs control`,
        `SDMetrics quality`).
    value, reference : float or None
        The strongest attack's value and the reference it is read against (chance, the holdout, the
        control records); for utility, the SDMetrics quality score and None.
    ci_low, ci_high : float or None
        The value's 95% interval.
    p_value : float or None
        The one-sided p-value of the strongest attack beating its reference (its own test, before
        Holm's adjustment over the measure's attacks, which the verdict applies).
    level : str or None
        The level (`synthrisk.measures.policy.LEVELS`): "at risk", "below the threshold" or
        "inconclusive"; None for utility, or when no attack gave a number.
    verdict : str or None
        The verdict as one sentence: the level, the attack shown, its effect and its bounds
        against the policy threshold, how many attacks beat their reference (as
        `Audit.risks` has `level` and `verdict`).
    records : DataFrame
        The per-record table (row ids, never real values: members are numbered from 0 in the order
        of `train`, holdout records after them, unless the frames carry a `row_id` column). A
        measure with units (RAPID: one per attacker x sensitive attribute) has their tables one under
        the other, with the unit's keys (`attacker`, `sensitive`) as the first columns. Utility: the
        efficacy table (target, metric, synthetic, real, ratio).
    evidence : DataFrame
        Every attack of the measure against its reference (`synthrisk.measures.EVIDENCE_COLUMNS`),
        the rows the verdict is read from; empty for utility.
    outcomes : DataFrame
        What each attack did to each attacked member (`synthrisk.measures.base.OUTCOME_COLUMNS`, with
        the run's `unit`): whether it got them right (`hit`), and for an attack that names members
        with a controlled error rate, whether it names them, by which test, with score and p-value.
        Empty for a measure that attacks nobody.
    details : dict
        The run's summary (the keys its measure documents, with `seed`, `status` and `error`); for a
        measure with units, one summary per unit (`{"cart-income": {...}, ...}`).
    notes : list of str
        What the input checks found (small files, overlapping records, a holdout that looks like
        another population, sensitive columns replaced).
    schema : DatasetSchema
        The schema the data were checked against (given, or inferred from `train`).
    """

    measure: str
    risk: str | None
    attack: str | None
    metric: str | None
    value: float | None
    reference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    level: str | None
    verdict: str | None
    records: pd.DataFrame = field(repr=False)
    evidence: pd.DataFrame = field(repr=False)
    details: dict = field(repr=False)
    outcomes: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    notes: list = field(default_factory=list, repr=False)
    schema: DatasetSchema | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        def number(x):
            return "n/a" if x is None else f"{x:.3f}"

        if self.risk is None:
            return f"Measurement({self.measure}: {self.metric} {number(self.value)})"
        if self.level is None:
            return f"Measurement({self.measure}, {self.risk}: no attack gave a number)"
        interval = "" if self.ci_low is None else f" [{number(self.ci_low)}, {number(self.ci_high)}]"
        p = "" if self.p_value is None else f", p = {self.p_value:.2g}"
        return (f"Measurement({self.measure}, {self.risk}: {self.level}; {self.attack}: {self.metric} "
                f"{number(self.value)}{interval} vs reference {number(self.reference)}{p})")


def _number(value) -> float | None:
    """A float, or None for a missing or undefined number."""
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _resolve(name) -> Measure:
    """The measure named (a registered measure, built-in or plug-in), or the `Measure` given."""
    from .measures.registry import measure as registered

    if isinstance(name, type) and issubclass(name, Measure):
        name = name()
    if isinstance(name, Measure):
        if not getattr(name, "name", None):
            raise ConfigError(f"measure: the {type(name).__name__} measure has no `name`")
        return name
    if isinstance(name, str):
        return registered(name)
    raise ConfigError(f"measure: give the name of a registered measure or a Measure, not a {type(name).__name__}")


def _records_and_details(runs, measure: Measure) -> tuple[pd.DataFrame, dict]:
    """(records, details) of the measure's runs: one run's table and summary, or, for a measure with
    units, the tables of its runs that went through one under the other with the unit's keys, and
    one summary per unit."""
    summaries = {}
    tables = []
    for outcome in runs:
        summaries[outcome.unit] = {k: v for k, v in outcome.summary.items() if k not in _RUN_KEYS}
        if outcome.status == "ok":
            table = outcome.records
            if outcome.unit is not None:
                keys = measure.unit_key(outcome.unit)
                table = pd.concat([pd.DataFrame(keys, index=table.index), table.drop(columns=list(keys), errors="ignore")],
                                  axis=1)
            tables.append(table)
    if not measure.has_units:
        return (tables[0] if tables else pd.DataFrame(columns=list(measure.record_columns))), summaries[None]
    records = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(measure.record_columns))
    return records, summaries


def _check_outcomes(runs, name: str) -> None:
    """A failed run stops the call with its error; a measure none of whose runs applied says why."""
    failed = [r for r in runs if r.status == "failed"]
    if failed:
        first = failed[0]
        raise RuntimeError(f"{first.run.label} failed: {first.reason} (its traceback is on stderr)")
    if not any(r.status == "ok" for r in runs):
        raise ConfigError(f"{name}: does not apply to these inputs: {runs[0].reason}")


def measure(name, train, synthetic, holdout=None, *, schema=None, sensitive=None, policy=None, aux=None, seed: int = 0,
            read_options: dict | None = None, generator=None, **settings) -> Measurement:
    """Run one measure on a release, as the audit runs it, and read its verdict.

    Every registered measure runs through this one function, a plug-in's too.

    Parameters
    ----------
    name : str or Measure
        A registered measure's name (built-in, or a plug-in's registered with
        `synthrisk.measures.register_measure`), or a `synthrisk.measures.Measure` instance or class.
    train : DataFrame or path
        The records the generator was trained on (the members).
    synthetic : DataFrame or path
        The synthetic release.
    holdout : DataFrame or path, optional
        Records of the same population that the generator never saw. The membership measures, the
        control-set measures and utility need them; RAPID reads the member excess against them and
        without them falls back to its chance floor.
    schema : DatasetSchema, dict or path, optional
        Column types and roles. Default: inferred from `train`, every column but the sensitive ones
        a quasi-identifier.
    sensitive : str or list of str, optional
        The sensitive column(s); needed without `schema`, and replace the schema's when given with it.
    policy : Policy, dict or path, optional
        The release policy the verdict is read against (family-wise level, power, threshold per
        risk). Default: `Policy()`.
    aux : DataFrame or path, optional
        Population records that are neither members nor holdout (the attacker's sample): DOMIAS's
        reference density, and the realistic KDE attack of `mia`. Needs `holdout`.
    seed : int
        The seed of every random draw (attack sets, permutations, model fits). Default 0, as the audit.
    read_options : dict, optional
        Reader options of text files (`sep`, `encoding`, `na_values`, ...; `synthrisk.io.ReadOptions`).
    generator : str or dict, optional
        The generator that made the release (a backend name, ``package.module:Class`` or its config
        entry), for the measures that need it (`shadow_models`, `ensemble`, and `mama_mia` for MST or
        synthcity's PrivBayes); they are skipped without it.
    **settings
        The measure's settings (the fields of its `Settings`, e.g. RAPID's `attackers`,
        `permutations`, `null_refits`); default: the audit's, else the measure's own defaults.

    Returns
    -------
    Measurement
        The strongest attack against its reference, its interval, p-value and verdict, the
        per-record table, every attack's evidence row and the run's summary.

    Raises
    ------
    synthrisk.errors.ConfigError
        An unknown measure or setting (named), a measure that does not apply to these inputs (with
        the reason: no holdout, no auxiliary records, no sensitive column).
    synthrisk.errors.SynthriskError
        Bad input (a `DataError` or `SchemaError`), naming the DataFrame or file and the column,
        before the measure runs.
    RuntimeError
        The measure failed on these inputs (its error; the traceback is printed on stderr).
    """
    from .release_audit import read_inputs
    from .release_audit import run as audit_run
    from .release_audit.generator import generator_in_hand
    from .release_audit.summary import summarise

    chosen = _resolve(name)
    policy = as_policy(policy)
    in_hand = generator_in_hand(generator)
    # Settings first: a misspelt one is refused before the data are read.
    chosen_settings = chosen.settings({**audit_run.audit_settings(chosen, policy, in_hand), **settings})
    if schema is None and not sensitive:
        raise ConfigError(f"{chosen.name}: name the sensitive column(s) with sensitive= when no schema= is given "
                          "(the schema inferred from train makes every other column a quasi-identifier)")
    data = read_inputs(train, synthetic, holdout, schema, sensitive, read_options=read_options, aux=aux)
    measures = {chosen.name: (chosen, chosen_settings)}
    # What the measures print is the workflow's log; the Measurement holds it all.
    with contextlib.redirect_stdout(io.StringIO()):
        runs = audit_run.run_measures(data, measures, bar=False, say=audit_run.silent, seed=seed, generator=in_hand)
        if not runs:
            raise ConfigError(f"{chosen.name}: nothing to run: none of its units applies to the sensitive "
                              f"column(s) {list(data.schema.sensitive)} with the settings "
                              f"{settings or 'by default'}")
        _check_outcomes(runs, chosen.name)
        found = summarise(runs, measures, data, policy)
    evidence, risks = found.evidence, found.risks
    records, details = _records_and_details(runs, chosen)
    return _measurement(chosen, evidence, risks, records, details, data, found.outcomes.drop(columns="measure"))


def _measurement(chosen: Measure, evidence: pd.DataFrame, risks: pd.DataFrame, records: pd.DataFrame, details: dict,
                 data, outcomes: pd.DataFrame) -> Measurement:
    common = {"measure": chosen.name, "risk": chosen.risk, "records": records, "details": details,
              "notes": list(data.notes), "schema": data.schema, "outcomes": outcomes}
    if chosen.risk is None:
        label, key = chosen.utility_metric or (None, None)
        value = details.get(key) if key and isinstance(details, dict) else None
        return Measurement(**common, attack=None, metric=label, value=_number(value), reference=None, ci_low=None,
                           ci_high=None, p_value=None, level=None, verdict=None,
                           evidence=pd.DataFrame(columns=EVIDENCE_COLUMNS))
    if risks.empty:
        return Measurement(**common, attack=None, metric=None, value=None, reference=None, ci_low=None, ci_high=None,
                           p_value=None, level=None, verdict=None, evidence=evidence)
    row = risks.iloc[0]
    return Measurement(**common, attack=row["attack"], metric=row["metric"], value=_number(row["value"]),
                       reference=_number(row["reference"]), ci_low=_number(row["ci_low"]), ci_high=_number(row["ci_high"]),
                       p_value=_number(row["p_value"]), level=row["level"], verdict=row["verdict"], evidence=evidence)
