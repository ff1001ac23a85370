"""Running the measures on one synthetic dataset, with the failure path every measure shares:
an upstream generator failure or an exception gives a `failed` summary with the error, a measure
that does not apply a `skipped` one with the reason; either way the run has an empty per-record
table and the other measures go on. The workflow's measure job (one per dataset x generator x
seed, workflow/rules/measures.smk) writes each run's summary and records; `synthrisk audit` keeps
them in memory (`Outcome`). Both run their measures through here."""

from __future__ import annotations

import dataclasses
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import read_json, read_table, write_json, write_table
from .base import GeneratorInHand, Measure, MeasureInput, MeasureResult, NotApplicable, no_outcomes


def upstream_failure(status_path) -> str | None:
    """The error of a failed generator run, or None when its synthetic data can be used."""
    status = read_json(status_path)
    if status.get("status") == "ok":
        return None
    return f"generator {status.get('generator')} failed: {status.get('error')}"


def empty_run(key: dict, status: str, reason: str, record_columns) -> MeasureResult:
    """The summary, the (empty) per-record table and no outcomes of a run that failed or did not apply."""
    print(f"{status}: {reason}")
    return MeasureResult({**key, "status": status, "error": reason}, pd.DataFrame({c: [] for c in record_columns}))


def generator_in_workflow(name: str, spec: dict | None, repo: str | Path) -> GeneratorInHand | None:
    """The generator that made a workflow's synthetic dataset, for the measures that refit it or run
    its code (shadow models, MAMA-MIA, the ensemble): its config entry; for one that runs in an
    environment of its own, with that environment's interpreter (`repo`: where the workflow builds
    it), or None while it is not built. Measures that refit in this process skip such a generator
    with the reason."""
    from ..generators.environments import built_python, requirements_file

    if not spec:
        return None
    if requirements_file(spec, repo) is None:
        return GeneratorInHand(name, dict(spec))
    python = built_python(spec, repo)
    return None if python is None else GeneratorInHand(name, dict(spec), python=str(python))


def load_input(paths: dict, seed: int, generator: GeneratorInHand | None = None) -> MeasureInput:
    """The frames of one run from the split files, the synthetic data and the schema; `generator`:
    the generator that made the synthetic data (`generator_in_workflow`)."""
    import pyarrow.parquet as pq

    from ..data import load_schema

    return MeasureInput(
        members=read_table(paths["members"]), holdout=read_table(paths["holdout"]),
        aux=read_table(paths["aux"]), synthetic=read_table(paths["synthetic"]),
        schema=load_schema(paths["schema"]),
        # The members were drawn from the rows of real.parquet (synthrisk.data.split): that table
        # is the population of El Emam et al.'s sampling fraction t = n_train / N.
        population_size=pq.read_metadata(paths["real"]).num_rows, seed=seed, generator=generator)


def compute_unit(measure: Measure, settings, load: Callable[[], MeasureInput], key: dict,
                 unit: str | None) -> MeasureResult:
    """Run `measure` on the input `load()` gives (read inside the failure path, so unreadable input
    fails this run only): its result, in memory, the summary with the run's `key`, `status` and
    `error` beside the measure's own keys. The workflow loads the split files; `synthrisk audit`
    passes the frames it already holds."""
    try:
        result = measure.run(load(), settings, unit)
    except NotApplicable as exc:
        return empty_run(key, "skipped", str(exc), measure.record_columns)
    except Exception as exc:  # noqa: BLE001 - one failing measure never stops the others
        traceback.print_exc()
        return empty_run(key, "failed", f"{type(exc).__name__}: {exc}", measure.record_columns)
    line = measure.log_line(result)
    if line:
        print(line)
    return dataclasses.replace(result, summary={**key, **result.summary, "status": "ok", "error": None})


@dataclass(frozen=True)
class UnitRun:
    """One job of a measure on one synthetic dataset: the measure and its settings, its unit (None
    for a measure without units) and, in the workflow, where its per-record table and summary JSON
    are written (None: the run stays in memory, as in `synthrisk.audit`)."""

    measure: Measure
    settings: Any
    unit: str | None
    records_path: Path | None = None
    summary_path: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.measure.name}{f' {self.unit}' if self.unit else ''}"

    def key(self, base: dict) -> dict:
        """The identifying keys of this run's summary: the synthetic dataset's, plus the unit's."""
        return {**base, **(self.measure.unit_key(self.unit) if self.unit else {})}


@dataclass(frozen=True)
class Outcome:
    """A finished run: its status (ok / skipped / failed) with the reason, its seconds, and what it
    found: the summary (as its JSON holds it), the per-record table and what its attacks did to
    each member (`OUTCOME_COLUMNS`)."""

    run: UnitRun
    status: str
    reason: str | None
    seconds: float
    summary: dict = field(default_factory=dict, repr=False)
    records: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    outcomes: pd.DataFrame = field(default_factory=no_outcomes, repr=False)

    @property
    def measure_name(self) -> str:
        return self.run.measure.name

    @property
    def unit(self) -> str | None:
        return self.run.unit


