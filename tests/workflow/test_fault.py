"""Fault test (issue #18): SIGKILL a running `make run` (make, Snakemake and its running jobs) during
the attack jobs, rerun the README's command unchanged, and check that it recovers by itself (the
stale Snakemake lock and the killed jobs' incomplete outputs) and that every output file reads."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT, tiny_config

# The environment running these tests (on CI: the repository's .venv that `make test` built).
VENV = Path(sys.executable).parent.parent


def make_run(workdir: Path, config: Path, **popen):
    """The README's `make run` for `config` in `workdir`, with this test's environment as the
    Makefile's .venv (-o: never rebuild it from here)."""
    targets = "results/tables/rapid.csv results/tables/mia.csv"
    command = ["make", "--no-print-directory", "-C", str(ROOT), "-o", f"{VENV}/.installed", "run", f"VENV={VENV}",
               f"CONFIG={config}", f"WORKDIR={workdir}", "CORES=2", f"TARGETS={targets}"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Snakemake runs its jobs in their own process groups)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _session_alive(session: int) -> bool:
    """Whether any process is left in the process group `session` (the killed run's)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.getpgid(int(entry.name)) == session:
                    return True
    return False


@pytest.fixture
def workdir(tmp_path) -> Path:
    """An empty run directory for `make run` (skipped without the project's environment)."""
    if not (VENV / "bin/snakemake").exists():
        pytest.skip(f"no snakemake in {VENV}")
    path = tmp_path / "run"
    path.mkdir()
    return path


def attack_jobs_started(workdir: Path) -> bool:
    logs = workdir / "results/logs"
    return any((logs / stage).rglob("*.log") for stage in ("measures", "rapid", "mia")) if logs.exists() else False


@pytest.mark.slow
def test_killed_run_recovers_with_the_readme_command(tmp_path, workdir):
    config = tiny_config(tmp_path, generators={"cart": {"backend": "cart"}, "independent": {"backend": "independent"}})

    first = make_run(workdir, config, start_new_session=True)
    deadline = time.monotonic() + 600
    while not attack_jobs_started(workdir):
        assert first.poll() is None, first.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "no attack job started within 10 minutes"
        time.sleep(0.2)
    time.sleep(1.0)  # let the attack jobs write part of their outputs
    assert first.poll() is None, "the run ended before it could be killed"
    processes = [first.pid] + descendants(first.pid)  # make, flock, make, Snakemake, its running jobs
    assert len(processes) >= 5, processes
    # Kill the whole session (a job Snakemake starts between listing and killing would otherwise
    # survive, hold the run's OS lock and make the rerun wait), then anything left, until none is.
    for _ in range(50):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        for pid in [first.pid] + descendants(first.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        if first.poll() is not None and not descendants(first.pid) and not _session_alive(first.pid):
            break
    first.wait()
    assert any((workdir / ".snakemake/locks").iterdir()), "the kill left no Snakemake lock to recover from"

    second = make_run(workdir, config)
    output, _ = second.communicate(timeout=1800)
    assert second.returncode == 0, output[-4000:]
    assert "removing the lock left by an interrupted run" in output

    results = workdir / "results"
    assert (results / "tables/rapid.csv").exists() and (results / "tables/mia.csv").exists()
    for path in results.rglob("*"):
        if path.suffix == ".parquet":
            pd.read_parquet(path)
        elif path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".csv":
            pd.read_csv(path)
    runs = [json.loads(p.read_text()) for p in (results / "rapid").rglob("*.json")]
    assert runs and all(run["status"] == "ok" for run in runs)
    assert not list(results.rglob(".*.part"))  # no half-written file left by the kill


@pytest.mark.slow
def test_a_second_run_in_the_same_workdir_is_refused(tmp_path, workdir):
    """The lock that lets `make run` remove a stale Snakemake lock also keeps two runs apart."""
    holder = subprocess.Popen(["flock", str(workdir / ".synthrisk-run.lock"), "sleep", "60"])
    try:
        time.sleep(0.5)
        second = make_run(workdir, tiny_config(tmp_path))
        output, _ = second.communicate(timeout=120)
        assert second.returncode != 0, output
        assert "is in use by another 'make run'" in output
        assert not (workdir / ".snakemake").exists()
    finally:
        holder.kill()
