"""Run one generator job and describe it in a status record, never letting a failure escape.

The workflow promises that one failing generator leaves everyone else's results intact: the job
always writes its parquet (empty on failure, with the schema's columns) and a status JSON that
downstream rules read.

A generator with a `timeout` is fitted and sampled in a child process (a new interpreter,
`python -m synthrisk.generators.child`, its own process group) that is killed when the time is up:
the limit is enforced from outside the fitting code, so no library can swallow it (a SIGALRM
raised inside JAX's garbage-collection callback was, and a 2 s limit let a fit run 20 s). The
child gets the typed training frame and the spec through a pickle and returns the synthetic frame
the same way; it builds the same generator with the same seed, so a timeout changes nothing in the
data. What the child prints goes to the job's log (this process's stdout) line by line. It is the
same for every backend, including the isolated synthcity environment, whose entry point calls
`generate_files` below with that environment's interpreter.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import DataError
from ..versions import library_versions
from .base import _REGISTRY, BUILTIN_BACKENDS, make_generator

CORE_LIBRARIES = ("synthrisk", "numpy", "pandas", "scikit-learn")
#: seconds a child may take to import its libraries and build the generator before the clock of
#: `timeout` starts (torch or synthcity imports take seconds on a loaded machine)
STARTUP_LIMIT = 600.0
POLL_SECONDS = 0.05


class GeneratorTimeout(Exception):
    pass


def empty_like_schema(schema: DatasetSchema, like: pd.DataFrame) -> pd.DataFrame:
    return like.iloc[:0][list(schema.columns)].copy()


def check_training_data(train: pd.DataFrame, what: str = "training data") -> None:
    """A generator needs records to learn from: a header-only file is an error that says so."""
    if len(train) == 0:
        raise DataError(f"{what}: has no rows (a header only); a generator needs training records")


def fit_and_sample(name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int, seed: int,
                   started=None, out: dict | None = None) -> dict:
    """Build, fit and sample in this process: {synthetic, fit_seconds, sample_seconds, privacy, libraries},
    filled into `out` as it goes (so that a failure still tells the generator's libraries).
    `started()` is called once the generator is built, when the time limit starts to count."""
    out = {} if out is None else out
    generator = make_generator(spec, seed=seed, name=name)
    out.update(libraries=tuple(generator.libraries), privacy=generator.privacy())
    if started:
        started()
    start = time.perf_counter()
    generator.fit(train, schema)
    out["fit_seconds"] = round(time.perf_counter() - start, 3)
    start = time.perf_counter()
    out["synthetic"] = generator.sample(n, seed)
    out["sample_seconds"] = round(time.perf_counter() - start, 3)
    return out


def _relay(stream, sink) -> None:
    """Copy the child's output into `sink` (the job's log) as it comes."""
    for line in iter(stream.readline, b""):
        try:
            sink.write(line.decode("utf-8", errors="replace"))
            sink.flush()
        except (ValueError, OSError):  # the sink was closed: keep draining the pipe
            pass
    stream.close()


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the child and everything it started (its own process group)."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _die_with_parent() -> None:  # runs in the child between fork and exec (Linux)
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort: other systems rely on the kill below
        pass


def fit_and_sample_with_deadline(name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int,
                                 seed: int, timeout: float, known: dict | None = None) -> dict:
    """`fit_and_sample` in a child process killed after `timeout` seconds of fit + sample. On a
    timeout, what the child knew before fitting (libraries, privacy) is put into `known`."""
    known = {} if known is None else known
    backend = spec.get("backend")
    # A backend registered in this process outside the built-in modules (a user's module, a test)
    # is imported by the child too.
    modules = [] if backend in BUILTIN_BACKENDS or backend not in _REGISTRY else [_REGISTRY[backend].__module__]
    package_root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="synthrisk-generate-") as tmp:
        job, result, started = Path(tmp, "job.pkl"), Path(tmp, "result.pkl"), Path(tmp, "started")
        with open(job, "wb") as handle:
            pickle.dump({"name": name, "spec": spec, "train": train, "schema": schema, "n": n, "seed": seed,
                         "modules": modules, "sys_path": [package_root] + [p for p in sys.path if p],
                         "result": str(result), "started": str(started)}, handle)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        sys.stdout.flush()
        process = subprocess.Popen([sys.executable, "-m", "synthrisk.generators.child", str(job)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True, preexec_fn=_die_with_parent)
        relay = threading.Thread(target=_relay, args=(process.stdout, sys.stdout), daemon=True)
        relay.start()
        launched, clock = time.monotonic(), None
        try:
            while process.poll() is None:
                now = time.monotonic()
                if clock is None and started.exists():
                    clock = now
                if clock is not None and now - clock > timeout:
                    _kill_group(process)
                    with open(started, "rb") as handle:
                        known.update(pickle.load(handle))
                    raise GeneratorTimeout(f"fit + sample exceeded the time limit of {timeout:g} s; "
                                           "the generator's process was stopped")
                if clock is None and now - launched > STARTUP_LIMIT + timeout:
                    _kill_group(process)
                    raise GeneratorTimeout(f"the generator's process did not start fitting within "
                                           f"{STARTUP_LIMIT + timeout:g} s; it was stopped")
                time.sleep(POLL_SECONDS)
        finally:
            if process.poll() is None:
                _kill_group(process)
            relay.join(timeout=5)
        if not result.exists():
            raise RuntimeError(f"the generator's process ended with exit code {process.returncode} "
                               "without a result (killed, or out of memory?)")
        with open(result, "rb") as handle:
            return pickle.load(handle)


def run_generator(
    name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int, seed: int,
) -> tuple[pd.DataFrame, dict]:
    """Fit on `train` and sample `n` rows; returns (synthetic, status). Never raises on model errors.
    With `timeout` in the spec the fit runs in a child process that is killed at the deadline."""
    status = {
        "generator": name, "backend": spec.get("backend"), "dataset": schema.name, "seed": seed,
        "n_train": len(train), "n_requested": n, "status": "failed", "error": None,
        "fit_seconds": None, "sample_seconds": None, "timeout_seconds": spec.get("timeout"),
    }
    synthetic, out = empty_like_schema(schema, train), {}
    try:
        check_training_data(train)
        if spec.get("timeout"):
            out = fit_and_sample_with_deadline(name, spec, train, schema, n, seed, float(spec["timeout"]), known=out)
        else:
            fit_and_sample(name, spec, train, schema, n, seed, out=out)
        if "error" in out:  # raised in the child: its message and traceback come back as text
            status["error"], status["traceback"] = out["error"], out["traceback"]
        else:
            status["fit_seconds"], status["sample_seconds"] = out["fit_seconds"], out["sample_seconds"]
            synthetic = schema.conform(out["synthetic"], what=f"synthetic data of generator '{name}'")
            status.update(status="ok", n_rows=len(synthetic))
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        status["error"] = f"{type(exc).__name__}: {exc}"
        status["traceback"] = traceback.format_exc(limit=20)
    if "privacy" in out:
        status["privacy"] = out["privacy"]
    status["versions"] = library_versions(CORE_LIBRARIES + tuple(out.get("libraries", ())))
    return synthetic, status


def generate_files(name: str, spec: dict, train_path, schema_path, n: int, seed: int,
                   synthetic_path, status_path) -> dict:
    """One generate job between files: the data-flow contract's synthetic parquet and status JSON.
    Shared by the main environment's rule and the isolated (synthcity) environment's entry point."""
    from ..data import load_schema
    from ..data.split import ROW_ID
    from ..io import read_table, write_json, write_table

    schema = load_schema(schema_path)
    train = read_table(train_path).drop(columns=ROW_ID)
    synthetic, status = run_generator(name, spec, train, schema, n=n, seed=seed)
    print(status.get("traceback") or f"{status['status']}: {len(synthetic)} rows")
    write_table(synthetic, synthetic_path)
    write_json(status, status_path)
    return status


def fit_in_environment(python, name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int,
                       seed: int, hash_seed: int | None = None) -> tuple[pd.DataFrame, dict]:
    """A generate job run by the interpreter `python` of a generator's own environment (synthcity's),
    for studies outside the workflow: the workflow's own job (`generate_files`) between files in a
    temporary folder, with `hash_seed` as PYTHONHASHSEED (synthcity's PrivBayes iterates over sets, so
    a study that reruns fixes it). Returns the synthetic data and its status. Many fits in a row are
    `environment_fits.EnvironmentFits`' (one process for all); the two give the same fit. The schema
    file keeps the columns' order: generators that fit column by column (`cart`, synthcity's PrivBayes)
    fit another model on another order."""
    import json

    import numpy as np
    import yaml

    from ..data.split import ROW_ID
    from ..io import read_table
    from .environments import environment_variables

    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        train.assign(**{ROW_ID: np.arange(len(train))}).to_parquet(where / "train.parquet")
        (where / "schema.yaml").write_text(yaml.safe_dump(schema.to_dict(), sort_keys=False))
        job = [name, spec, str(where / "train.parquet"), str(where / "schema.yaml"), n, seed,
               str(where / "synthetic.parquet"), str(where / "status.json")]
        env = environment_variables(hash_seed)
        code = "import json, sys; from synthrisk.generators.run import generate_files; generate_files(*json.loads(sys.argv[1]))"
        done = subprocess.run([str(python), "-c", code, json.dumps(job)], capture_output=True, text=True, env=env,
                              cwd=folder, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{name}: the generate job in {python} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        status = json.loads((where / "status.json").read_text())
        synthetic = read_table(where / "synthetic.parquet") if status["status"] == "ok" else None
    return (None if synthetic is None else schema.conform(synthetic)), status
