"""The default `make run` (config/config.yaml): this checkout against an older commit, same machine.

The peer is the workflow as it was at --old-commit (before #17's goal 2 there was one job per
measure, and per RAPID attacker x sensitive attribute). Each side is a `git archive` of its
commit in a fresh directory, run one after the other (never side by side) with the README's
settings: the local profile, 2 cores, config/config.yaml, this checkout's .venv. Printed per side:
wall time, the CPU time of the whole process tree, the number of jobs, and per stage the summed
job wall time and CPU time from the rules' benchmark files. Then the two runs' tables are compared
the way `synthrisk verify` compares a rerun with a bundle (timing columns excluded): the faster
workflow must compute the same tables, and the script exits 1 if it does not.

    PYTHONPATH=. .venv/bin/python benchmarks/quick_run.py --old-commit 256c8f6 [--keep DIR]

On a shared machine read the CPU times and the ratios, not the wall seconds.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pandas as pd

from synthrisk.measures import builtin_measures
from synthrisk.study.bundle import verify_bundle, write_bundle

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"

# Stages of the breakdown, by rule (the benchmark file's first path component). Measures of either
# layout (one rule `measures`, or one rule per measure) are one stage.
STAGES = {"load_dataset": "data", "split": "data", "generate": "generate", "generate_isolated": "generate",
          "rapid_simulation": "RAPID simulation study", "dp_grid": "DP experiments", "dp_experiment": "DP experiments",
          "measures": "measures", **{name: "measures" for name in builtin_measures()}}


def stage_of(rule: str) -> str:
    if rule in STAGES:
        return STAGES[rule]
    return "summaries and report"  # *_summary, summary, provenance, findings, report


def checkout(commit: str, into: Path) -> Path:
    """The tree of `commit` (as git stores it, no untracked files) in `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_workflow(tree: Path, config: str) -> dict:
    """One `snakemake` run of `config` in `tree` (its own results/), timed."""
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the checked-out synthrisk, not this one
    command = [str(VENV / "bin/snakemake"), "--snakefile", "Snakefile", "--directory", ".", "--workflow-profile",
               "workflow/profiles/local", "--cores", "2", "--configfile", config]
    start = time.perf_counter()
    with open(tree / "snakemake.log", "w") as log:
        process = subprocess.Popen(command, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the run in {tree} failed: see {tree / 'snakemake.log'}")
    return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime}


def stage_breakdown(tree: Path) -> pd.DataFrame:
    rows = []
    root = tree / "results/benchmarks"
    for path in root.rglob("*.tsv"):
        bench = pd.read_csv(path, sep="\t")
        rule = path.relative_to(root).parts[0].removesuffix(".tsv")
        rows.append({"stage": stage_of(rule), "job_seconds": float(bench["s"].iloc[0]),
                     "cpu_seconds": float(pd.to_numeric(bench["cpu_time"], errors="coerce").iloc[0])})
    return (pd.DataFrame(rows).groupby("stage")
            .agg(jobs=("job_seconds", "size"), job_seconds=("job_seconds", "sum"), cpu_seconds=("cpu_seconds", "sum")))


def measure_breakdown(tree: Path) -> pd.Series:
    """Seconds per measure, summed over runs: from the rules' benchmark files where each measure
    was a rule of its own, from the measure job logs' "[i/n] measure unit: status, s" lines where
    one job runs them all."""
    root, logs = tree / "results/benchmarks", tree / "results/logs/measures"
    seconds: dict[str, float] = {}
    if logs.is_dir():
        for log in logs.rglob("*.log"):
            for match in re.finditer(r"^\[\d+/\d+\] (\w+)[^:]*: \w+.*, ([0-9.]+) s$", log.read_text(), re.M):
                seconds[match[1]] = seconds.get(match[1], 0.0) + float(match[2])
    else:
        for name in builtin_measures():
            for path in (root / name).rglob("*.tsv") if (root / name).is_dir() else ():
                seconds[name] = seconds.get(name, 0.0) + float(pd.read_csv(path, sep="\t")["s"].iloc[0])
    return pd.Series(seconds, name="seconds").sort_values(ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old-commit", required=True, help="the peer: the workflow at this commit")
    parser.add_argument("--new-commit", default="HEAD")
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--keep", help="run in this directory and keep it (default: a temporary one)")
    args = parser.parse_args()

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="synthrisk-quick-run-"))
    sides = {"old": args.old_commit, "new": args.new_commit}
    totals, stages = {}, {}
    for side, commit in sides.items():
        tree = checkout(commit, base / side)
        print(f"{side} ({commit}): running {args.config} in {tree} ...", flush=True)
        totals[side] = run_workflow(tree, args.config)
        stages[side] = stage_breakdown(tree)
        totals[side]["jobs"] = int(stages[side]["jobs"].sum())
        print(f"{side}: {totals[side]['wall_seconds']:.0f} s wall, {totals[side]['cpu_seconds']:.0f} s CPU, "
              f"{totals[side]['jobs']} jobs", flush=True)

    table = pd.concat(stages, axis=1).fillna(0)
    for column in ("job_seconds", "cpu_seconds"):
        table[("ratio old/new", column)] = table[("old", column)] / table[("new", column)]
    print("\nper stage (sums over jobs):")
    print(table.round(1).to_string())
    print("\nmeasures (seconds summed over runs; one job per measure and unit, or time inside the one job):")
    print(pd.concat({side: measure_breakdown(base / side) for side in sides}, axis=1).round(1).to_string())
    print("\nwhole run:")
    print(pd.DataFrame(totals).T.assign(
        wall_ratio=lambda t: t["wall_seconds"]["old"] / t["wall_seconds"]).round(2).to_string())

    bundle = base / "old.tar.gz"
    write_bundle(base / "old", bundle)
    verification = verify_bundle(bundle, base / "new")
    print("\ntables of the new run against the old run's:\n" + verification.text())
    if not verification.ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
