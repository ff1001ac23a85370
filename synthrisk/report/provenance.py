"""What a reader needs to trust or repeat a run: code version, packages, seeds, time per stage."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

PACKAGES = ("synthrisk", "snakemake", "numpy", "pandas", "scipy", "scikit-learn", "sdv", "sdmetrics",
            "torch", "dp-accounting", "mbi", "jax", "statsmodels", "matplotlib")


def git_revision(directory: str | Path) -> dict:
    """Commit of the workflow's repository and whether its tracked files had local changes."""
    def git(*args):
        return subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown (not a git checkout)", "dirty": None}


def benchmark_records(benchmarks_dir: str | Path) -> pd.DataFrame:
    """One row per job from the rules' benchmark files (results/benchmarks/<rule>[/...].tsv)."""
    rows = []
    root = Path(benchmarks_dir)
    for path in sorted(root.rglob("*.tsv")):
        bench = pd.read_csv(path, sep="\t")
        rows.append({"rule": path.relative_to(root).parts[0].removesuffix(".tsv"),
                     "job": str(path.relative_to(root).with_suffix("")),
                     "seconds": float(bench["s"].iloc[0]),
                     "max_rss_mb": float(pd.to_numeric(bench["max_rss"], errors="coerce").iloc[0])})
    return pd.DataFrame(rows, columns=["rule", "job", "seconds", "max_rss_mb"])


def stage_times(records: pd.DataFrame) -> pd.DataFrame:
    """Jobs, summed and longest wall time, and peak memory per rule, from `benchmark_records`."""
    return (records.groupby("rule").agg(jobs=("seconds", "size"), total_seconds=("seconds", "sum"),
                                        longest_seconds=("seconds", "max"), peak_rss_mb=("max_rss_mb", "max"))
            .reset_index())


def config_sha256(config: dict) -> str:
    """Hash of the configuration as run (after schema defaults): canonical JSON, sorted keys, so the
    same settings give the same hash whatever the YAML's layout or the order of layered files."""
    import hashlib
    import json

    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def run_provenance(config: dict, configfiles, revision: dict, completed: str, run_directory: str) -> dict:
    """What results/provenance.json records about a run: written once by the workflow when its
    tables are complete, and read (never recomputed) by the report, `synthrisk findings` and the
    bundle, so that rendering a run twice gives the same bytes."""
    from ..versions import SYNTHRISK_VERSION as __version__
    from ..versions import library_versions

    return {"synthrisk_version": __version__, "commit": revision.get("commit"), "dirty": revision.get("dirty"),
            "run_directory": run_directory,
            "configfiles": [str(path) for path in configfiles], "config_sha256": config_sha256(config),
            "completed": completed, "seeds": config.get("seeds"), "versions": library_versions(PACKAGES)}
