"""The DP stage's Monte Carlo: batched across repetitions vs the per-repetition loop, same run.

The peer is the per-repetition loop (synthrisk.dp.reference: scipy's L-BFGS-B per release for the
noise-aware MLE, one bootstrap and one Newton solve per release), run on the same settings and the
same per-repetition random streams; the two must give identical tables, and the benchmark stops if
they do not. Only coverage and clipping have a per-repetition analysis (the variance/scaling grid
and the census were batched before), so the loop is timed on those; a fraction of the repetitions
keeps it short, and its time is projected to the paper's counts by dividing by the fraction (every
cost here is per repetition: releases, solves, optimisations, bootstraps; the fixed costs, noise
scales and Python set-up per cell, make small fractions overstate the projection a little). The batched code then
runs the whole paper DP stage (grid, coverage, clipping, census) with the paper's counts.

With --old-commit REV the stage as it was at REV (before batching: records drawn one by one,
one shared random stream) also runs on the fraction, in a subprocess; its tables cannot equal the
new ones (the random streams differ), so their coverages are compared as Monte Carlo estimates of
the same quantities (z = difference / combined Monte Carlo error).

    PYTHONPATH=. .venv/bin/python benchmarks/dp_monte_carlo.py --fraction 0.02 [--skip-full]
        [--old-commit 67b8725]

Threads are held to 1, as the workflow's jobs are (synthrisk.study.workflow.logged); CPU seconds are
printed next to wall seconds because the machine may be shared.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402

from synthrisk.dp import experiments as ex  # noqa: E402
from synthrisk.dp import stage  # noqa: E402
from synthrisk.dp.reference import coverage_rows_one_at_a_time  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STAGE = ("grid", "coverage", "clipping", "census")
LOOPED = ("coverage", "clipping")  # the experiments with a per-repetition analysis


def scaled(settings: dict, fraction: float) -> dict:
    """The settings with every repetition count multiplied by `fraction` (at least 2)."""
    out = {**settings, "census": dict(settings["census"])}
    for key in ("reps", "noise_aware_reps", "bootstrap_reps"):
        out[key] = max(2, round(settings[key] * fraction))
    out["census"]["reps"] = max(2, round(settings["census"]["reps"] * fraction))
    return out


def run(name: str, settings: dict, seed: int, adult, cell_rows=None) -> pd.DataFrame:
    with np.errstate(all="ignore"):
        if name == "grid":
            return ex.variance_grid(settings, seed)
        if name == "coverage":
            return ex.coverage_study(settings, seed, cell_rows)
        if name == "clipping":
            return ex.clipping_study(settings, seed, cell_rows)
        return ex.census_study(adult, settings, seed)


def timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


OLD_SCRIPT = """
import json, os, sys, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"): os.environ[v] = "1"
import numpy as np
from synthrisk.dp import experiments as ex
from synthrisk.data import load_dataset, load_schema
settings, seed, out, adult_schema = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
adult = load_dataset(load_schema(adult_schema))
times = {}
with np.errstate(all="ignore"):
    for name, function in (("grid", lambda: ex.variance_grid(settings, seed)),
                           ("coverage", lambda: ex.coverage_study(settings, seed)),
                           ("clipping", lambda: ex.clipping_study(settings, seed)),
                           ("census", lambda: ex.census_study(adult, settings, seed))):
        wall, cpu = time.perf_counter(), time.process_time()
        function().to_csv(f"{out}/{name}.csv", index=False)
        times[name] = [time.perf_counter() - wall, time.process_time() - cpu]
