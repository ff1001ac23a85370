"""Per-person membership evidence checked the way it is used (issue #42): how often the audit names
anyone in a release that never saw its members, and how many of the members it names in a release
with member copies were not copied (the false-discovery proportion).

Each replication draws members, holdout and the release's source as disjoint draws of one
population (`synthrisk.study.calibration.Population`: Adult sampled without replacement, or the
simulator) and runs `synthrisk.mia.exposure` (the audit's settings: Benjamini-Hochberg at
false-discovery rate 0.045 on conformal p-values against the holdout) on
- `population`: fresh population records (the null: nobody should be named);
- `copies_S`: population records of which a share S are replaced by copies of the first members
  (the named members that are not among the copied ones are false discoveries).
It prints, per release, the share of replications naming anyone (with its Clopper-Pearson
interval), the mean number named, and the mean and largest false-discovery proportion.

    PYTHONPATH=. .venv/bin/python benchmarks/exposure_naming.py [--dataset adult] [--n 1000] [--reps 200] \
        [--shares 0.01 0.02 0.05 0.1] [--aux 0]

Measured (2026-12-06, Adult, `--n 1000 --reps 200 --shares 0.02 0.05 0.1 --fdr 0.045 0.0225 0.015`:
the audit's rate, and the half and third of it an even split among two or three naming attacks
would leave; the holdout as the calibration set; 984 s beside two other processes). Nobody named
in any population or 2 % release at any rate; 5 % copies: anyone named in 113/200 at 0.045 (mean
17.4 named, mean FDP 0.027, largest 0.176), 0/200 at 0.0225 and 0.015; 10 % copies: 197/200 (64.4,
0.033, 0.118), 110/200 (32.2, 0.012, 0.088) and 28/200 (10.1, 0.005, 0.088). Hence the audit's gate
instead of a split (synthrisk.release_audit.named).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from synthrisk.mia.exposure import exposure
from synthrisk.stats.multiple_testing import benjamini_hochberg
from synthrisk.stats.proportions import clopper_pearson
from synthrisk.study.calibration import Population


def replicate(dataset: str, n: int, n_aux: int, shares: list[float], seed: int,
              rates: tuple[float, ...] = (0.045,)) -> list[dict]:
    population = Population.of(dataset, 3 * n + n_aux, seed=seed)
    members, holdout, source = population.take(n), population.take(n), population.take(n)
    aux = population.take(n_aux) if n_aux else None
    rows = []
    for share in [0.0, *shares]:
        release = source.copy()
        copied = int(round(share * n))
        if copied:
            release.iloc[:copied] = members.iloc[:copied][release.columns].to_numpy()
        result = exposure(members, release, holdout, schema=population.schema, aux=aux, fdr=rates[0])
        p_values = result.records.loc[result.records["member"] == 1, "p_value"].to_numpy()
        for rate in rates:  # the same members' p-values, named at each rate
            positions = np.flatnonzero(benjamini_hochberg(p_values, rate))  # members in their order
            rows.append({"release": f"copies_{share:g}" if share else "population", "fdr": rate,
                         "named": len(positions), "false": int((positions >= copied).sum())})
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="adult", choices=["adult", "simulation"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--aux", type=int, default=0, help="auxiliary records added to the calibration set")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.01, 0.02, 0.05, 0.1])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fdr", type=float, nargs="+", default=[0.045],
                        help="false-discovery rates to name at (the audit's 0.045; with the generator in hand "
                             "exposure gets a half or a third of it)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for rep in range(args.reps):
        seed = int(np.random.SeedSequence([args.seed, rep]).generate_state(1)[0])
        rows += replicate(args.dataset, args.n, args.aux, args.shares, seed, tuple(args.fdr))
    frame = pd.DataFrame(rows)
    frame["any"] = frame["named"] > 0
    frame["fdp"] = np.where(frame["named"] > 0, frame["false"] / frame["named"].clip(lower=1), 0.0)
    out = []
    for (release, rate), part in frame.groupby(["release", "fdr"], sort=False):
        k, m = int(part["any"].sum()), len(part)
        low, high = clopper_pearson(k, m, 0.95)
        out.append({"release": release, "fdr": rate, "named anyone": f"{k}/{m}", "interval": f"[{low:.3f}, {high:.3f}]",
                    "mean named": round(part["named"].mean(), 1),
                    "mean FDP": round(part["fdp"].mean(), 4) if release != "population" else None,
                    "largest FDP": round(part["fdp"].max(), 3) if release != "population" else None})
    print(pd.DataFrame(out).to_markdown(index=False))
    print(f"\n{args.reps} replications in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
