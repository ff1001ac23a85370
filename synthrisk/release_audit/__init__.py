"""`synthrisk audit`: every applicable measure on files a user already has (training records, the
synthetic release, optionally a holdout and a schema), with no generator and no workflow, written
as one self-contained HTML page and one JSON for the person deciding on the release.

    from synthrisk.release_audit import audit
    report = audit("members.csv", "release.csv", "audit/", holdout="holdout.csv", schema="schema.yaml")

On DataFrames, without a folder, use `synthrisk.audit` (`synthrisk.api`).
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from ..measures.base import GeneratorInHand
from ..measures.policy import Policy, as_policy
from ..outputs import AuditFolder
from .inputs import AuditInput, read_inputs
from .result import Audit
from .run import audit_measures, progress, run_measures
from .summary import summarise

__all__ = ["Audit", "AuditInput", "audit", "compute", "read_inputs", "write_audit"]

#: the files the audit writes into its output folder
HTML, JSON, SCHEMA, TABLES = "audit.html", "audit.json", "schema.yaml", "tables"


def compute(data: AuditInput, bar: bool | None = None, policy: Policy | None = None, say=None,
            generator: GeneratorInHand | None = None, shadow_fits: int | None = None) -> Audit:
    """Every measure on checked input, in memory: the measures' runs, tables and verdicts, the
    figures and the page. Shared by the command (`write_audit`) and the Python API
    (`synthrisk.audit`); nothing is written. `say`: where the step lines go (default: stderr,
    `run.progress`). `generator`: the generator that made the release (`generator.generator_in_hand`),
    refitted `shadow_fits` times by the shadow-model attack (default: its settings')."""
    from . import page, report

    say = say or progress
    start = time.perf_counter()
    policy = policy or Policy()
    measures = audit_measures(policy, shadow_fits, generator)
    for note in data.notes:
        say(f"note: {note}")
    inputs = input_table(data)
    runs = run_measures(data, measures, bar, say, generator=generator)
    say("summarising")
    found = summarise(runs, measures, data, policy)
    found = found._replace(tables={**found.tables, INPUT_TABLE: inputs})
    result = report.build(data, runs, measures, found, time.perf_counter() - start, policy, generator)
    return Audit.of(result, evidence=found.evidence, policy=policy, tables=found.tables, schema=data.schema,
                    html=page.render(result, runs, measures, found))


#: the table of what the typing pass normalised and which unknown levels it found, beside the measures'
INPUT_TABLE = "inputs"
INPUT_COLUMNS = ["file", "path", "column", "check", "count", "share", "levels"]


def input_table(data: AuditInput):
    """One row per file, column and normalisation (`check`: the change made), and per column with
    levels its reference records never have (`check`: unknown levels, with their share)."""
    import pandas as pd

    rows = [{"file": e["file"], "path": e["path"], "column": e["column"], "check": e["change"], "count": e["count"]}
            for e in data.normalised]
    rows += [{"file": e["file"], "path": e["path"], "column": e["column"], "check": "unknown levels",
              "count": e["count"], "share": e["share"], "levels": " | ".join(e["levels"][:20])}
             for e in data.unknown_levels]
    return pd.DataFrame(rows, columns=INPUT_COLUMNS)


def write_audit(data: AuditInput, out: str | Path, folder: AuditFolder | None = None, bar: bool | None = None,
                policy: Policy | None = None, generator: GeneratorInHand | None = None,
                shadow_fits: int | None = None) -> dict:
    """Run the audit on checked input and write out/audit.html, out/audit.json, out/tables/*.csv
    (the measures' tables) and, for an inferred schema, out/schema.yaml. Returns the JSON.

    Everything is written into a staging folder inside `out`; publishing checks every target first
    and then moves them into place, with the completion marker last (`synthrisk.outputs.AuditFolder`):
    a refused publish leaves `out` as it was, a killed audit leaves no half-written page, and no file
    synthrisk did not write is touched."""
    from ..io import write_json

    if folder is None:
        with _folder(out, data.files, data.schema_path, data.schema_path is None) as opened:
            return write_audit(data, out, opened, bar, policy, generator, shadow_fits)
    staging = folder.staging
    names = [HTML, JSON, TABLES]
    if data.schema_path is None:
        (staging / SCHEMA).write_text(data.inferred_yaml or yaml.safe_dump(data.schema.to_dict(), sort_keys=False))
        names.append(SCHEMA)
        progress(f"schema inferred from {data.files['train']}: it will be written to {Path(out) / SCHEMA} (edit it "
                 "and rerun with --schema)")
    found = compute(data, bar, policy, generator=generator, shadow_fits=shadow_fits)
    result = found.to_dict()
    write_json(result, staging / JSON)
    (staging / HTML).write_text(found.html)
    (staging / TABLES).mkdir()
    for name, table in found.tables.items():
        table.to_csv(staging / TABLES / f"{name}.csv", index=False)
    folder.publish(names, {"command": "audit", "inputs": result["inputs"], "seconds": result["seconds"]})
    progress(f"done in {result['seconds']:.0f} s: {Path(out) / HTML}, {Path(out) / JSON}")
    return result


def _folder(out, files: dict, schema: str | None, writes_schema: bool) -> AuditFolder:
    targets = [HTML, JSON, TABLES] + ([SCHEMA] if writes_schema else [])
    return AuditFolder(out, {**{f"--{k}": v for k, v in files.items()}, "--schema": schema}, targets)


def audit(train, synthetic, out, holdout=None, schema=None, sensitive=None, read_options=None, aux=None,
          bar: bool | None = None, policy: Policy | str | Path | None = None, generator=None,
          generator_config=None, shadow_fits: int | None = None) -> dict:
    """Lock `out` (refusing a folder that is not writable, that another audit writes into, or whose
    targets hold files synthrisk did not write; the previous audit's files stay until this one
    publishes), read and check the files (errors name the file and column), then `write_audit`.
    `read_options` (a mapping of `synthrisk.io.ReadOptions`) apply to every text file; by default a
    schema's `source.options` do. `bar`: a progress bar on stderr (default: when stderr
    is a terminal). `policy`: a `Policy`, its mapping, or the path of a policy YAML (default: `Policy()`, the
    published 0.09 threshold at family-wise level 0.05). `generator` (a backend name or
    `module:Class`, with its entry in the YAML file `generator_config`, or the entry as a mapping):
    the generator that made the release; the shadow-model attack refits it `shadow_fits` times
    (default: the `shadow_models` measure's settings)."""
    from .generator import check_shadow_fits, generator_in_hand

    policy = as_policy(policy)
    shadow_fits = check_shadow_fits(shadow_fits, generator)  # first: the generator's check may take seconds
    in_hand = generator_in_hand(generator, generator_config)
    files = {"train": str(train), "synthetic": str(synthetic), "holdout": str(holdout) if holdout else None,
             "aux": str(aux) if aux else None}
    with _folder(out, files, str(schema) if schema else None, not schema) as folder:
        data = read_inputs(files["train"], files["synthetic"], files["holdout"], str(schema) if schema else None,
                           sensitive, read_options=read_options, aux=files["aux"])
        return write_audit(data, out, folder, bar, policy, in_hand, shadow_fits)
