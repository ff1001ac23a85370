"""The inference attack's exact test in its far tail (issue #26): how often a release that never saw
the members gives a p-value small enough for an *at risk* call.

The calibration study (`benchmarks/verdict_calibration.py`) counts how often a verdict fires at 5 %;
an *at risk* call on a null needs far smaller p-values (a simultaneous lower bound above the policy
threshold, about p < 1e-4 at 300 attacks). This draws the study's construction many times over, on
the simulator: members, holdout and a release of fresh population records are consecutive n-record
slices of one simulation (`simulate(n=3n, seed=base + rep)`), and the inference attack
(`synthrisk.anonymity.inference`, the audit's seed 0, so the same attacked positions in every
replication, as in the study) is scored on each sensitive attribute. Under this null the exact test's
p-value is at most uniform: the table gives, per threshold t, the count of p <= t against t x tests.

    PYTHONPATH=. .venv/bin/python benchmarks/inference_test_tail.py --n 1000 --reps 4000 --secrets y_cat
    PYTHONPATH=. .venv/bin/python benchmarks/inference_test_tail.py --n 10000 --reps 3000 --secrets y_cat

Measured (2026-12-05, `y_cat`, the attribute of the two *at risk* simulator nulls of `--seed 7` and `--seed 8`; count of
p <= t, expected t x tests in brackets):

| n | tests | p <= 0.05 | p <= 0.01 | p <= 1e-3 | p <= 1e-4 | smallest p |
|---|---|---|---|---|---|---|
| 1,000 | 4,000 | 151 (200) | 28 (40) | 1 (4) | 0 (0.4) | 9.4e-4 |
| 10,000 | 3,000 | 106 (150) | 21 (30) | 5 (3) | 0 (0.3) | 5.4e-4 |

The test keeps its level in the far tail, conservatively (the attack's successes are discrete).
"""

from __future__ import annotations

import argparse
import sys
import time

THRESHOLDS = (0.05, 0.01, 1e-3, 1e-4)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="members (= holdout = release size)")
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--attacks", type=int, default=300, help="attacked records per side (the study's 300)")
    parser.add_argument("--secrets", nargs="+", default=["y_cat", "y_cont"])
    parser.add_argument("--base-seed", type=int, default=10_000)
    parser.add_argument("--out", help="also write one row per replication and secret to this CSV")
    args = parser.parse_args(argv)

    import pandas as pd

    from synthrisk.anonymity.inference import inference
    from synthrisk.data import load_schema
    from synthrisk.data.simulate import simulate
    from synthrisk.study.calibration import ROOT

    schema = load_schema(ROOT / "config" / "datasets" / "simulation.yaml")
    unknown = [s for s in args.secrets if s not in schema.sensitive]
    if unknown:
        raise SystemExit(f"--secrets: {unknown} are not sensitive columns of the simulator ({schema.sensitive})")
    n, rows, start = args.n, [], time.time()
    for rep in range(args.reps):
        population = schema.conform(simulate(n=3 * n, strength=0.8, seed=args.base_seed + rep))
        members = population.iloc[:n]
        holdout = population.iloc[n:2 * n].reset_index(drop=True)
        release = population.iloc[2 * n:].reset_index(drop=True)
        for secret in args.secrets:
            risk = inference(members, release, holdout, schema=schema, secret=secret, n_attacks=args.attacks, seed=0).risk
            rows.append({"rep": rep, "secret": secret, "p": risk.p_value, "risk": risk.risk,
                         "main": risk.main.n_success, "control": risk.control.n_success})
        if rep % 500 == 499:
            print(f"{rep + 1}/{args.reps} replications, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    runs = pd.DataFrame(rows)
    if args.out:
        runs.to_csv(args.out, index=False)
    table = pd.DataFrame([{"secret": secret, "tests": len(part),
                           **{f"p <= {t:g}": f"{int((part['p'] <= t).sum())} (expected {t * len(part):.2f})"
                              for t in THRESHOLDS}, "smallest p": f"{part['p'].min():.2g}"}
                          for secret, part in runs.groupby("secret")])
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
