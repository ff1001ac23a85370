"""Running one measure on one synthetic dataset, with the failure path every measure shares:
an upstream generator failure or an exception gives a `failed` summary with the error, a measure
that does not apply a `skipped` one with the reason; either way an empty per-record table is
written and the workflow goes on."""

from __future__ import annotations

import traceback
from collections.abc import Callable

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


def run_measure(measure: Measure, settings, paths: dict, key: dict, unit: str | None,
                records_path, summary_path) -> str:
    """Run `measure` for the run `key` ({dataset, generator, seed, ...}); returns the status."""
    failure = upstream_failure(paths["status"])
    if failure:
        write_empty_run(key, "failed", failure, records_path, summary_path, measure.record_columns)
        return "failed"
    return run_on_input(measure, settings, lambda: load_input(paths, key["seed"]), key, unit, records_path,
                        summary_path)


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
