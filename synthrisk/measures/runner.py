"""Running the measures on one synthetic dataset, with the failure path every measure shares:
an upstream generator failure or an exception gives a `failed` summary with the error, a measure
that does not apply a `skipped` one with the reason; either way an empty per-record table is
written and the other measures go on. The workflow's measure job (one per dataset x generator x
seed, workflow/rules/measures.smk) and `synthrisk audit` both run their measures through here."""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..io import read_json, read_table, write_json, write_table
from .base import Measure, MeasureInput, NotApplicable


def upstream_failure(status_path) -> str | None:
    """The error of a failed generator run, or None when its synthetic data can be used."""
    status = read_json(status_path)
    if status.get("status") == "ok":
        return None
    return f"generator {status.get('generator')} failed: {status.get('error')}"


def write_empty_run(key: dict, status: str, reason: str, records_path, summary_path, record_columns) -> None:
    print(f"{status}: {reason}")
    write_table(pd.DataFrame({c: [] for c in record_columns}), records_path)
    write_json({**key, "status": status, "error": reason}, summary_path)


def load_input(paths: dict, seed: int) -> MeasureInput:
    """The frames of one run from the split files, the synthetic data and the schema."""
    import pyarrow.parquet as pq

    from ..data import load_schema

    return MeasureInput(
        members=read_table(paths["members"]), non_members=read_table(paths["non_members"]),
        aux=read_table(paths["aux"]), synthetic=read_table(paths["synthetic"]),
        schema=load_schema(paths["schema"]),
        # The members were drawn from the rows of real.parquet (synthrisk.data.split): that table
        # is the population of El Emam et al.'s sampling fraction t = n_train / N.
        population_size=pq.read_metadata(paths["real"]).num_rows, seed=seed)


def run_on_input(measure: Measure, settings, load: Callable[[], MeasureInput], key: dict, unit: str | None,
                 records_path, summary_path) -> str:
    """Run `measure` on the input `load()` gives (read inside the failure path, so unreadable
    input fails this run only) and write its records and summary; returns the status. The
    workflow loads the split files; `synthrisk audit` passes the frames it already holds."""
    try:
        result = measure.run(load(), settings, unit)
    except NotApplicable as exc:
        write_empty_run(key, "skipped", str(exc), records_path, summary_path, measure.record_columns)
        return "skipped"
    except Exception as exc:  # noqa: BLE001 - one failing measure never stops the others
        traceback.print_exc()
        write_empty_run(key, "failed", f"{type(exc).__name__}: {exc}", records_path, summary_path,
                        measure.record_columns)
        return "failed"
    line = measure.log_line(result)
    if line:
        print(line)
    write_table(result.records, records_path)
    write_json({**key, **result.summary, "status": "ok", "error": None}, summary_path)
    return "ok"


@dataclass(frozen=True)
class UnitRun:
    """One job of a measure on one synthetic dataset: the measure and its settings, its unit (None
    for a measure without units) and where its per-record table and summary JSON go."""

    measure: Measure
    settings: Any
    unit: str | None
    records_path: Path
    summary_path: Path

    @property
    def label(self) -> str:
        return f"{self.measure.name}{f' {self.unit}' if self.unit else ''}"

    def key(self, base: dict) -> dict:
        """The identifying keys of this run's summary: the synthetic dataset's, plus the unit's."""
        return {**base, **(self.measure.unit_key(self.unit) if self.unit else {})}


@dataclass(frozen=True)
class Outcome:
    run: UnitRun
    status: str
    reason: str | None
    seconds: float

    @property
    def measure_name(self) -> str:
        return self.run.measure.name

    @property
    def unit(self) -> str | None:
        return self.run.unit


def plan_runs(measures: dict, schema, stem: Callable[[Measure], Path]) -> list[UnitRun]:
    """Every unit of every measure ({name: (measure, settings)}) on one synthetic dataset, in the
    measures' order; `stem(measure)` is the path stem of a measure's outputs (a unit's files are
    `stem/unit.*`, a measure without units writes `stem.*`)."""
    runs = []
    for measure, settings in measures.values():
        base = Path(stem(measure))
        for unit in (measure.units(schema, settings) if measure.has_units else [None]):
            path = base / unit if unit else base
            runs.append(UnitRun(measure, settings, unit, path.with_suffix(".parquet"), path.with_suffix(".json")))
    return runs


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

    from ..io import read_json

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
            status = run_on_input(run.measure, run.settings, shared_load, run.key(key), run.unit, run.records_path,
                                  run.summary_path)
        seconds = time.perf_counter() - start
        reason = read_json(run.summary_path).get("error")
        announce(f"[{index}/{len(runs)}] {run.label}: {status}{f' ({reason})' if reason else ''}, {seconds:.1f} s")
        outcomes.append(Outcome(run, status, reason, seconds))
    return outcomes


def run_synthetic_dataset(runs: list[UnitRun], paths: dict, key: dict, log_of=None,
                          announce: Callable[[str], None] = print) -> list[Outcome]:
    """The workflow's measure job: every run of one synthetic dataset (`paths`: the split files,
    real.parquet, the synthetic data, its status JSON, the schema), or, when its generator failed,
    a `failed` summary naming that failure for each."""
    failure = upstream_failure(paths["status"])
    if failure:
        announce(f"every measure failed: {failure}")
        start_logs(runs, log_of)
        for run in runs:
            with _printing_to_log(run, log_of):
                write_empty_run(run.key(key), "failed", failure, run.records_path, run.summary_path,
                                run.measure.record_columns)
        return [Outcome(run, "failed", failure, 0.0) for run in runs]
    return run_units(runs, lambda: load_input(paths, key["seed"]), key, announce, log_of)
