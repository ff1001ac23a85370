"""The audit's verdicts pinned on fixed fixtures, so that a change of the layer above the methods
(issue #43: the in-memory audit, the measures' shape) shows that behaviour is unchanged: the same
levels, strongest attacks, effects, intervals, people named and every attack's evidence row as
tests/data/golden_audit.json recorded. A change meant to move a number regenerates the file
(`SYNTHRISK_WRITE_GOLDEN=1 pytest tests/unit/test_audit_golden.py`) and says so in its commit."""

from __future__ import annotations

import json
import math
import os

import pytest
from helpers import ROOT

import synthrisk
from synthrisk.generators.run import run_generator

GOLDEN = ROOT / "tests" / "data" / "golden_audit.json"
RELEASES = {"identity": {}, "leaky": {"fraction": 0.5}, "independent": {}}
NUMBERS = ("value", "reference", "ci_low", "ci_high", "p_value")


def _rounded(value):
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.10g}")
    return value


def _pinned(report: dict) -> dict:
    risks = {e["risk"]: {"level": e["level"], "attack": (e.get("strongest_attack") or {}).get("attack"),
                         "value": _rounded((e.get("strongest_attack") or {}).get("value")),
                         "effect_low": _rounded((e.get("policy") or {}).get("effect_low")),
                         "effect_high": _rounded((e.get("policy") or {}).get("effect_high")),
                         "n_identified": e.get("n_identified"),
                         "identified": sorted(int(m["row_id"]) for m in e.get("identified") or [])}
             for e in report["risks"]}
    evidence = sorted(([row["measure"], str(row["attack"]), *(_rounded(row.get(k)) for k in NUMBERS)]
                       for row in report["evidence"]), key=lambda r: (r[0], r[1]))
    return {"answer": report["release"]["answer"], "risks": risks, "evidence": evidence}


@pytest.fixture(scope="module")
def audits(adult, adult_schema, cheap_audit):
    sample = adult.sample(800, random_state=3).reset_index(drop=True)
    members, holdout = sample.iloc[:400].reset_index(drop=True), sample.iloc[400:].reset_index(drop=True)
    found = {}
    for backend, params in RELEASES.items():
        release, status = run_generator(backend, {"backend": backend, "params": params}, members, adult_schema,
                                        n=400, seed=0)
        assert status["status"] == "ok"
        found[backend] = _pinned(synthrisk.audit(members, release, holdout, schema=adult_schema).to_dict())
    return found


def test_the_audits_verdicts_are_the_recorded_ones(audits):
    if os.environ.get("SYNTHRISK_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(audits, indent=1, sort_keys=True) + "\n")
    recorded = json.loads(GOLDEN.read_text())
    for release in RELEASES:
        assert audits[release]["answer"] == recorded[release]["answer"], release
        assert audits[release]["risks"] == recorded[release]["risks"], release
        assert audits[release]["evidence"] == recorded[release]["evidence"], release
