"""Run one generator job and describe it in a status record, never letting a failure escape.

The workflow promises that one failing generator leaves everyone else's results intact: the job
always writes its parquet (empty on failure, with the schema's columns) and a status JSON that
downstream rules read.
"""

from __future__ import annotations

import signal
import time
import traceback
from contextlib import contextmanager

import pandas as pd

from ..data.schema import DatasetSchema
from ..versions import library_versions
from .base import make_generator

CORE_LIBRARIES = ("synthrisk", "numpy", "pandas", "scikit-learn")


class GeneratorTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float | None):
    """Raise GeneratorTimeout after `seconds` of wall time (SIGALRM: main thread, Unix).

    The alarm is delivered when control returns to Python, i.e. between the training steps of
    torch or scikit-learn; no library here holds the interpreter for long in one call.
    """
    if not seconds:
        yield
        return

    def _raise(signum, frame):
        raise GeneratorTimeout(f"exceeded the time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def empty_like_schema(schema: DatasetSchema, like: pd.DataFrame) -> pd.DataFrame:
    return like.iloc[:0][list(schema.columns)].copy()


def run_generator(
    name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int, seed: int,
) -> tuple[pd.DataFrame, dict]:
    """Fit on `train` and sample `n` rows; returns (synthetic, status). Never raises on model errors."""
    status = {
        "generator": name, "backend": spec.get("backend"), "dataset": schema.name, "seed": seed,
        "n_train": len(train), "n_requested": n, "status": "failed", "error": None,
        "fit_seconds": None, "sample_seconds": None, "timeout_seconds": spec.get("timeout"),
    }
    libraries = CORE_LIBRARIES
    synthetic = empty_like_schema(schema, train)
    try:
        generator = make_generator(spec, seed=seed, name=name)
        libraries = CORE_LIBRARIES + tuple(generator.libraries)
        status["privacy"] = generator.privacy()
        with time_limit(spec.get("timeout")):
            start = time.perf_counter()
            generator.fit(train, schema)
            status["fit_seconds"] = round(time.perf_counter() - start, 3)
            start = time.perf_counter()
            out = generator.sample(n, seed)
            status["sample_seconds"] = round(time.perf_counter() - start, 3)
        synthetic = schema.conform(out, what=f"synthetic data of generator '{name}'")
        status.update(status="ok", n_rows=len(synthetic))
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        status["error"] = f"{type(exc).__name__}: {exc}"
        status["traceback"] = traceback.format_exc(limit=20)
    status["versions"] = library_versions(libraries)
    return synthetic, status


def generate_files(name: str, spec: dict, train_path, schema_path, n: int, seed: int,
                   synthetic_path, status_path) -> dict:
    """One generate job between files: the data-flow contract's synthetic parquet and status JSON.
    Shared by the main environment's rule and the isolated (synthcity) environment's entry point."""
    from ..data import load_schema
    from ..data.split import ROW_ID
    from ..io import read_table, write_json, write_table

    schema = load_schema(schema_path)
    train = read_table(train_path).drop(columns=ROW_ID)
    synthetic, status = run_generator(name, spec, train, schema, n=n, seed=seed)
    print(status.get("traceback") or f"{status['status']}: {len(synthetic)} rows")
    write_table(synthetic, synthetic_path)
    write_json(status, status_path)
    return status
