"""Support for the thin `script:` entry points: logging to the rule's log file, thread limits, and
the files the workflow writes of a measure's runs (`write_summary`)."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@contextmanager
def logged(smk):
    """Send everything the job prints (ours and the libraries') to `log[0]`, and keep the job to
    its `threads` so that parallel jobs do not oversubscribe the cores."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(smk.threads)
    with open(smk.log[0], "w") as log:
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        handler = logging.StreamHandler(log)
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(logging.INFO)
        logging.captureWarnings(True)
        warnings.simplefilter("default")
        try:
            yield
        except Exception:
            import traceback

            traceback.print_exc(file=log)
            raise
        finally:
            logging.getLogger().removeHandler(handler)
            sys.stdout, sys.stderr = old_out, old_err


def write_summary(measure, paths: list[str], tables_dir: Path, figures_dir: Path, settings) -> None:
    """The workflow's summary of a measure: its runs' JSON `paths` tabulated (`Measure.tabulate`),
    each table written in its formats (`Measure.outputs`) under `tables_dir`, and its figures
    drawn under `figures_dir`. The measure says what its tables and figures are; this says where
    they go (the audit keeps them in memory)."""
    from ..io import read_json, write_table_formats

    summaries = [read_json(path) for path in paths]
    tables = measure.tabulate(summaries, settings)
    for name, frame in tables.items():
        write_table_formats(frame, Path(tables_dir) / name,
                            formats=measure.outputs.table_formats(name))
    measure.draw(summaries, tables, Path(figures_dir), settings)
