"""synthpop's DiSCO against the control-set inference risk on the same releases (issue #45, item 2).

Both ask whether a release lets an intruder who knows a person's quasi-identifiers infer the
person's sensitive value, but each reads it its own way:
- DiSCO (`synthrisk.measures.disclosure`, synthpop's definition): the share of records whose key
  group in the release has one target value, their own; synthpop reports it on the training records
  (population-level: it holds as much for anyone of the population who looks like them), and the
  audit reads its member excess (members minus holdout records, exact test);
- inference (`synthrisk.measures.inference`, Giomi et al. 2023): the nearest synthetic record on
  the other quasi-identifiers guesses the secret; its success on members corrected for its success
  on control records (the holdout): (main - control) / (1 - control), permutation test.

Per split, members, holdout and the releases are disjoint draws of one population
(`synthrisk.study.calibration.Population` and `releases`, as the shipped calibration draws them):
`second_holdout` (fresh population records) and `cart` (fitted on other records) never saw the
members; `copies_q` replaces a share q of population records with member copies; `leaky` is the
leaky generator (10 % member copies, independent columns). Each measure runs through
`synthrisk.measure` with the audit's defaults. The splits are fixed before running (`SPLITS`); each
split is added to `benchmarks/calibration/disco_vs_inference.csv.gz` as it finishes (a rerun skips
the splits it holds), and the table (`disco_vs_inference.md` beside it) is written from that file
alone; `--summarise` only rewrites the table.

    PYTHONPATH=. .venv/bin/python benchmarks/disco_vs_inference.py [--dataset adult simulation]
    PYTHONPATH=. .venv/bin/python benchmarks/disco_vs_inference.py --summarise

The table: per dataset and release, synthpop's DiSCO on the training and on the holdout records
(%), the mean member excess and the share of splits whose excess test fires at 0.05; the mean
inference risk and the share of splits whose test fires; and how often the two agree.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
RUNS = HERE / "calibration" / "disco_vs_inference.csv.gz"
TABLE = HERE / "calibration" / "disco_vs_inference.md"
#: fixed before running: splits per dataset, members per split, releases, seed
SPLITS, N, SEED = 20, 1000, 4500
RELEASES = ["second_holdout", "cart", "copies_0.02", "copies_0.05", "copies_0.1", "leaky"]
LEVEL = 0.05


def run_split(dataset: str, split: int, commit: str) -> list[dict]:
    import synthrisk
    from synthrisk.study.calibration import Population, releases

    seed = int(np.random.SeedSequence([SEED, split, len(dataset)]).generate_state(1)[0])
    population = Population.of(dataset, N * 5, seed=seed)
    members, holdout = population.take(N), population.take(N)
    made = releases(members, holdout, population, population.schema, RELEASES, seed=seed)
    rows = []
    for kind, release in made.items():
        with contextlib.redirect_stderr(io.StringIO()):
            disco = synthrisk.measure("disco", members, release, holdout, schema=population.schema)
            inference = synthrisk.measure("inference", members, release, holdout, schema=population.schema)
        for d_attack, i_attack in zip(disco.details["attacks"], inference.details["attacks"]):
            rows.append({"dataset": dataset, "split": split, "release": kind, "target": d_attack["target"],
                         "disco_train": d_attack["synthpop"]["DiSCO"], "disco_holdout": d_attack["holdout"]["DiSCO"],
                         "disco_excess": d_attack["member_excess"], "disco_p": d_attack["member_excess_p_value"],
                         "inference_risk": i_attack["risk"], "inference_p": i_attack.get("p_value"),
                         "commit": commit})
    return rows


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    runs = runs.assign(disco_fires=runs["disco_p"] <= LEVEL, inference_fires=runs["inference_p"] <= LEVEL)
    out = runs.groupby(["dataset", "release", "target"], sort=False).agg(
        splits=("split", "nunique"), disco_train=("disco_train", "mean"), disco_holdout=("disco_holdout", "mean"),
        disco_excess=("disco_excess", "mean"), disco_fires=("disco_fires", "mean"),
        inference_risk=("inference_risk", "mean"), inference_fires=("inference_fires", "mean"))
    agree = runs.groupby(["dataset", "release", "target"], sort=False).apply(
        lambda g: (g["disco_fires"] == g["inference_fires"]).mean(), include_groups=False)
    return out.assign(agree=agree).reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", nargs="+", default=["adult", "simulation"])
    parser.add_argument("--summarise", action="store_true")
    args = parser.parse_args()
    done = pd.read_csv(RUNS) if RUNS.exists() else pd.DataFrame(columns=["dataset", "split"])
    if not args.summarise:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=HERE).stdout.strip()
        for dataset in args.dataset:
            for split in range(SPLITS):
                if ((done["dataset"] == dataset) & (done["split"] == split)).any():
                    continue
                rows = pd.DataFrame(run_split(dataset, split, commit))
                done = pd.concat([done, rows], ignore_index=True) if len(done) else rows
                temporary = RUNS.with_suffix(".tmp.gz")
                done.to_csv(temporary, index=False)
                temporary.replace(RUNS)
                print(f"{dataset} split {split} done", flush=True)
    text = markdown(summarise(done))
    TABLE.write_text(text)
    print(text)


def markdown(table: pd.DataFrame) -> str:
    return table.to_markdown(index=False, floatfmt=".3f") + "\n"


if __name__ == "__main__":
    sys.exit(main())
