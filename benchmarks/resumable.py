"""The job loop of a study whose size is fixed before it runs (the generator-in-hand studies): each
worker takes every `workers`-th job, skips those its runs file already holds, and appends each
finished job's rows to the file, rewritten into a temporary file and renamed over it, so that a
worker killed at any moment leaves the file as it was and a rerun resumes."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd


def commit(where: Path) -> str:
    """The short hash of the checkout the runs are made from (each row names it)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=where).stdout.strip()


def run_jobs(jobs: list[dict], run: Callable[[dict], list[dict]], path: Path, worker: int = 0,
             workers: int = 1) -> int:
    """Run this worker's jobs (dicts of key columns) that `path` does not hold yet; `run(job)` gives a
    job's rows. Returns how many it ran."""
    keys = list(jobs[0]) if jobs else []
    mine = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=keys)
    held = set(mine[keys].itertuples(index=False, name=None)) if len(mine) else set()
    ran = 0
    for index, job in enumerate(jobs):
        if index % workers != worker or tuple(job.values()) in held:
            continue
        start = time.perf_counter()
        rows = pd.DataFrame(run(job))
        mine = pd.concat([mine, rows], ignore_index=True) if len(mine) else rows
        temporary = path.with_suffix(".tmp.gz")
        mine.to_csv(temporary, index=False)
        temporary.replace(path)
        ran += 1
        print(" ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in job.values())
              + f": {time.perf_counter() - start:.0f} s", flush=True)
    return ran
