"""The shadow-model attack with the generator in hand (`synthrisk audit --generator`), checked the way
it is used (issue #44): how often its release-level test fires on releases that never saw their
members (the null) and on releases fitted on them, beside the audit's black-box membership evidence
on the same releases (and how often that names anyone).

Per split, members, holdout and other records are disjoint draws of one population
(`synthrisk.study.calibration.Population`, as the shipped calibration draws them), and two releases
of the same generator, `cart` (synthpop's CART, the generator in hand):
- `cart_other`: fitted on the other records, so it never saw the members (the null: the test's
  false-positive rate, and any member named is a false discovery);
- `cart_members`: fitted on the members, the release the audit is for.
Each is attacked by `synthrisk.shadow_mia.release.attack_release` at the audit's defaults (80
targets) with `FITS` refits of cart, and by the per-person exposure evidence and DCR through
`synthrisk.measure` with the audit's defaults. Real data (Adult) and simulated (the simulator).

The size of the study is fixed here before any run (`DATASETS`, `SPLITS`, `N`, `FITS`, `SEED`) and
never grown. Each worker appends its splits to its own runs file under
`benchmarks/calibration/shadow_models/` as they finish (a rerun skips the splits they hold); the
table (`summary.md` beside them) is written from the runs files alone; `--summarise` only rewrites it.

    PYTHONPATH=. .venv/bin/python benchmarks/shadow_models_level.py --worker 0 --workers 2
    PYTHONPATH=. .venv/bin/python benchmarks/shadow_models_level.py --summarise
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
FOLDER = HERE / "calibration" / "shadow_models"
TABLE = FOLDER / "summary.md"
#: fixed before running: datasets, splits per dataset, members per split, refits per release, seed
DATASETS, SPLITS, N, FITS, SEED = ("adult", "simulation"), 25, 500, 200, 3100
RELEASES = ("cart_other", "cart_members")
LEVEL = 0.05
CART = {"backend": "cart"}


def run_split(dataset: str, split: int, commit: str) -> list[dict]:
    import synthrisk
    from synthrisk.generators.run import run_generator
    from synthrisk.shadow_mia.release import attack_release
    from synthrisk.study.calibration import Population

    seed = int(np.random.SeedSequence([SEED, split, len(dataset)]).generate_state(1)[0])
    population = Population.of(dataset, N * 3, seed=seed)
    schema = population.schema
    members, holdout, other = population.take(N), population.take(N), population.take(N)
    rows = []
    for kind, source in (("cart_other", other), ("cart_members", members)):
        release, status = run_generator("cart", CART, source.drop(columns="row_id", errors="ignore"), schema, n=N,
                                        seed=seed)
        if status["status"] != "ok":
            raise RuntimeError(f"cart: {status['error']}")
        start = time.perf_counter()
        shadow = attack_release(members, release, holdout, schema=schema, spec=CART, seed=split,
                                shadow_datasets=FITS // 2, eval_datasets=FITS - FITS // 2)
        seconds = time.perf_counter() - start
        with contextlib.redirect_stderr(io.StringIO()):
            exposure = synthrisk.measure("exposure", members, release, holdout, schema=schema)
            dcr = synthrisk.measure("dcr", members, release, holdout, schema=schema)
        summary = shadow.to_json()
        rows.append({"dataset": dataset, "split": split, "release": kind, "shadow_auc": shadow.auc,
                     "shadow_p": shadow.auc_p_value, "targets_above_chance": summary["targets_above_chance"],
                     "median_target_auc": summary["median_target_auc"], "fits_failed": shadow.fits_failed,
                     "shadow_seconds": round(seconds, 1), "exposure_auc": exposure.value,
                     "exposure_p": exposure.p_value, "exposure_named": int(exposure.details["n_identified"]),
                     "dcr_value": dcr.value, "dcr_p": dcr.p_value, "commit": commit})
    return rows


def runs_file(worker: int) -> Path:
    return FOLDER / f"runs.w{worker}.csv.gz"


def read_runs() -> pd.DataFrame:
    files = sorted(FOLDER.glob("runs.w*.csv.gz"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def clopper_pearson(k: int, m: int) -> tuple[float, float]:
    from synthrisk.stats.proportions import clopper_pearson as interval

    return interval(k, m, 0.95)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (dataset, release), part in runs.groupby(["dataset", "release"], sort=True):
        m = part["split"].nunique()
        row = {"dataset": dataset, "release": release, "splits": f"{m} of {SPLITS}"}
        for label, fired in (("shadow models fire", part["shadow_p"] <= LEVEL),
                             ("exposure fires", part["exposure_p"] <= LEVEL),
                             ("exposure names anyone", part["exposure_named"] > 0),
                             ("DCR fires", part["dcr_p"] <= LEVEL)):
            k = int(fired.sum())
            low, high = clopper_pearson(k, m)
            row[label] = f"{k} ({100 * k / m:.0f} %, {100 * low:.0f}–{100 * high:.0f})"
        row["shadow AUC (median)"] = f"{part['shadow_auc'].median():.3f}"
        row["vulnerable targets of 80 (median)"] = f"{part['targets_above_chance'].median():.0f}"
        row["seconds per release (median)"] = f"{part['shadow_seconds'].median():.0f}"
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    return ("Per cell: splits run of those planned; each rate with its 95 % Clopper–Pearson interval. "
            f"Fires: p ≤ {LEVEL} on its own (not the audit's Holm family).\n\n"
            + table.to_markdown(index=False) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args(argv)
    FOLDER.mkdir(parents=True, exist_ok=True)
    if not args.summarise:
        from resumable import commit, run_jobs

        here = commit(HERE)
        jobs = [{"dataset": dataset, "split": split} for split in range(SPLITS) for dataset in DATASETS]
        run_jobs(jobs, lambda job: run_split(job["dataset"], job["split"], here), runs_file(args.worker),
                 args.worker, args.workers)
    runs = read_runs()
    if runs.empty:
        print("no runs yet")
        return
    text = markdown(summarise(runs))
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
