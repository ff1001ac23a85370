"""MAMA-MIA against the audit's black-box membership evidence on MST releases (issue #44, item 2).

Per split, members, holdout and other records are disjoint draws of one population
(`synthrisk.study.calibration.Population`), and two releases of MST at one ε (synthrisk's MST,
public domain, noise from a seed so that the study reruns: the releases are marked not private):
- `mst_other`: fitted on the other records, so it never saw the members (the null);
- `mst_members`: fitted on the members.
Each release is read by `mama_mia` (the generator in hand: MST at that ε), `exposure` and `dcr`,
through `synthrisk.measure` with the audit's defaults. Real data (Adult) and simulated.

The size of the study is fixed here before any run (`DATASETS`, `EPSILONS`, `SPLITS`, `N`, `SEED`)
and never grown; each finished split is appended to `benchmarks/calibration/mama_mia_mst.csv.gz` (a
rerun skips the splits it holds) and the table (`mama_mia_mst.md` beside it) is written from that
file alone; `--summarise` only rewrites it.

    PYTHONPATH=. .venv/bin/python benchmarks/mama_mia_mst.py
    PYTHONPATH=. .venv/bin/python benchmarks/mama_mia_mst.py --summarise
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RUNS = HERE / "calibration" / "mama_mia_mst.csv.gz"
TABLE = HERE / "calibration" / "mama_mia_mst.md"
#: fixed before running
DATASETS, EPSILONS, SPLITS, N, SEED = ("adult", "simulation"), (10.0, 1000.0), 10, 1000, 5100
LEVEL = 0.05
MEASURES = ("mama_mia", "exposure", "dcr")


def spec(epsilon: float, split: int) -> dict:
    return {"backend": "mst", "params": {"epsilon": epsilon, "noise_seed": SEED + split}}


def run_split(dataset: str, epsilon: float, split: int, commit: str) -> list[dict]:
    from synthrisk.generators.run import run_generator
    from synthrisk.study.calibration import Population

    seed = int(np.random.SeedSequence([SEED, split, len(dataset), int(epsilon)]).generate_state(1)[0])
    population = Population.of(dataset, N * 3, seed=seed)
    schema = population.schema
    members, holdout, other = population.take(N), population.take(N), population.take(N)
    rows = []
    for kind, source in (("mst_other", other), ("mst_members", members)):
        start = time.perf_counter()
        release, status = run_generator("mst", spec(epsilon, split), source, schema, n=N, seed=seed)
        if status["status"] != "ok":
            raise RuntimeError(f"mst: {status['error']}")
        row = {"dataset": dataset, "epsilon": epsilon, "split": split, "release": kind,
               "fit_seconds": round(time.perf_counter() - start, 1), "commit": commit}
        rows.append({**row, **read_release(members, release, holdout, schema, spec(epsilon, split))})
    return rows


def read_release(members: pd.DataFrame, release: pd.DataFrame, holdout: pd.DataFrame, schema,
                 generator: dict) -> dict:
    """Each of MEASURES on one release, through `synthrisk.measure` with the audit's defaults (MAMA-MIA
    with `generator` in hand): its value, p-value, members named and seconds, as a runs file's columns.
    Shared by the MAMA-MIA benchmarks (`mama_mia_privbayes.py`)."""
    import synthrisk

    read = {}
    for name in MEASURES:
        extra = {"generator": generator} if name == "mama_mia" else {}
        start = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            found = synthrisk.measure(name, members, release, holdout, schema=schema, **extra)
        read.update({f"{name}_value": found.value, f"{name}_p": found.p_value,
                     f"{name}_named": int(found.details.get("n_identified", 0)),
                     f"{name}_seconds": round(time.perf_counter() - start, 1)})
    return read


def measure_cells(part: pd.DataFrame) -> dict:
    """Per measure, over a cell's splits: how often it fires on its own (p ≤ LEVEL), with its 95 %
    Clopper–Pearson interval, and its median value."""
    from synthrisk.stats.proportions import clopper_pearson

    m, cells = part["split"].nunique(), {}
    for name in MEASURES:
        k = int((part[f"{name}_p"] <= LEVEL).sum())
        low, high = clopper_pearson(k, m, 0.95)
        cells[f"{name} fires"] = f"{k} ({100 * k / m:.0f} %, {100 * low:.0f}–{100 * high:.0f})"
        cells[f"{name} value (median)"] = f"{part[f'{name}_value'].median():.3f}"
    return cells


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (dataset, epsilon, release), part in runs.groupby(["dataset", "epsilon", "release"], sort=True):
        row = {"dataset": dataset, "ε": f"{epsilon:g}", "release": release,
               "splits": f"{part['split'].nunique()} of {SPLITS}", **measure_cells(part)}
        row["anyone named"] = int(((part["mama_mia_named"] > 0) | (part["exposure_named"] > 0)).sum())
        rows.append(row)
    return pd.DataFrame(rows)


#: what the tables of the MAMA-MIA benchmarks read
PREAMBLE = ("Per cell: splits run of those planned; each rate with its 95 % Clopper–Pearson interval. Fires: "
            f"p ≤ {LEVEL} on its own. Values: MAMA-MIA's and exposure's AUC, DCR's share closer to members.")


def markdown(table: pd.DataFrame) -> str:
    return PREAMBLE + "\n\n" + table.to_markdown(index=False) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args(argv)
    if not args.summarise:
        from resumable import commit, run_jobs

        here = commit(HERE)
        jobs = [{"dataset": dataset, "epsilon": epsilon, "split": split}
                for split in range(SPLITS) for epsilon in EPSILONS for dataset in DATASETS]
        run_jobs(jobs, lambda job: run_split(job["dataset"], job["epsilon"], job["split"], here), RUNS)
    done = pd.read_csv(RUNS)
    text = markdown(summarise(done))
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
