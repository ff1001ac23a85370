"""Does the DCR test hold its level? The null and the power of `synthrisk.dcr.dcr`, simulated.

Population: a mixed table with ties (`--population`): three categorical columns (4, 3 and 2
levels, skewed) and three rounded numerics, age (normal, 18-90), hours (normal, rounded to 5) and a
score (gamma, 0-10). `fine` rounds age to 1 year and score to 0.5; `coarse` age to 5 years and the
score to 1, so that more synthetic records share one nearest real record.

Each replication draws members, holdout and synthetic records afresh from the population: the
generator never saw the members, so the null of the test holds, and a test at level 5 % should
reject in 5 % of replications. The alternative: 10 % of the synthetic records replaced by copies of
members (drawn without replacement). For each design the table gives the rejection rate at 5 % of
the permutation test (`p_value_one_sided`) and of the exact sign test it replaced
(`p_value_sign_test`), the share's sd over replications against the mean sd each test assumes
(`null_sd`: permutation, binomial), and how often the 95 % interval covers 0.5 under the null.

With `--time N` it also times one `dcr()` call at N x N x N records of the coarse population (the
compiled kernels loaded first), and the same call with one permutation, whose difference is the cost
of the permutations.

    .venv/bin/python benchmarks/dcr_null.py [--reps 200] [--permutations 999] [--time 25000]
        [--population fine|coarse|both] [--designs 1000/1000/3000 ...] [--leaks 0 0.1]

Measured (2026-12-04, `--reps 200 --time 25000`, B = 999; 2 cores shared with other jobs, so s/rep
is rough; `tied`: share of synthetic records with more than one nearest real record):

| population | members/holdout/synthetic | leak | reps | reject: permutation | reject: sign test | share mean | share sd | sd: permutation | sd: binomial | 95% interval covers 0.5 | tied | s/rep |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
| fine | 300/300/300 | 0% | 200 | 0.045 | 0.060 | 0.4995 | 0.0319 | 0.0308 | 0.0286 | 0.945 | 0.029 | 0.10 |
| fine | 300/300/300 | 10% | 200 | 0.470 | 0.515 | 0.5494 | 0.0288 | 0.0303 | 0.0287 | 0.660 | 0.029 | 0.24 |
| fine | 300/300/3,000 | 0% | 200 | 0.050 | 0.150 | 0.4993 | 0.0147 | 0.0148 | 0.0091 | 0.950 | 0.029 | 0.30 |
| fine | 300/300/3,000 | 10% | 200 | 0.980 | 1.000 | 0.5499 | 0.0139 | 0.0138 | 0.0091 | 0.065 | 0.029 | 0.22 |
| fine | 1,000/1,000/1,000 | 0% | 200 | 0.055 | 0.080 | 0.5004 | 0.0176 | 0.0167 | 0.0155 | 0.935 | 0.072 | 0.19 |
| fine | 1,000/1,000/1,000 | 10% | 200 | 0.930 | 0.930 | 0.5490 | 0.0147 | 0.0165 | 0.0155 | 0.125 | 0.074 | 0.20 |
| fine | 1,000/1,000/3,000 | 0% | 200 | 0.035 | 0.080 | 0.4992 | 0.0111 | 0.0108 | 0.0090 | 0.955 | 0.073 | 0.28 |
| fine | 1,000/1,000/3,000 | 10% | 200 | 1.000 | 1.000 | 0.5475 | 0.0099 | 0.0104 | 0.0089 | 0.005 | 0.074 | 0.25 |
| coarse | 300/300/300 | 0% | 200 | 0.025 | 0.050 | 0.4990 | 0.0311 | 0.0302 | 0.0274 | 0.950 | 0.167 | 0.09 |
| coarse | 300/300/300 | 10% | 200 | 0.440 | 0.470 | 0.5447 | 0.0289 | 0.0296 | 0.0274 | 0.640 | 0.176 | 0.07 |
| coarse | 300/300/3,000 | 0% | 200 | 0.050 | 0.170 | 0.4987 | 0.0153 | 0.0154 | 0.0087 | 0.955 | 0.172 | 0.14 |
| coarse | 300/300/3,000 | 10% | 200 | 0.935 | 0.995 | 0.5439 | 0.0135 | 0.0143 | 0.0087 | 0.115 | 0.174 | 0.11 |
| coarse | 1,000/1,000/1,000 | 0% | 200 | 0.050 | 0.070 | 0.5015 | 0.0155 | 0.0159 | 0.0139 | 0.955 | 0.346 | 0.17 |
| coarse | 1,000/1,000/1,000 | 10% | 200 | 0.760 | 0.800 | 0.5368 | 0.0150 | 0.0155 | 0.0139 | 0.340 | 0.353 | 0.17 |
| coarse | 1,000/1,000/3,000 | 0% | 200 | 0.065 | 0.140 | 0.5001 | 0.0120 | 0.0110 | 0.0081 | 0.945 | 0.344 | 0.21 |
| coarse | 1,000/1,000/3,000 | 10% | 200 | 0.970 | 0.985 | 0.5359 | 0.0101 | 0.0105 | 0.0080 | 0.055 | 0.351 | 0.18 |

The same, 600 replications (`--reps 600 --population coarse --designs 1000/1000/3000 300/300/3000 --leaks 0`):

| population | members/holdout/synthetic | leak | reps | reject: permutation | reject: sign test | share mean | share sd | sd: permutation | sd: binomial | 95% interval covers 0.5 | tied | s/rep |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
| coarse | 1,000/1,000/3,000 | 0% | 600 | 0.057 | 0.112 | 0.4997 | 0.0112 | 0.0110 | 0.0080 | 0.945 | 0.346 | 0.21 |
| coarse | 300/300/3,000 | 0% | 600 | 0.047 | 0.168 | 0.4990 | 0.0156 | 0.0154 | 0.0087 | 0.947 | 0.171 | 0.11 |

The permutation test holds its level in every design (0.025-0.065 at 200 replications, where the
sd of an estimated rate of 0.05 is 0.015); the sign test does not when synthetic records outnumber
the real ones they crowd on (0.15-0.17 at 300/300/3,000, 0.08-0.14 at 1,000/1,000/3,000), because
the share's sd over replications is the permutation sd, not the binomial one. With 10 % of member
copies the permutation test rejects in 0.44-0.47 of the replications at 300/300/300 (an excess of
0.045-0.05 against a null sd of 0.03), 0.76-0.93 at 1,000/1,000/1,000 and 0.93-1.00 with 3,000
synthetic records; the sign test's slightly higher rates come with its inflated level.

Cost, one `dcr()` call at 25,000 x 25,000 x 25,000 records, idle machine (2 cores): fine population
0.75 s for the previous dcr() (two 2-nearest searches and the sign test only), 1.74 s now with B = 1
(plus the pooled tie-set search), 2.77 s with B = 999; coarse population (22,153 of 25,000 synthetic records with tied nearest
records, 2,029 tie sets still full at k = 64) 0.88 s, 2.88 s and 4.24 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from synthrisk.data.schema import DatasetSchema
from synthrisk.dcr import dcr

SCHEMA = DatasetSchema.from_dict({
    "name": "population", "source": {"path": "unused.csv"},
    "columns": {"age": {"type": "integer", "bounds": [18, 90]}, "hours": {"type": "integer", "bounds": [0, 80]},
                "score": {"type": "continuous", "bounds": [0, 10]},
                "a": {"type": "categorical", "levels": ["p", "q", "r", "s"]},
                "b": {"type": "categorical", "levels": ["x", "y", "z"]},
                "c": {"type": "categorical", "levels": ["no", "yes"]}},
    "quasi_identifiers": ["age", "a", "b"], "sensitive": ["c"]})
DESIGNS = [(300, 300, 300), (300, 300, 3000), (1000, 1000, 1000), (1000, 1000, 3000)]


def population(n: int, rng: np.random.Generator, coarse: bool) -> pd.DataFrame:
    age_step, score_step = (5, 1.0) if coarse else (1, 0.5)
    return pd.DataFrame({
        "age": np.clip(age_step * np.round(rng.normal(40, 12, n) / age_step), 18, 90).astype(int),
        "hours": np.clip(5 * np.round(rng.normal(40, 8, n) / 5), 0, 80).astype(int),
        "score": np.clip(score_step * np.round(rng.gamma(2, 1.2, n) / score_step), 0, 10),
        "a": rng.choice(list("pqrs"), n, p=[0.5, 0.3, 0.15, 0.05]),
        "b": rng.choice(list("xyz"), n, p=[0.6, 0.3, 0.1]),
        "c": rng.choice(["no", "yes"], n, p=[0.75, 0.25])})


def replicate(design, rep: int, coarse: bool, leak: float, permutations: int) -> dict:
    n_m, n_h, n_s = design
    rng = np.random.default_rng([20261204, n_m, n_h, n_s, int(coarse), int(leak * 100), rep])
    members, holdout = population(n_m, rng, coarse), population(n_h, rng, coarse)
    synthetic = population(n_s, rng, coarse)
    copies = int(round(leak * n_s))
    if copies:
        synthetic.iloc[:copies] = members.iloc[rng.choice(n_m, copies, replace=copies > n_m)].to_numpy()
    return dcr(members, synthetic, holdout, schema=SCHEMA, seed=rep, permutations=permutations).to_json()


def summarise(runs: list[dict]) -> dict:
    share = np.array([r["share_closer_to_member"] for r in runs])
    return {"reps": len(runs),
            "reject_permutation": float(np.mean([r["p_value_one_sided"] < 0.05 for r in runs])),
            "reject_sign_test": float(np.mean([r["p_value_sign_test"] < 0.05 for r in runs])),
            "share_mean": float(share.mean()), "share_sd": float(share.std(ddof=1)),
            "sd_permutation": float(np.mean([r["null_sd"]["permutation"] for r in runs])),
            "sd_binomial": float(np.mean([r["null_sd"]["binomial"] for r in runs])),
            "covers_half": float(np.mean([r["share_interval"]["low"] <= 0.5 <= r["share_interval"]["high"]
                                          for r in runs])),
            "tied": float(np.mean([r["nearest_real"]["tied"] / r["n_synthetic"] for r in runs]))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--permutations", type=int, default=999)
    parser.add_argument("--population", choices=["fine", "coarse", "both"], default="both")
    parser.add_argument("--leaks", type=float, nargs="+", default=[0.0, 0.1])
    parser.add_argument("--designs", nargs="+", default=None, help="members/holdout/synthetic, e.g. 1000/1000/3000")
    parser.add_argument("--time", type=int, default=None, help="also time one dcr() call at N x N x N records")
    args = parser.parse_args()
    kinds = ["fine", "coarse"] if args.population == "both" else [args.population]
    designs = [tuple(int(n) for n in d.split("/")) for d in args.designs] if args.designs else DESIGNS
    print("| population | members/holdout/synthetic | leak | reps | reject: permutation | reject: sign test | "
          "share mean | share sd | sd: permutation | sd: binomial | 95% interval covers 0.5 | tied | s/rep |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        for design in designs:
            for leak in args.leaks:
                start = time.perf_counter()
                runs = [replicate(design, rep, kind == "coarse", leak, args.permutations) for rep in range(args.reps)]
                s = summarise(runs)
                seconds = (time.perf_counter() - start) / args.reps
                print(f"| {kind} | {'/'.join(f'{n:,}' for n in design)} | {leak:.0%} | {s['reps']} | "
                      f"{s['reject_permutation']:.3f} | {s['reject_sign_test']:.3f} | {s['share_mean']:.4f} | "
                      f"{s['share_sd']:.4f} | {s['sd_permutation']:.4f} | {s['sd_binomial']:.4f} | "
                      f"{s['covers_half']:.3f} | {s['tied']:.3f} | {seconds:.2f} |", flush=True)
    if args.time:
        n = args.time
        replicate((50, 50, 50), 0, True, 0.0, 9)  # load the compiled kernels
        rng = np.random.default_rng(1)
        frames = [population(n, rng, True) for _ in range(3)]
        for permutations in (1, args.permutations):
            start = time.perf_counter()
            members, holdout, synthetic = frames
            out = dcr(members, synthetic, holdout, schema=SCHEMA, seed=0, permutations=permutations).to_json()
            print(f"dcr() at {n:,} x {n:,} x {n:,}, B = {permutations}: {time.perf_counter() - start:.2f} s "
                  f"(share {out['share_closer_to_member']:.4f}, p {out['p_value_one_sided']:.3g}, "
                  f"nearest_real {out['nearest_real']})", flush=True)


if __name__ == "__main__":
    main()
