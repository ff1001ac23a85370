"""Cluster resources per rule, derived from the benchmark files of a real run (not guessed).

`synthrisk resources RESULTS/benchmarks` prints the `set-resources` block of a Snakemake profile:
memory is the peak resident set of the rule's worst job with head room, run time the longest job
with head room, rounded so that small changes in a rerun do not change the profile; both double
on a retry (`attempt`). Generate jobs get no run time here: it depends on the generator far more
than on the rule, so the rules derive it from each generator's `timeout`.
"""

from __future__ import annotations

import math

import pandas as pd
import yaml

from ..report.provenance import benchmark_records, stage_times

MEMORY_HEADROOM, RUNTIME_HEADROOM = 1.5, 3.0
MIN_MEM_MB, MIN_RUNTIME_MIN = 1024, 10


GENERATOR_RULES = ("generate", "generate_isolated")


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def resources_per_rule(records: pd.DataFrame) -> dict[str, dict[str, int]]:
    out = {}
    for rule, jobs in records.groupby("rule"):
        peak = jobs["max_rss_mb"].max()
        memory = MIN_MEM_MB if pd.isna(peak) else max(MIN_MEM_MB, _round_up(peak * MEMORY_HEADROOM, 512))
        runtime = max(MIN_RUNTIME_MIN, _round_up(jobs["seconds"].max() * RUNTIME_HEADROOM / 60, 10))
        out[rule] = {"mem_mb": memory} if rule in GENERATOR_RULES else {"mem_mb": memory, "runtime": runtime}
    return out


def _with_attempt(resources: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    return {rule: {key: f"{value} * attempt" for key, value in values.items()} for rule, values in resources.items()}


def profile_block(benchmarks_dir) -> str:
    records = benchmark_records(benchmarks_dir)
    if records.empty:
        raise FileNotFoundError(f"no benchmark files (*.tsv) under {benchmarks_dir}; run the workflow first")
    header = "\n".join(f"#   {row.rule}: {row.jobs} jobs, longest {row.longest_seconds:.0f} s, "
                        f"peak {row.peak_rss_mb:.0f} MB" for row in stage_times(records).itertuples())
    return (f"# measured from {benchmarks_dir}:\n{header}\n"
            + yaml.safe_dump({"set-resources": _with_attempt(resources_per_rule(records))}, sort_keys=True))
