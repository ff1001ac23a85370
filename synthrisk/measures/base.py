"""The measure interface: everything computed per synthetic dataset (attacks, utility) is a Measure.

A measure is one module holding one subclass of `Measure`, registered with `@register_measure`:
- `Settings`: a dataclass whose field defaults are the measure's defaults (stated once); built
  from the measure's config block by `settings()`, which names an unknown key;
- `units()`: the jobs of one synthetic dataset ([] = one job; RAPID has one per attacker x
  sensitive attribute);
- `run()`: typed frames in (`MeasureInput`), `MeasureResult` out: the JSON summary (its keys are
  documented by the measure), a per-record table with row ids, never real values, and for an
  attack on members what it did to each (`OUTCOME_COLUMNS`: got them right, named them), which the
  audit reads to name people and rank the subgroups that carry a risk;
- `tabulate()`: the run summaries into the measure's tables, in memory; `draw()`: its figures
  (the workflow writes both: `synthrisk.study.workflow.write_summary`; the audit keeps them in
  memory);
- `evidence()`: for a risk measure, one row per dataset x generator x attack with its reference
  point (chance, control, 0.5), so that `synthrisk.measures.verdict` can name the strongest attack;
  the row also says which unit's run holds the attack's records and whether the attack reads the
  members against the holdout (`EVIDENCE_COLUMNS`), so the audit need not ask the measure back.
  Both read the measure's tables: a mapping of name to frame (`tabulate`'s output in the audit,
  the workflow's table folder, `synthrisk.io.TableFolder`, in the report).

What the steward's audit (`synthrisk.release_audit`) says about a measure in words, and how it
spends the policy's naming rate, is asked of the measure, so that the audit has no switch on
measure names:
- `explain(row)`: the one sentence on what the number of the verdict row of
  `synthrisk.measures.verdict.risk_table` (a dict: `attack`, `metric`, `value`, `reference`,
  `ci_low`, `ci_high`, ...) whose strongest attack is the measure's says, for a non-specialist
  (default: the attack, its metric, value and reference; `synthrisk.measures.wording` formats
  shares, AUCs and intervals as every other sentence does);
- `names_members(generator)`: whether the measure names members at its Settings' `fdr` (with the
  generator in hand or not: `GeneratorInHand` or None); the audit gives each the policy's naming
  rate, and hears one that refits the generator only once the exposure evidence has named someone;
- `reported(summaries)`: the measure's own numbers as its field reads them (synthpop's repU and
  DiSCO as synthpop prints them), shown on the audit's page and in its JSON beside the verdicts
  (default None: the evidence table says it all);
- for a measure that is not a risk (utility): `utility(tables)`, what the audit shows next to the
  risks, and `utility_metric`, the one number `synthrisk.measure` returns as the Measurement's value.

What only the workflow writes and its report shows (table files and formats, figure files and
their caption, the measure's columns of the summary table) is declared apart, in the measure's
`outputs` (`WorkflowOutputs`); the steward's audit reads none of it.

The generic Snakemake rule (workflow/rules/measures.smk) and script (scripts/measure.py) run any
registered measure; `synthrisk.measures.runner` owns the failure path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import ConfigError
from ..mia.metrics import LOW_FPRS
from ..settings import check, normalised

# Risk types of the one-verdict-per-risk table, in the order the report shows them.
RISKS = {
    "membership": "membership inference",
    "attribute_inference": "attribute inference",
    "singling_out": "singling out",
    "linkability": "linkability",
}
# The three criteria of the Article 29 Working Party's Opinion 05/2014 on anonymisation techniques
# (WP216), with the risks each is read from, so that a data-protection officer can file the verdicts
# under them. Membership in the training data is an attribute of the person (being in a hospital's
# records says something about them), so membership inference is read under inference.
CRITERIA = {
    "singling_out": ("singling out", ("singling_out",)),
    "linkability": ("linkability", ("linkability",)),
    "inference": ("inference", ("attribute_inference", "membership")),
}
# Columns of `Measure.evidence()`; `synthrisk.measures.verdict` reads nothing else.
# `p_value`: the one-sided p-value of "the attack beats its reference" (over seeds, twice their median);
# `ci_low`/`ci_high`: the value's 95% interval; `effect_scale`: what (value - reference) is
# multiplied by to give the attack's effect on the policy scale of `synthrisk.measures.policy`
# (2 for an AUC or a share of 0.5 at chance: the advantage over chance; 1 for a rate over a floor);
# `tpr_at_1e-03` ... `tpr_at_1e-01`: a membership attack's TPR at those FPRs (Carlini et al. 2022),
# read on `n_scored` members (per seed; means over seeds in the workflow; NaN for an attack without
# a per-member score);
# `n_identified`: members the attack names with a controlled false-discovery rate (any makes the
# risk at risk; 0 for an attack that names nobody); `named_by`: the attack whose per-person
# evidence named the members an attack of another risk got right (`synthrisk.release_audit.named`;
# empty when it names them itself or nobody); `unit`: the unit whose run holds the attack's
# per-record table (empty for a measure without units; RAPID: `{attacker}-{sensitive}`);
# `reads_holdout`: whether the attack reads the members against the holdout records (a membership
# attack, a control set that is the holdout, a member excess), so that a holdout of another
# population makes its verdict unreliable (default: true for membership).
EVIDENCE_COLUMNS = ["dataset", "generator", "risk", "measure", "attack", "metric", "value", "reference",
                    "ci_low", "ci_high", "n_seeds", "n_seeds_beating", "tpr_at_1e-02", "tpr_at_1e-03", "tpr_at_1e-01",
                    "n_scored", "detail",
                    "p_value", "effect_scale", "n_identified", "named_by", "unit", "reads_holdout"]

#: the evidence's TPR columns, lowest FPR first, and how pages and tables label them
TPR_COLUMNS = [f"tpr_at_{fpr}" for fpr in LOW_FPRS]
TPR_LABELS = {f"tpr_at_{fpr}": f"TPR at FPR {100 * float(fpr):g} %" for fpr in LOW_FPRS}

#: What one run's attacks did to each attacked member (`MeasureResult.outcomes`), so that the audit
#: reads people as data: the attack (as its evidence row names it), the member's row id, whether the
#: attack got the member right (`hit`: flagged, isolated, linked, secret guessed), and for an attack
#: that names members itself with a controlled error rate, whether it names this one (`named`), by
#: which test (`named_by`: the attack, or a test beside it), with the score and p-value it was named
#: on. An attack whose records are not per attacked member (singling out's queries) lists its hits only.
OUTCOME_COLUMNS = ["attack", "row_id", "hit", "named", "named_by", "score", "p_value"]
OUTCOME_TYPES = ["object", "int64", "bool", "bool", "object", "float64", "float64"]


def member_outcomes(attack: str, row_ids, hit, named=False, named_by="", score=float("nan"),
                    p_value=float("nan")) -> pd.DataFrame:
    """OUTCOME_COLUMNS for one attack's members (`row_ids`, each column an array or one value)."""
    row_ids = np.asarray(row_ids, dtype="int64")
    return pd.DataFrame({"attack": attack, "row_id": row_ids,
                         "hit": np.broadcast_to(np.asarray(hit, dtype=bool), row_ids.shape),
                         "named": np.broadcast_to(np.asarray(named, dtype=bool), row_ids.shape),
                         "named_by": named_by, "score": score, "p_value": p_value},
                        index=pd.RangeIndex(len(row_ids)))[OUTCOME_COLUMNS]