def plan_runs(measures: dict, schema, stem: Callable[[Measure], Path] | None = None) -> list[UnitRun]:
    """Every unit of every measure ({name: (measure, settings)}) on one synthetic dataset, in the
    measures' order; `stem(measure)` is the path stem of a measure's outputs (a unit's files are
    `stem/unit.*`, a measure without units writes `stem.*`; None: the runs stay in memory)."""
    runs = []
    for measure, settings in measures.values():
        for unit in (measure.units(schema, settings) if measure.has_units else [None]):
            if stem is None:
                runs.append(UnitRun(measure, settings, unit))
                continue
            path = Path(stem(measure)) / unit if unit else Path(stem(measure))
            runs.append(UnitRun(measure, settings, unit, path.with_suffix(".parquet"), path.with_suffix(".json")))
    return runs


def write_run(run: UnitRun, summary: dict, records: pd.DataFrame) -> None:
    """A run's per-record table and summary JSON where the workflow reads them (nothing for a run
    kept in memory)."""
    if run.records_path is not None:
        write_table(records, run.records_path)
        write_json(summary, run.summary_path)


def start_logs(runs: list[UnitRun], log_of: Callable[[UnitRun], Path] | None) -> None:
    """Empty each run's log file once: the units of a measure append to one log."""
    for path in dict.fromkeys(log_of(run) for run in runs) if log_of else ():
        Path(path).write_text("")


def _printing_to_log(run: UnitRun, log_of: Callable[[UnitRun], Path] | None):
    return printing_to(log_of(run)) if log_of else nullcontext()


@contextmanager
def printing_to(path):
    """Send what one measure prints (and its tracebacks) to its own log file, after what it printed
    for its earlier units."""
    with open(path, "a") as log:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        try:
            yield
        finally:
            sys.stdout, sys.stderr = old_out, old_err


def run_units(runs: list[UnitRun], load: Callable[[], MeasureInput], key: dict,
              announce: Callable[[str], None] = print, log_of: Callable[[UnitRun], Path] | None = None) -> list[Outcome]:
    """Every run of `runs` on one input, one after the other in this process (a process per unit
    spent more time importing pandas and scikit-learn than measuring), each through the shared
    failure path. The input is loaded inside that path until it loads once, then shared. Each run
    keeps to the threads its measure declares (OpenMP libraries otherwise take every core);
    `log_of(run)` names a file for what it prints; `announce` gets a line as each run starts and ends."""
    from threadpoolctl import threadpool_limits

    loaded: list[MeasureInput] = []

    def shared_load() -> MeasureInput:
        if not loaded:
            loaded.append(load())
        return loaded[0]

    start_logs(runs, log_of)
    outcomes = []
    for index, run in enumerate(runs, 1):
        announce(f"[{index}/{len(runs)}] {run.label} ...")
        start = time.perf_counter()
        with _printing_to_log(run, log_of), threadpool_limits(limits=run.measure.threads):
            result = compute_unit(run.measure, run.settings, shared_load, run.key(key), run.unit)
            write_run(run, result.summary, result.records)
        seconds = time.perf_counter() - start
        status, reason = result.summary["status"], result.summary.get("error")
        announce(f"[{index}/{len(runs)}] {run.label}: {status}{f' ({reason})' if reason else ''}, {seconds:.1f} s")
        outcomes.append(Outcome(run, status, reason, seconds, result.summary, result.records, result.outcomes))
    return outcomes


def run_synthetic_dataset(runs: list[UnitRun], paths: dict, key: dict, log_of=None,
                          announce: Callable[[str], None] = print,
                          generator: GeneratorInHand | None = None) -> list[Outcome]:
    """The workflow's measure job: every run of one synthetic dataset (`paths`: the split files,
    real.parquet, the synthetic data, its status JSON, the schema), or, when its generator failed,
    a `failed` summary naming that failure for each. `generator`: the one that made the data."""
    failure = upstream_failure(paths["status"])
    if failure:
        announce(f"every measure failed: {failure}")
        start_logs(runs, log_of)
        outcomes = []
        for run in runs:
            with _printing_to_log(run, log_of):
                result = empty_run(run.key(key), "failed", failure, run.measure.record_columns)
                write_run(run, result.summary, result.records)
            outcomes.append(Outcome(run, "failed", failure, 0.0, result.summary, result.records))
        return outcomes
    return run_units(runs, lambda: load_input(paths, key["seed"], generator), key, announce, log_of)
