"""The workflow on a real SLURM: a single-node cluster on localhost (tests/slurm/single_node.sh),
the slurm executor plugin with the repository's profile, and the same tables as a local run."""

import os
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT, snakemake, tiny_config

JOBCOMP = Path("/var/log/slurm/jobcomp.log")
# Timing columns differ between any two runs; everything else must match exactly.
TIMING_COLUMNS = {"fit_seconds"}


@pytest.fixture(scope="module")
def slurm_cluster():
    if os.geteuid() != 0:
        pytest.skip("starting slurmctld/slurmd and installing Debian's slurm-wlm needs root")
    done = subprocess.run([str(ROOT / "tests/slurm/single_node.sh"), "start"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    yield
    subprocess.run([str(ROOT / "tests/slurm/single_node.sh"), "stop"], capture_output=True)


def _tables(workdir: Path) -> dict[str, pd.DataFrame]:
    return {path.name: pd.read_csv(path).drop(columns=TIMING_COLUMNS, errors="ignore")
            for path in sorted((workdir / "results/tables").glob("*.csv"))}


def _jobcomp_records(workdir: Path) -> list[str]:
    lines = JOBCOMP.read_text().splitlines() if JOBCOMP.exists() else []
    return [line for line in lines if f"WorkDir={workdir} " in line or line.endswith(f"WorkDir={workdir}")]


@pytest.mark.slow
def test_slurm_run_goes_through_slurm_and_matches_a_local_run(slurm_cluster, tmp_path):
    generators = {"cart": {"backend": "cart"}, "independent": {"backend": "independent"},
                  "broken": {"backend": "sdv", "model": "NoSuchSynthesizer"}}
    local, cluster = tmp_path / "local", tmp_path / "slurm"
    local.mkdir(), cluster.mkdir()
    snakemake(local, tiny_config(local, generators), "--keep-going")
    done = snakemake(
        cluster, tiny_config(cluster, generators), "--profile", str(ROOT / "workflow/profiles/slurm"),
        # This test cluster keeps no accounting database, so job states come from squeue; the
        # account flag is skipped for the same reason. The short first poll keeps the test quick.
        "--slurm-status-command", "squeue", "--slurm-no-account", "--slurm-init-seconds-before-status-checks", "2",
        "--default-resources", "slurm_partition=main", "mem_mb=1024", "runtime=20", "--jobs", "4",
        # Group jobs (a generator with its attacks) must fit one node of this 2-core cluster.
        "--cores", "2",
    )
    log = done.stdout + done.stderr
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", log)
    records = _jobcomp_records(cluster)
    # One cluster job per synthetic dataset (its attacks grouped with it) plus the DP jobs.
    assert len(submitted) >= 3 + 2, log[-3000:]
    assert len(records) >= len(submitted), (submitted, records)
    assert all("JobState=COMPLETED" in line for line in records), records
    local_tables, cluster_tables = _tables(local), _tables(cluster)
    assert set(local_tables) == set(cluster_tables) and "summary.csv" in local_tables
    for name, table in local_tables.items():
        pd.testing.assert_frame_equal(table, cluster_tables[name], obj=name)
    assert (cluster / "results/report/index.html").exists()
