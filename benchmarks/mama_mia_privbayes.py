"""MAMA-MIA against the audit's black-box membership evidence on synthcity PrivBayes releases
(issue #44, item 2), as `benchmarks/mama_mia_mst.py` does on MST.

Per split, members, holdout and other records are disjoint draws of Adult (1,000 each), and two
releases of synthcity 0.2.12's PrivBayes at ε = 10, each fitted in synthcity's environment
(`synthrisk.generators.run.fit_in_environment`, the workflow's generate job; noise from a seed so that the study reruns: the releases are marked not
private):
- `privbayes_other`: fitted on the other records, so it never saw the members (the null);
- `privbayes_members`: fitted on the members.
Each release is read by `mama_mia` (the generator in hand: synthcity's PrivBayes at that ε, its network
searches in synthcity's environment), `exposure` and `dcr`, through `synthrisk.measure` with the audit's
defaults.

Real data only: synthcity's PrivBayes cannot fit the simulator. It takes every distinct value of a
column as a level, and the conditional table of a continuous child with three continuous parents at
1,000 records asks for 462 GiB (numpy's _ArrayMemoryError, measured here). Adult's numeric columns
have at most about a hundred values each.

The size of the study is fixed here before any run (`EPSILONS`, `SPLITS`, `N`, `SEED`) and never
grown; each finished split is appended to `benchmarks/calibration/mama_mia_privbayes.csv.gz` (a rerun
skips the splits it holds) and the table (`mama_mia_privbayes.md` beside it) is written from that file
alone; `--summarise` only rewrites it. Needs `.venv-synthcity` (a workflow run with a synthcity
generator builds it).

    PYTHONPATH=. .venv/bin/python benchmarks/mama_mia_privbayes.py
    PYTHONPATH=. .venv/bin/python benchmarks/mama_mia_privbayes.py --summarise
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from mama_mia_mst import PREAMBLE, measure_cells, read_release

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = HERE / "calibration" / "mama_mia_privbayes.csv.gz"
TABLE = HERE / "calibration" / "mama_mia_privbayes.md"
#: fixed before running. ε = 1 was planned too (5 splits each) and dropped before any result: there
#: synthcity's PrivBayes sizes its networks with K = 6 parents, and its conditional tables took 6.4 GB
#: and 97 s in one fit here and were killed for memory in the study's first job.
DATASET, EPSILONS, SPLITS, N, SEED = "adult", (10.0,), 10, 1000, 5200


def spec(epsilon: float, split: int | None = None) -> dict:
    """The generator's entry; with `split`, its noise seeded for the study's releases."""
    params = {"epsilon": epsilon, **({} if split is None else {"noise_seed": SEED + split})}
    return {"backend": "synthcity", "plugin": "privbayes", "params": params}


def run_split(epsilon: float, split: int, commit: str, python: Path) -> list[dict]:
    from synthrisk.generators.run import fit_in_environment
    from synthrisk.study.calibration import Population

    seed = int(np.random.SeedSequence([SEED, split, int(epsilon)]).generate_state(1)[0])
    population = Population.of(DATASET, N * 3, seed=seed)
    schema = population.schema
    members, holdout, other = population.take(N), population.take(N), population.take(N)
    rows = []
    for kind, source in (("privbayes_other", other), ("privbayes_members", members)):
        start = time.perf_counter()
        release, status = fit_in_environment(python, "privbayes", spec(epsilon, split), source, schema, N, seed,
                                             hash_seed=seed)  # a fixed hash seed: the study reruns
        if status["status"] != "ok":
            raise RuntimeError(f"privbayes: {status.get('error')}")
        row = {"dataset": DATASET, "epsilon": epsilon, "split": split, "release": kind,
               "fit_seconds": round(time.perf_counter() - start, 1), "commit": commit}
        rows.append({**row, **read_release(members, release, holdout, schema, spec(epsilon))})
    return rows


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (epsilon, release), part in runs.groupby(["epsilon", "release"], sort=True):
        row = {"dataset": DATASET, "ε": f"{epsilon:g}", "release": release,
               "splits": f"{part['split'].nunique()} of {SPLITS}", **measure_cells(part)}
        row["members named (median)"] = f"{part['mama_mia_named'].median():g} / {part['exposure_named'].median():g}"
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    return (PREAMBLE + " Members named: MAMA-MIA / exposure, at the audit's false-discovery rate.\n\n"
            + table.to_markdown(index=False) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args(argv)
    if not args.summarise:
        from resumable import commit, run_jobs

        from synthrisk.generators.environments import built_python

        python = built_python(spec(EPSILONS[0]), ROOT)
        if python is None:
            raise SystemExit(f"{ROOT}: synthcity's environment is not built (module doc)")
        here = commit(HERE)
        jobs = [{"epsilon": epsilon, "split": split} for split in range(SPLITS) for epsilon in EPSILONS]
        run_jobs(jobs, lambda job: run_split(job["epsilon"], job["split"], here, python), RUNS)
    done = pd.read_csv(RUNS)
    text = markdown(summarise(done))
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
