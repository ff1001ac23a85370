"""Support for the thin `script:` entry points: logging to the rule's log file, thread limits."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from contextlib import contextmanager

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
