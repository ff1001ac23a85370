"""`synthrisk audit`: every applicable measure on files a user already has (training records, the
synthetic release, optionally a holdout and a schema), with no generator and no workflow, written
as one self-contained HTML page and one JSON for the person deciding on the release.

    from synthrisk.audit import audit
    report = audit("members.csv", "release.csv", "audit/", holdout="holdout.csv", schema="schema.yaml")
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import yaml

from .inputs import AuditInput, read_inputs
from .run import audit_measures, progress, run_measures, summarise

__all__ = ["AuditInput", "audit", "read_inputs", "write_audit"]

#: the files the audit writes into its output folder
HTML, JSON, SCHEMA, TABLES = "audit.html", "audit.json", "schema.yaml", "tables"


def write_audit(data: AuditInput, out: str | Path) -> dict:
    """Run the audit on checked input and write out/audit.html, out/audit.json, out/tables/*.csv
    (the measures' tables) and, for an inferred schema, out/schema.yaml. Returns the JSON."""
    import shutil

    from ..io import write_json
    from . import page, report

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if data.schema_path is None:
        # Written first: an audit stopped halfway still leaves the schema to edit and rerun with.
        (out / SCHEMA).write_text(data.inferred_yaml or yaml.safe_dump(data.schema.to_dict(), sort_keys=False))
        progress(f"schema inferred from {data.files['train']}: written to {out / SCHEMA} (edit it and rerun with "
                 "--schema)")
    start = time.perf_counter()
    measures = audit_measures()
    with tempfile.TemporaryDirectory(prefix="synthrisk-audit-") as tmp:
        work = Path(tmp)
        runs = run_measures(data, work, measures)
        progress("summarising")
        evidence, risks = summarise(runs, measures, work)
        page.write_figures(evidence, work / "figures")
        result = report.build(data, runs, measures, evidence, risks, work, time.perf_counter() - start)
        write_json(result, out / JSON)
        page.render(result, work / "figures", out / HTML)
        if (out / TABLES).exists():
            shutil.rmtree(out / TABLES)
        shutil.copytree(work / "tables", out / TABLES, ignore=shutil.ignore_patterns("*.tex", "*.md"))
    progress(f"done in {result['seconds']:.0f} s: {out / HTML}, {out / JSON}")
    return result


def audit(train, synthetic, out, holdout=None, schema=None, sensitive=None) -> dict:
    """Read and check the files (errors name the file and column), then `write_audit`."""
    return write_audit(read_inputs(str(train), str(synthetic), str(holdout) if holdout else None,
                                   str(schema) if schema else None, sensitive), out)
