"""MAMA-MIA on synthcity's PrivBayes (Golob et al. 2025, as `synthrisk.mia.mama_mia` on MST): the
focal points are the attribute sets PrivBayes measures, a child with its parents, and records are
scored on the values PrivBayes itself counts.

- **Focal points.** PrivBayes first chooses a Bayesian network (each column's parents, by an
  exponential mechanism on mutual information), then releases the noisy distribution of every
  child-and-parents set. The attack runs that choice `runs` times on samples of the real records of the
  training set's size, with the generator's own parameters (`synthrisk.generators.synthcity.privbayes_networks`,
  in synthcity's environment), and weighs each set by the rounds that chose it; the kept sets are those
  reaching f(ε) x the largest weight, with the authors' f and the plugin's ε.
- **Cells.** synthcity 0.2.12's PrivBayes takes every distinct value of a column as a level (a numeric
  column too, through its label encoder), so a record's cell of a set is its exact values there.
- **Hash seeds.** The search iterates over Python sets, so its choice depends on the process's hash
  seed as well as its random generator, and a release was fitted under one hash seed the auditor cannot
  know. The rounds are spread over `PROCESSES` processes, each with its own PYTHONHASHSEED: a stratified
  sample of the generator's own randomness.

Cost: a round is one network search, which grows with the number of parent sets it scores: about 1.5 s
on the simulator's 8 columns, about 20 s on Adult's 13 (1,000 records; docs/methods/mama-mia.md).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.encoding import category_strings
from ..data.schema import DatasetSchema
from ..errors import ConfigError, DataError
from ..generators.environment_fits import records_json
from ..generators.environments import environment_variables

#: processes, each with a hash seed of its own, that share a study's rounds (module doc)
PROCESSES = 5
#: the network searches that find the focal points (a round costs seconds to a minute: module doc)
FOCAL_RUNS = 20


def is_privbayes(spec: dict) -> bool:
    """Whether a config entry is synthcity's PrivBayes plugin (`plugin` beside `backend` or in `params`,
    as the backend takes either)."""
    if not isinstance(spec, dict) or spec.get("backend") != "synthcity":
        return False
    return (spec.get("plugin") or (spec.get("params") or {}).get("plugin")) == "privbayes"


def privbayes_of(spec: dict):
    """The synthcity PrivBayes generator of a config entry, refused for another one."""
    from ..generators.base import make_generator

    if not is_privbayes(spec):
        raise ConfigError(f"MAMA-MIA on PrivBayes: the generator in hand is {spec.get('backend')!r}, plugin "
                          f"{spec.get('plugin')!r}; this attack knows synthcity's privbayes only")
    generator = make_generator(spec, name="privbayes")
    if generator.params.get("compress_dataset"):
        raise ConfigError("MAMA-MIA on PrivBayes: params.compress_dataset makes synthcity drop columns before its "
                          "network search, which the attack does not repeat; remove it")
    return generator


def focal_points(spec: dict, records: pd.DataFrame, schema: DatasetSchema, n: int, runs: int, seed: int,
                 python: str | Path) -> Counter:
    """How many of `runs` PrivBayes network searches, each on `n` records drawn from `records`, chose
    each child-and-parents set (sorted column names), run by the interpreter `python` of synthcity's
    environment. The searches read only the real records and the generator's parameters, so several
    releases audited against the same records in one process (a benchmark's null and its members'
    release) share them: the last answers are kept (`_ANSWERS`)."""
    generator = privbayes_of(spec)
    frame = records[list(schema.columns)]
    key = _digest(frame, schema, generator.params, n, runs, seed, python)
    if key not in _ANSWERS:
        _ANSWERS.clear()
        _ANSWERS[key] = _searched(generator, frame, schema, n, runs, seed, python)
    return Counter(_ANSWERS[key])


#: the focal points of the last search, by a digest of everything they depend on
_ANSWERS: dict[str, Counter] = {}


def _digest(frame: pd.DataFrame, schema: DatasetSchema, params: dict, *rest) -> str:
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    facts = json.dumps([schema.to_dict(), params, [str(r) for r in rest]], sort_keys=True, default=str)
    return hashlib.sha256(rows + facts.encode()).hexdigest()


def _searched(generator, frame: pd.DataFrame, schema: DatasetSchema, n: int, runs: int, seed: int,
              python: str | Path) -> Counter:
    # The backend refuses missing numbers, so a release had none among its members: the searches draw from
    # the complete records (a rule on the pool as a set, which keeps the steps symmetric).
    complete = np.flatnonzero(frame[schema.numeric].notna().all(axis=1).to_numpy())
    rng = np.random.default_rng([seed, 0x9B9B])
    samples = [complete[rng.choice(len(complete), size=min(n, len(complete)), replace=False)].tolist()
               for _ in range(runs)]
    seeds = [int(np.random.SeedSequence([seed, run]).generate_state(1)[0]) for run in range(runs)]
    job = {"schema": schema.to_dict(), "params": dict(generator.params), "records": records_json(frame)}
    weights: Counter = Counter()
    for process in range(min(PROCESSES, runs)):
        mine = range(process, runs, PROCESSES)
        hash_seed = int(np.random.SeedSequence([seed, process, 0x4A54]).generate_state(1)[0])
        found = _search(python, {**job, "samples": [samples[r] for r in mine], "seeds": [seeds[r] for r in mine]},
                        hash_seed)
        for network in found:
            weights.update(tuple(sorted([child, *parents])) for child, parents in network)
    return weights


def _search(python: str | Path, job: dict, hash_seed: int) -> list:
    """One process of network searches in synthcity's environment (data cross as JSON on pipes: the
    audit writes nothing to disk)."""
    env = environment_variables(hash_seed)
    failed = f"MAMA-MIA: synthcity's PrivBayes network search failed in {python}"
    try:
        done = subprocess.run([str(python), "-m", "synthrisk.generators.synthcity"], input=json.dumps(job),
                              capture_output=True, text=True, env=env, check=False)
    except OSError as exc:
        raise DataError(f"{failed}: {exc}") from None
    if done.returncode != 0:
        raise DataError(f"{failed}:\n{done.stderr.strip()[-2000:]}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise DataError(f"{failed}: its answer is not JSON: {done.stdout[:300]!r}") from None


def value_codes(frames: list[pd.DataFrame], schema: DatasetSchema) -> list[dict[str, np.ndarray]]:
    """Each frame's codes of its exact values, column by column, numbered over the frames together:
    the levels synthcity's PrivBayes counts (every distinct value; a missing category its own level)."""
    codes: list[dict] = [{} for _ in frames]
    for column in schema.columns:
        values = [category_strings(f[column]) if schema.is_categorical(column)
                  else f[column].astype("float64").to_numpy(na_value=np.nan) for f in frames]
        numbered, _ = pd.factorize(np.concatenate(values), use_na_sentinel=False)
        for frame_codes, part in zip(codes, np.split(numbered, np.cumsum([len(v) for v in values])[:-1])):
            frame_codes[column] = part
    return codes