def hit_outcomes(records: pd.DataFrame, column: str, attack: str) -> pd.DataFrame:
    """The outcomes of `attack` on the members (`member` true) of a per-record table that holds one
    row per attacked record: a hit where its `column` says the attack succeeded on the member."""
    part = records[records["member"].astype(bool)]
    return member_outcomes(attack, part["row_id"], part[column].astype(bool))


def reported_runs(summaries: list[dict]) -> list[tuple[dict, dict]]:
    """The ok runs' summaries that a measure's `reported` reads, each with the key its rows carry:
    {"seed": seed} when several seeds ran, {} when one did (the page then needs no seed column)."""
    ok = [s for s in summaries if s.get("status") == "ok"]
    return [(s, {"seed": s["seed"]} if len(ok) > 1 else {}) for s in ok]


def no_outcomes() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in zip(OUTCOME_COLUMNS, OUTCOME_TYPES)})


class NotApplicable(Exception):
    """Raised by `Measure.run` when the measure does not apply to this input (no holdout, too few
    quasi-identifiers, ...): the run is recorded as `skipped` with the message as its reason."""


@dataclass(frozen=True)
class GeneratorInHand:
    """The generator that made the release, for the attacks that refit it or run its code (`synthrisk
    audit --generator`): the name it is shown under, its config entry ({backend: ..., params: ...}),
    `progress(done, total)`, called after each refit, and `python`, the interpreter of the environment
    of its own that the generator runs in (synthcity's), None when it runs in this process.

    Such a generator is refitted in its environment (`refits`) when `refit_in_environment` is set: the
    steward's audit sets it, having been handed the generator; the workflow does not, where the
    hundreds of refits of every synthcity model in every measure job would take hours each."""

    name: str
    spec: dict
    progress: Callable[[int, int], None] | None = field(default=None, compare=False, repr=False)
    python: str | None = None
    refit_in_environment: bool = False

    @property
    def refittable(self) -> bool:
        return self.python is None or self.refit_in_environment

    def why_not_refittable(self) -> str:
        return (f"the generator runs in an environment of its own ({self.python}); the workflow does not refit it "
                "there (hundreds of fits per measure job): synthrisk audit --generator does")

    @contextmanager
    def refits(self, seed: int):
        """A function that fits and samples the generator as `generators.run.run_generator` does: in
        this process, or in the generator's environment, one process serving every fit (its hash
        seed `seed`, so that a rerun repeats)."""
        from ..generators.environment_fits import EnvironmentFits
        from ..generators.run import run_generator

        if self.python is None:
            yield run_generator
            return
        if not self.refit_in_environment:
            raise NotApplicable(self.why_not_refittable())
        with EnvironmentFits(self.python, hash_seed=seed) as fits:
            yield fits


