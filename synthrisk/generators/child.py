"""The child process of a generate job with a time limit (see synthrisk.generators.run).

`python -m synthrisk.generators.child JOB.pkl`: reads the job, touches its `started` file once the
generator is built (the parent's clock starts then), fits and samples, and pickles the result (or
the error's message and traceback) to the job's `result` path. The parent kills this process when
the time is up; nothing here needs to cooperate with that.
"""

from __future__ import annotations

import importlib
import logging
import pickle
import sys
import traceback
import warnings
from pathlib import Path


def main(job_path: str) -> int:
    with open(job_path, "rb") as handle:
        job = pickle.load(handle)
    for entry in reversed(job["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    logging.captureWarnings(True)
    warnings.simplefilter("default")
    out: dict = {}

    def started():
        # What the parent records even if it has to kill this process: the generator's libraries
        # and privacy guarantee, written before the clock starts.
        partial = Path(job["started"] + ".part")
        with open(partial, "wb") as handle:
            pickle.dump({k: out[k] for k in ("libraries", "privacy") if k in out}, handle)
        partial.replace(job["started"])

    try:
        for module in job["modules"]:
            importlib.import_module(module)
        from .run import fit_and_sample

        fit_and_sample(job["name"], job["spec"], job["train"], job["schema"], job["n"], job["seed"],
                       started=started, out=out)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which records it
        out = {k: v for k, v in out.items() if k in ("libraries", "privacy")}
        out.update(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=20))
        traceback.print_exc(file=sys.stdout)
    sys.stdout.flush()
    partial = Path(job["result"] + ".part")
    with open(partial, "wb") as handle:
        pickle.dump(out, handle)
    partial.replace(job["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
