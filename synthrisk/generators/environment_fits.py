"""Fits of a generator that runs in an environment of its own (synthcity's), asked from this process.

An attack that refits the generator in hand hundreds of times (shadow models, the ensemble's shadow
mode) cannot pay the environment's imports at every fit: synthcity's take about 15 s here, as long as
a PrivBayes fit. So one process of that environment's interpreter (`python -m
synthrisk.generators.environment_fits`) serves the fits for as long as the caller holds it
(`EnvironmentFits`, a context manager), each fit being `run_generator` there.

- Requests and answers are one JSON line each, the records as lists of Python values (integers
  exact, missing values null), typed again on arrival by the schema (`DatasetSchema.conform`): no
  data file is written (the process's log goes to a temporary file), and no pickle crosses between
  two pandas versions.
- The process runs with a fixed PYTHONHASHSEED, so the same requests give the same fits (synthcity's
  PrivBayes iterates over sets).
- A failure never escapes, as with `run_generator`: a fit that fails is a `failed` status, and so is
  a process that dies (out of memory, killed) or answers what cannot be read, with the tail of its
  log; the next request starts a new process, up to `DEATHS` deaths in a row (a fit that always runs
  out of memory would otherwise pay the environment's imports at every refit).
- What the environment's libraries print goes to a temporary log, never into the answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pandas as pd

from ..data.schema import INTEGER, DatasetSchema
from ..errors import ConfigError
from .environments import environment_variables

#: characters of the process's log quoted when it dies
LOG_TAIL = 2000
#: deaths of the process in a row after which no new one is started
DEATHS = 3


def records_json(frame: pd.DataFrame) -> dict:
    """A frame as JSON can carry it: columns and rows of Python values, missing ones None. Column by
    column through `object`, so that a nullable integer column stays exact (`to_dict` sends one with
    a missing value through float, and 2**60 + 1 came back as 2**60)."""
    values = frame.astype(object)
    return {"columns": [str(c) for c in frame.columns], "data": values.where(frame.notna(), None).to_numpy().tolist()}


def records_frame(records: dict, schema: DatasetSchema, what: str) -> pd.DataFrame:
    """The frame `records_json` sent, typed by the schema. Integer columns are read as nullable
    integers first: a column of integers and None would otherwise pass through float."""
    frame = pd.DataFrame(records["data"], columns=records["columns"], dtype=object)
    for column, kind in schema.columns.items():
        if kind == INTEGER and column in frame:
            try:
                frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
            except (TypeError, ValueError):  # not integers: the schema's check below names them
                pass
    return schema.conform(frame, what=what)


class EnvironmentFits:
    """`run_generator` in the environment of the interpreter `python`: call it as `run_generator` is
    called, (name, spec, train, schema, n, seed) -> (synthetic, status); it never raises."""

    def __init__(self, python, hash_seed: int | None = None):
        self.python, self.hash_seed = str(python), hash_seed
        self._process: subprocess.Popen | None = None
        self._log = None
        self._deaths, self._last_death = 0, None

    def __enter__(self) -> EnvironmentFits:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the process (it exits when its input closes) and drop its log."""
        if self._process is not None:
            from .run import _kill_group

            try:
                self._process.stdin.close()
                self._process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                _kill_group(self._process)
            self._process.stdout.close()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _started(self) -> subprocess.Popen:
        from .run import _die_with_parent

        if self._process is None:
            self._log = tempfile.TemporaryFile()
            self._process = subprocess.Popen(
                [self.python, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                env=environment_variables(self.hash_seed), text=True, encoding="utf-8", start_new_session=True,
                preexec_fn=_die_with_parent)
        return self._process

    def _ask(self, request: dict) -> dict:
        """The process's answer, or {"died": why} when it ended instead or its answer cannot be read (it
        is then closed), or when it has died `DEATHS` times in a row."""
        from ..io import json_text

        if self._deaths >= DEATHS:
            return {"died": f"not asked: the process of {self.python} died {self._deaths} times in a row; the "
                            f"last time: {self._last_death}"}
        try:
            text = json_text(request) + "\n"
        except (TypeError, ValueError) as exc:  # a value of the entry that JSON cannot hold (a date)
            error = f"the request cannot be sent as JSON: {exc}"
            return {"error": error, "status": {"status": "failed", "error": error}}
        process = self._started()
        try:
            process.stdin.write(text)
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
        except (OSError, ValueError) as exc:  # a broken pipe; an empty or cut-off answer line
            return {"died": self._death(exc)}
        self._deaths = 0
        return answer

    def _death(self, exc: Exception) -> str:
        """Why the process ended (its exit code and log's tail), once it is closed."""
        from .run import _kill_group

        if self._process.poll() is None:  # alive, yet its answer was unreadable
            _kill_group(self._process)
        code = self._process.wait()
        self._log.seek(0)
        tail = self._log.read().decode("utf-8", errors="replace")[-LOG_TAIL:]
        self.close()
        self._deaths += 1
        self._last_death = (f"the process of {self.python} ended with exit code {code} (killed, or out of memory?; "
                            f"{type(exc).__name__}):\n{tail}")
        return self._last_death

    def __call__(self, name: str, spec: dict, train: pd.DataFrame, schema: DatasetSchema, n: int,
                 seed: int) -> tuple[pd.DataFrame, dict]:
        from .run import empty_like_schema

        # the schema's columns only: others (a row_id) mean nothing to a generator and the schema refuses them
        answer = self._ask({"name": name, "spec": spec, "schema": schema.to_dict(),
                            "train": records_json(train[list(schema.columns)]), "n": n, "seed": seed})
        status = answer.get("status") or {"generator": name, "backend": spec.get("backend"), "seed": seed,
                                          "status": "failed", "error": answer.get("died")}
        if status.get("status") != "ok":
            return empty_like_schema(schema, train), status
        try:
            return records_frame(answer["synthetic"], schema, f"synthetic data of generator '{name}'"), status
        except Exception as exc:  # noqa: BLE001 - as run_generator: recorded, the caller goes on
            return empty_like_schema(schema, train), {**status, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}

    def check(self, name: str, spec: dict) -> None:
        """Raise ConfigError when the environment's library refuses the generator's entry (an unknown
        plugin, a parameter it does not take): where the entry comes in, before any fit."""
        answer = self._ask({"check": True, "name": name, "spec": spec})
        if answer.get("died"):
            raise ConfigError(f"its environment could not be asked: {answer['died']}")
        if answer.get("error"):
            raise ConfigError(answer["error"])


def answer(request: dict) -> dict:
    """One request, in the generator's environment: a checked entry ({"error": None or why}) or a fit
    ({"synthetic", "status"})."""
    from .base import make_generator
    from .run import run_generator

    name, spec = request["name"], request["spec"]
    if request.get("check"):
        try:
            make_generator(spec, name=name).check()
        except Exception as exc:  # noqa: BLE001 - the entry's refusal, whatever the library raised
            return {"error": str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"}
        return {"error": None}
    schema = DatasetSchema.from_dict(request["schema"], origin=f"a fit request of generator {name}")
    train = records_frame(request["train"], schema, f"training records of a refit of generator '{name}'")
    synthetic, status = run_generator(name, spec, train, schema, n=int(request["n"]), seed=int(request["seed"]))
    return {"synthetic": records_json(synthetic), "status": status}


def serve() -> int:
    """stdin: one request per line; stdout: one answer per line, and nothing else (what the libraries
    print is sent to stderr, the caller's log). A request it cannot answer is answered with the error,
    and the process goes on."""
    import traceback

    from ..io import json_text

    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    for line in sys.stdin:
        try:
            reply = answer(json.loads(line))
        except Exception as exc:  # noqa: BLE001 - told to the caller as a failed fit or a refused entry
            error = f"{type(exc).__name__}: {exc}"
            reply = {"error": error, "status": {"status": "failed", "error": error,
                                                "traceback": traceback.format_exc(limit=20)}}
        answers.write(json_text(reply) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())
