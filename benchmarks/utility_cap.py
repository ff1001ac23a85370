"""What the utility measure's size cap changes (`utility.max_records`, 100,000 records of each file by
default): its scores and its seconds against the whole files, at 10^6 records per file.

Files: Adult-like, as in `benchmarks/audit_scale.py` (UCI Adult bootstrapped, numeric columns
jittered by 1 % of their standard deviation; members, holdout and release three disjoint draws of
n records; the schema inferred from the members, as the audit does without one). Two releases, so that the cap is seen on a good and a bad one:
- `population`: the third draw (a release as good as real data);
- `shuffled`: that draw with every column permuted on its own (column shapes kept, every relation
  between columns destroyed).
Per release, `synthrisk.utility.utility` on the whole files (the peer: the same computation,
uncapped) and capped at `--cap` with `--seeds` sample seeds; the table gives each score whole and
capped (mean and range over the seeds), the largest difference, and the seconds with the ratio of
the whole files' to the capped mean.

    PYTHONPATH=. .venv/bin/python benchmarks/utility_cap.py [--n 1000000] [--cap 100000] [--seeds 3]

Measured (2026-12-06, `--n 1000000 --cap 100000 --seeds 3`, beside two other processes on 2
cores; 14 minutes in all):

| release | score | whole files | capped (mean [range] over 3 seeds) | largest difference | seconds whole / capped |
|---|---|---|---|---|---|
| population | quality | 0.9948 | 0.9929 [0.9916, 0.9939] | 0.0032 | 290 / 40 (7.2x) |
| population | column pair trends | 0.9909 | 0.9892 [0.9869, 0.9913] | 0.0039 | |
| population | efficacy ratio | 1.0007 | 1.0004 [1.0001, 1.0008] | 0.0005 | |
| shuffled | quality | 0.9001 | 0.8993 [0.8986, 0.8996] | 0.0015 | 266 / 43 (6.1x) |
| shuffled | column pair trends | 0.8015 | 0.8019 [0.8004, 0.8028] | 0.0013 | |
| shuffled | efficacy ratio | 0.4957 | 0.5439 [0.5023, 0.5923] | 0.0965 | |

SDMetrics' scores move by at most 0.004 (a sample reads its shapes slightly lower: two samples of
one population differ more when smaller). The efficacy of a release without relations is near
chance either way, and which near-chance function the model learns from noise varies with the
sample (0.50 to 0.59 against 0.50 whole): the cap does not turn a useless release into a useful one.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from audit_scale import adult_like

from synthrisk.data.schema import DatasetSchema
from synthrisk.utility import utility

SCORES = ("quality", "column_shapes", "column_pair_trends", "efficacy_ratio")


def scores(result) -> dict:
    return {**{k: result.fidelity[k] for k in SCORES[:3]}, "efficacy_ratio": result.efficacy_ratio}


def measure(members, release, holdout, schema, cap, seed) -> tuple[dict, float]:
    start = time.perf_counter()
    result = utility(members, release, holdout, schema=schema, seed=seed, max_records=cap)
    return scores(result), time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--cap", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    members, holdout, draw = adult_like(args.n, seed=0)
    schema = DatasetSchema.infer(members, sensitive="income", name="adult_like")  # as the audit at scale does
    rng = np.random.default_rng(1)
    releases = {"population": draw,
                "shuffled": draw.apply(lambda column: column.iloc[rng.permutation(len(column))].to_numpy())}
    rows = []
    for name, release in releases.items():
        whole, whole_seconds = measure(members, release, holdout, schema, None, 0)
        capped = [measure(members, release, holdout, schema, args.cap, seed) for seed in range(args.seeds)]
        seconds = float(np.mean([s for _, s in capped]))
        for score in SCORES:
            values = np.array([c[score] for c, _ in capped])
            rows.append({"release": name, "score": score, "whole files": f"{whole[score]:.4f}",
                         f"capped at {args.cap:,} (mean, range over {args.seeds} seeds)":
                             f"{values.mean():.4f} [{values.min():.4f}, {values.max():.4f}]",
                         "largest difference": f"{np.abs(values - whole[score]).max():.4f}",
                         "seconds whole / capped": f"{whole_seconds:.0f} / {seconds:.0f} "
                                                   f"({whole_seconds / seconds:.1f}x)"})
    print(pd.DataFrame(rows).to_markdown(index=False))
    print(f"\n{args.n:,} records per file")


if __name__ == "__main__":
    main()