@dataclass(frozen=True)
class MeasureInput:
    """The frames of one synthetic dataset: members (train), the holdout (records of the same
    population the generator never saw), the attacker's auxiliary records (may be empty), the
    synthetic data, all with a `row_id` column; the schema;
    the size of the population the members were drawn from; the replicate seed; and the generator
    when the caller has it in hand (the steward's audit with --generator; None otherwise)."""

    members: pd.DataFrame
    holdout: pd.DataFrame
    aux: pd.DataFrame
    synthetic: pd.DataFrame
    schema: DatasetSchema
    population_size: int
    seed: int
    generator: GeneratorInHand | None = None


@dataclass
class MeasureResult:
    summary: dict
    records: pd.DataFrame
    #: OUTCOME_COLUMNS, from every attack of the run on members (none for a measure that attacks nobody)
    outcomes: pd.DataFrame = field(default_factory=no_outcomes)


@dataclass(frozen=True)
class Figure:
    """One figure a measure's summary writes: results/figures/{stem}.png, shown in the report
    under the measure's title with its caption."""

    stem: str
    caption: str | None


@dataclass(frozen=True)
class WorkflowOutputs:
    """What the workflow writes of a measure beyond its runs, and what its report shows
    (`synthrisk.study.workflow.write_summary`, `synthrisk.report`); the steward's audit reads none
    of it, so a measure that only the audit runs needs none of it.

    - `tables`: the names of the tables `Measure.tabulate` gives, each written as
      results/tables/{name}.csv, .md and .tex (empty: one table named as the measure);
    - `formats`: a table's formats where they are not those three, by table name;
    - `figures`: the kinds of the figures `Measure.draw` saves, each
      results/figures/{measure}_{kind}_{dataset}.png, with `caption` (a reStructuredText file in
      workflow/report/, Jinja allowed; None: the figure's own);
    - `summary`: the measure's columns of results/tables/summary.csv, keyed by dataset and generator,
      from its tables (a mapping of name to frame: the workflow's table folder,
      `synthrisk.io.TableFolder`; None: it adds none), with `summary_labels`, their labels in the
      report's summary table, in order."""

    tables: tuple[str, ...] = ()
    formats: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    figures: tuple[str, ...] = ()
    caption: str | None = None
    summary: Callable[[Mapping[str, pd.DataFrame]], pd.DataFrame | None] | None = None
    summary_labels: Mapping[str, str] = field(default_factory=dict)

    def table_names(self, measure: str) -> list[str]:
        return list(self.tables) or [measure]

    def table_formats(self, table: str) -> tuple[str, ...]:
        return self.formats.get(table, ("csv", "md", "tex"))

    def figure_files(self, measure: str, datasets) -> list[Figure]:
        return [Figure(f"{measure}_{kind}_{dataset}", self.caption) for dataset in datasets for kind in self.figures]

    def summary_columns(self, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame | None:
        return None if self.summary is None else self.summary(tables)


class Measure:
    """Base class of a measure. Subclasses set the class attributes and implement `run`."""

    #: config key, results/{name}/ directory and rule name
    name: ClassVar[str]
    #: report section title
    title: ClassVar[str]
    #: key of RISKS, or None for a measure that is not a risk (utility)
    risk: ClassVar[str | None] = None
    #: columns of the per-record table (an empty table with these is written for a failed run)
    record_columns: ClassVar[tuple[str, ...]] = ("row_id",)
    #: threads of one job
    threads: ClassVar[int] = 1
    #: the measure runs when the config has its key, or always when `default_on`
    default_on: ClassVar[bool] = False
    #: position in tables, the summary and the report (built-ins 10, 20, ...; plug-ins 100)
    order: ClassVar[int] = 100
    #: whether the measure refits the generator in hand (it runs only with one: `MeasureInput.generator`)
    refits_generator: ClassVar[bool] = False
    #: what the workflow writes of it and its report shows
    outputs: ClassVar[WorkflowOutputs] = WorkflowOutputs()

    @dataclass(frozen=True)
    class Settings:
        pass

    # --- configuration ---------------------------------------------------------------------------
    def settings(self, block: dict | None) -> Any:
        """The Settings from the measure's config block; unknown keys are refused by name."""
        block = dict(block or {})
        block.pop("module", None)
        known = {f.name for f in dataclasses.fields(self.Settings)}
        unknown = sorted(set(block) - known)
        if unknown:
            raise ConfigError(f"config: {self.name}: unknown key(s) {unknown}; known: {sorted(known)}")
        check(self.Settings, block, f"config: {self.name}")
        try:
            return self.Settings(**normalised(self.Settings, block))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"config: {self.name}: {exc}") from None

    def units(self, schema: DatasetSchema, settings) -> list[str]:
        """Jobs per synthetic dataset: [] for one job (results/{name}/.../seed{seed}.json), else
        one job per unit (results/{name}/.../seed{seed}/{unit}.json)."""
        return []

    @property
    def has_units(self) -> bool:
        """Whether the measure splits a synthetic dataset into units (its outputs then live under
        seed{seed}/{unit}); decided by the class, so every dataset has the same layout."""
        return type(self).units is not Measure.units

    def unit_key(self, unit: str) -> dict:
        """The identifying keys of a unit for the summary JSON (RAPID: attacker, sensitive)."""
        return {"unit": unit}

    # --- one synthetic dataset ---------------------------------------------------------------------
    def run(self, data: MeasureInput, settings, unit: str | None) -> MeasureResult:
        raise NotImplementedError

    def log_line(self, result: MeasureResult) -> str:
        return ""

    # --- the whole run ---------------------------------------------------------------------------
    def tabulate(self, summaries: list[dict], settings) -> dict[str, pd.DataFrame]:
        """The measure's tables ({name: frame}), in memory, from its runs' summaries (each run's
        summary as its JSON holds it, failed and skipped runs included). Default: one row per run
        with the flat numbers of its summary."""
        rows = [{k: v for k, v in summary.items() if not isinstance(v, (dict, list))} for summary in summaries]
        return {self.name: pd.DataFrame(rows)}

    def draw(self, summaries: list[dict], tables: dict[str, pd.DataFrame], figures_dir: Path, settings) -> None:
        """The measure's figures (`outputs.figures`), saved with `synthrisk.figures.save` under `figures_dir`
        (the audit renders them in memory: `synthrisk.figures.rendered`). Default: none."""

    def evidence(self, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame | None:
        """Rows of EVIDENCE_COLUMNS for the per-risk verdict (risk measures only), from the measure's
        `tables` (a mapping of name to frame: its `tabulate` output, or the workflow's table folder,
        `synthrisk.io.TableFolder`)."""
        return None

    # --- the steward's audit: what the strongest attack of a risk says -----------------------------
    def explain(self, row: dict) -> str:
        """One sentence on what the attack's number in the verdict row `row` says (the audit adds
        whether it beats its reference and matters under the policy)."""
        from .wording import generic

        return generic(row)

    def names_members(self, generator: GeneratorInHand | None) -> bool:
        """Whether the measure names members with a controlled false-discovery rate (its Settings'
        `fdr`) on an input with this generator in hand (None: none). The audit gives each that does
        the policy's naming rate; one that refits the generator is heard only once the exposure
        evidence has named someone (`synthrisk.release_audit.named.gated`). Default: no."""
        return False

    #: for a measure that is not a risk: (the metric's label, its key in the run's summary), the
    #: number `synthrisk.measure` returns as the Measurement's value; None: no single number
    utility_metric: ClassVar[tuple[str, str] | None] = None

    def utility(self, tables: Mapping[str, pd.DataFrame]) -> dict | None:
        """For a measure that is not a risk: what the audit shows next to the risks, from the
        measure's tables (`tabulate`'s output): a dict with at least `meaning` (one sentence), or
        None when it has nothing to show. Default: None."""
        return None

    def reported(self, summaries: list[dict]) -> dict | None:
        """The measure's own numbers as its field reads them, for the audit's page and JSON:
        `{"caption": str, "rows": [dict, ...], "notes": [str, ...]}` from its ok runs' summaries, or
        None (default)."""
        return None
