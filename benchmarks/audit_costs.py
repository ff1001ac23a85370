"""What each membership attack of the audit costs (docs/methods/membership.md, "Which attack the
audit runs, when, and what it costs"): `synthrisk.audit` with its defaults on one Adult release of
`--n` members (a `cart` release; disjoint holdout and auxiliary records), without a generator, with
`--generator cart`, and with MST at ε = 10 and `--shadow-fits 8` (an MST refit takes seconds, so
the default 400 would take about an hour); per measure, the seconds of the audit's own `measures`
table.

    PYTHONPATH=. .venv/bin/python benchmarks/audit_costs.py [--n 1000] [--seed 11]

Measured (2026-12-06, `--n 1000`, 2 cores shared with two benchmark processes; 8 min): without a
generator 13 s in all (rapid 7.2, utility 2.2, mia 0.5, domias 0.14, exposure 0.11, dcr 0.09); with
cart in hand 112 s (shadow models 96.5 for 400 refits, ensemble 4.9 for 20); with MST at ε = 10 in
hand 255 s (one MST fit 14.0 s; shadow models 75.6 for 8 refits, ensemble 157.6 for 20, MAMA-MIA
0.6).
"""

from __future__ import annotations

import argparse
import time

import synthrisk
from synthrisk.generators.run import run_generator
from synthrisk.study.calibration import Population

CART = {"backend": "cart"}
MST = {"backend": "mst", "params": {"epsilon": 10.0, "noise_seed": 3}}


def timed_audit(members, release, holdout, schema, aux=None, **generator):
    start = time.perf_counter()
    found = synthrisk.audit(members, release, holdout, schema=schema, aux=aux, **generator)
    return time.perf_counter() - start, found.measures.set_index("measure")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    population = Population.of("adult", 3 * args.n, seed=args.seed)
    schema = population.schema
    members, holdout, aux = population.take(args.n), population.take(args.n), population.take(args.n)
    release, status = run_generator("cart", CART, members, schema, n=args.n, seed=1)
    runs = {"no generator (with --aux)": timed_audit(members, release, holdout, schema, aux=aux),
            "--generator cart": timed_audit(members, release, holdout, schema, generator=CART)}
    start = time.perf_counter()
    mst_release, _ = run_generator("mst", MST, members, schema, n=args.n, seed=1)
    print(f"one MST fit: {time.perf_counter() - start:.1f} s")
    runs["--generator mst (epsilon 10) --shadow-fits 8"] = timed_audit(members, mst_release, holdout, schema,
                                                                        generator=MST, shadow_fits=8)
    for label, (seconds, measures) in runs.items():
        ran = measures[measures["status"] == "ok"]["seconds"].round(2).to_dict()
        print(f"{label}: {seconds:.0f} s in all; per measure: {ran}")


if __name__ == "__main__":
    main()