import synthrisk
print(json.dumps([times, synthrisk.__file__]))
"""


def run_old(commit: str, settings: dict, seed: int, workdir: Path) -> dict:
    """The stage's experiments as they were at `commit`, in a subprocess importing that tree."""
    tree = workdir / "old"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "synthrisk"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    done = subprocess.run([sys.executable, "-c", OLD_SCRIPT, json.dumps(settings), str(seed), str(workdir),
                           str(ROOT / "config/datasets/adult.yaml")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    times, origin = json.loads(done.stdout.strip().splitlines()[-1])
    if not origin.startswith(str(tree)):
        raise RuntimeError(f"the old run imported synthrisk from {origin}, not from {tree}")
    return times


def coverage_z(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Per (family, epsilon or clip, interval): the coverage difference over its Monte Carlo error."""
    keys = [k for k in ("family", "epsilon", "clip", "interval") if k in new.columns]
    both = old.merge(new, on=keys, suffixes=("_old", "_new"))
    variance = sum(both[f"coverage{s}"] * (1 - both[f"coverage{s}"]) / both[f"valid_reps{s}"]
                   for s in ("_old", "_new"))
    both["z"] = (both["coverage_new"] - both["coverage_old"]) / np.sqrt(np.maximum(variance, 1e-12))
    return both[keys + ["coverage_old", "coverage_new", "z"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "config/paper.yaml"))
    parser.add_argument("--fraction", type=float, default=0.02, help="share of the repetitions for the loop")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-full", action="store_true", help="project the batched stage too")
    parser.add_argument("--old-commit", help="also run the stage as it was at this git revision")
    args = parser.parse_args()

    from synthrisk.data import load_dataset, load_schema

    settings = stage.settings_from_config(yaml.safe_load(Path(args.config).read_text())["dp"])
    small = scaled(settings, args.fraction)
    if small["noise_seed"] is None:  # the loop and the batched code must draw the same DP noise to compare
        small["noise_seed"] = 0
    adult = load_dataset(load_schema(ROOT / "config/datasets/adult.yaml"))
    print(f"config {args.config}: reps {settings['reps']}, noise-aware {settings['noise_aware_reps']}, "
          f"bootstrap {settings['bootstrap_reps']} x {settings['bootstrap_draws']} draws; fraction "
          f"{args.fraction} -> reps {small['reps']}, noise-aware {small['noise_aware_reps']}, "
          f"bootstrap {small['bootstrap_reps']}")

    print("\n1. per-repetition loop vs batched, same settings and streams (fraction of the repetitions)")
    rows, small_new = [], {}
    for name in STAGE:
        batched, wall, cpu = timed(run, name, small, args.seed, adult)
        small_new[name] = batched
        row = {"experiment": name, "batched_wall_s": wall, "batched_cpu_s": cpu}
        if name in LOOPED:
            loop, loop_wall, loop_cpu = timed(run, name, small, args.seed, adult, coverage_rows_one_at_a_time)
            pd.testing.assert_frame_equal(batched, loop, check_exact=True)  # identical tables, or stop
            row.update(loop_wall_s=loop_wall, loop_cpu_s=loop_cpu, ratio_cpu=loop_cpu / cpu, identical=True)
        rows.append(row)
    small_table = pd.DataFrame(rows)
    print(small_table.to_string(index=False, float_format="%.2f"))

    print(f"\n2. the paper DP stage ({'projected from the fraction' if args.skip_full else 'run in full'})")
    full = []
    for row in rows:
        name = row["experiment"]
        if args.skip_full:
            wall, cpu = row["batched_wall_s"] / args.fraction, row["batched_cpu_s"] / args.fraction
        else:
            _, wall, cpu = timed(run, name, settings, args.seed, adult)
        # the loop projected from the fraction; the other experiments run the same batched code in both
        loop_cpu = row["loop_cpu_s"] / args.fraction if name in LOOPED else cpu
        full.append({"experiment": name, "batched_wall_s": wall, "batched_cpu_s": cpu,
                     "loop_cpu_s_projected": loop_cpu})
    full_table = pd.DataFrame(full)
    total = full_table[["batched_wall_s", "batched_cpu_s", "loop_cpu_s_projected"]].sum()
    print(full_table.to_string(index=False, float_format="%.1f"))
    print(f"stage: batched {total['batched_wall_s']:.0f} s wall, {total['batched_cpu_s']:.0f} CPU s "
          f"({'projected' if args.skip_full else 'actual'}); per-repetition loop projected "
          f"{total['loop_cpu_s_projected']:.0f} CPU s; ratio {total['loop_cpu_s_projected'] / total['batched_cpu_s']:.1f}x. "
          "The four jobs run one per core on 2 cores: wall on an idle machine ~ the larger of "
          f"coverage ({full_table.set_index('experiment').loc['coverage', 'batched_cpu_s']:.0f} CPU s) "
          "and the sum of the others.")

    if args.old_commit:
        print(f"\n3. the stage at {args.old_commit} (records one by one, one shared stream), same fraction")
        with tempfile.TemporaryDirectory() as workdir:
            times = run_old(args.old_commit, small, args.seed, Path(workdir))
            old = {name: pd.read_csv(Path(workdir) / f"{name}.csv") for name in STAGE}
        old_table = pd.DataFrame([{"experiment": name, "old_wall_s": times[name][0], "old_cpu_s": times[name][1],
                                   "old_cpu_s_projected": times[name][1] / args.fraction,
                                   "ratio_cpu": times[name][1] / small_table.set_index("experiment").loc[name, "batched_cpu_s"]}
                                  for name in STAGE])
        print(old_table.to_string(index=False, float_format="%.2f"))
        print(f"old stage projected to the paper's counts: {old_table['old_cpu_s_projected'].sum():.0f} CPU s "
              f"(ratio to batched: {old_table['old_cpu_s'].sum() / small_table['batched_cpu_s'].sum():.1f}x)")
        z = pd.concat([coverage_z(old[name], small_new[name]) for name in ("coverage", "clipping", "census")])
        z = z[np.isfinite(z["z"])]
        print(f"coverage old vs new, {len(z)} estimates: |z| > 1.96 in {int((z['z'].abs() > 1.96).sum())} "
              f"(expected ~{0.05 * len(z):.1f} if only Monte Carlo noise), largest |z| {z['z'].abs().max():.2f}, "
              f"mean z {z['z'].mean():+.2f}")


if __name__ == "__main__":
    main()
