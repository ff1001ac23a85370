"""The audit's JSON: per risk the verdict, the strongest attack with its reference and interval,
what it means in one sentence and the most exposed subgroups; every measure with its status (a
skipped or failed one with its reason); utility next to the risks; inputs, settings and versions.
Only aggregates and record counts, never a real record."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..io import finite_or_null
from ..measures import calibrated_power
from ..measures.base import CRITERIA, RISKS
from ..measures.policy import LEVELS, SCALES, Policy
from ..measures.runner import Outcome
from . import explain
from .run import SEED

PACKAGES = ("synthrisk", "numpy", "pandas", "scikit-learn", "scipy", "sdmetrics")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _row(table: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in r.items()} for r in table.to_dict("records")]


def _reasons(runs: list[Outcome], names: list[str]) -> str:
    parts = [f"{r.run.label} {r.status}: {r.reason}" for r in runs if r.measure_name in names and r.status != "ok"]
    return "; ".join(dict.fromkeys(parts)) or "no measure of this risk is registered"


def risk_entries(risks: pd.DataFrame, exposed: dict, runs: list[Outcome], measures: dict, data,
                 power: dict | None = None) -> list[dict]:
    """One entry per risk type, measured or not (then with the reasons). `risks`: the risk table;
    `exposed`: per risk, the members its verdict names and the subgroups its attack gets right most
    (`named.exposed`); `measures`: {name: (measure, settings)}, the measure of a risk's strongest
    attack words it; `power`: per risk, what its verdict detected in the calibration study
    (`calibrated_power.quote`)."""
    population = (data.checks or {}).get("same_population") or {}
    entries = []
    for risk, label in RISKS.items():
        names = [name for name, (m, _) in measures.items() if m.risk == risk]
        found = risks[risks["risk"] == risk]
        if found.empty:
            entries.append({"risk": risk, "label": label, "measured": False, "at_risk": None, "level": "not measured",
                            "verdict": f"not measured: {_reasons(runs, names)}", "measures": names, "unreliable": None})
            continue
        row = {k: _clean(v) for k, v in found.iloc[0].items()}
        measure = measures[row["measure"]][0]
        at_risk = row["level"] == LEVELS["at_risk"]
        entry = {
            "risk": risk, "label": label, "measured": True, "at_risk": at_risk, "level": row["level"],
            "verdict": row["verdict"], "meaning": explain.meaning(row, measure),
            "policy": {"threshold": row["threshold"], "scale": SCALES.get(risk), "alpha": row["alpha"],
                       "audit_alpha": row["audit_alpha"], "effect": row["effect"], "effect_low": row["effect_low"],
                       "effect_high": row["effect_high"], "p_holm": row["p_holm"],
                       "detectable_effect": row["detectable_effect"], "decide_factor": row["decide_factor"]},
            "beats": bool(row["beats"]), "n_identified": int(row["n_identified"] or 0),
            "identified": exposed[risk]["identified"],
            "strongest_attack": {k: row[k] for k in ("attack", "measure", "metric", "value", "reference", "excess",
                                                     "ci_low", "ci_high", "tpr_at_1e-02", "tpr_at_1e-03", "tpr_at_1e-01",
                                                     "n_scored", "detail")},
            "n_attacks": row["n_attacks"], "n_attacks_beating": row["n_attacks_beating"], "measures": names,
            "subgroups": exposed[risk]["subgroups"],
            "not_run": _reasons(runs, names) if any(r.measure_name in names and r.status != "ok" for r in runs) else None,
            "calibrated_power": (power or {}).get(risk),
            "unreliable": None}
        # An attack that reads the members against the holdout (membership; RAPID's member excess):
        # when the holdout is another population, any difference between the two files looks like
        # leakage (or hides it).
        if population.get("differs") and _reads_holdout(row):
            told = f"classifier AUC {population['auc']:.3f}, p = {population['p_value']:.2g}"
            if population.get("formatting"):
                entry["unreliable"] = (f"training and holdout records can be told apart ({told}) and write some "
                                       f"columns differently ({'; '.join(population['formatting'])}): this verdict "
                                       "compares the release with records written another way")
                entry["verdict"] = f"{entry['verdict']} (unreliable: the holdout is written unlike the training records)"
            else:
                entry["unreliable"] = (f"training and holdout records do not look like one population ({told}): this "
                                       "verdict compares the release with records of another population")
                entry["verdict"] = f"{entry['verdict']} (unreliable: the holdout is not of the training records' population)"
        entries.append(entry)
    return entries


#: a criterion's level is its worst risk's: at risk, then inconclusive, then below the threshold
_WORST_FIRST = [LEVELS["at_risk"], LEVELS["inconclusive"], LEVELS["below"]]


def criteria_entries(entries: list[dict]) -> list[dict]:
    """The verdicts under the Article 29 Working Party's three criteria (`CRITERIA`): per criterion
    its risks' levels, the worst of them as its own, and the measures read."""
    by_risk = {e["risk"]: e for e in entries}
    out = []
    for criterion, (label, risks) in CRITERIA.items():
        mine = [by_risk[r] for r in risks if r in by_risk]
        levels = [e["level"] for e in mine if e["measured"]]
        level = next((lv for lv in _WORST_FIRST if lv in levels), "not measured")
        if level == LEVELS["below"] and len(levels) < len(risks):
            level = LEVELS["inconclusive"]  # a risk of the criterion was not measured: nothing shows it below
        out.append({"criterion": criterion, "label": label, "level": level,
                    "risks": [{"risk": e["risk"], "label": e["label"], "level": e["level"]} for e in mine],
                    "measures": [name for e in mine for name in e["measures"]]})
    return out


def measure_entries(runs: list[Outcome], measures: dict, verdicts: dict[str, str]) -> list[dict]:
    """Every measure with its runs' status and time, and for a risk measure its own verdict (`verdicts`,
    by name: `verdict.measure_verdicts`)."""
    entries = []
    for name, (measure, settings) in measures.items():
        own = [r for r in runs if r.measure_name == name]
        statuses = {r.status for r in own}
        status = "ok" if "ok" in statuses else ("failed" if "failed" in statuses else "skipped")
        verdict = verdicts.get(name) if measure.risk else None
        # What a size cap changed (a seeded sample of a large file; the interval is the sample's).
        notes = [r.summary.get("subsample_note") for r in own if r.status == "ok"]
        entries.append({
            "measure": name, "title": measure.title, "risk": measure.risk, "status": status,
            "subsample_note": "; ".join(dict.fromkeys(n for n in notes if n)) or None,
            "verdict": verdict if status == "ok" else None,
            "reason": None if status == "ok" else "; ".join(dict.fromkeys(r.reason for r in own if r.reason)),
            "seconds": round(sum(r.seconds for r in own), 2),
            "runs": [{"unit": r.unit, "status": r.status, "reason": r.reason, "seconds": round(r.seconds, 2)}
                     for r in own],
            # its own numbers as its field reads them (synthpop's repU and DiSCO)
            "reported": measure.reported([r.summary for r in own]) if status == "ok" else None,
            "settings": dataclasses.asdict(settings) if dataclasses.is_dataclass(settings) else {}})
    return entries


def _reads_holdout(row: dict) -> bool:
    """The verdict row's `reads_holdout` as a truth value (numpy's bool too; missing: no)."""
    value = row.get("reads_holdout")
    return isinstance(value, (bool, np.bool_)) and bool(value)


def utility_entry(tables: dict[str, pd.DataFrame], measures: dict) -> dict | None:
    """What the measures that are not risks show next to the risks (`Measure.utility`; the first
    that has something), or None."""
    shown = (measure.utility(tables) for measure, _ in measures.values() if measure.risk is None)
    return next((entry for entry in shown if entry is not None), None)


#: what the calibration quote adds when attacks that refit the generator in hand ran
REFITTED = ("With the generator in hand ({name}), the membership verdict also reads {attacks}, which the "
            "pre-registered calibration does not run, so its rates above are of the audit without them: their own "
            "tests are exact when the release never saw its members and Holm takes them into the membership family, "
            "so the audit keeps its family-wise level; they name members only once the exposure evidence has named "
            "someone, so this audit names everyone the audit as it ships names, and how often it finds member copies "
            "is not measured")


def release_entry(entries: list[dict], answer: str, policy: Policy, calibration: str | None = None,
                  refitted: tuple[str, list[str]] | None = None) -> dict:
    """The audit's `answer` to "does this audit support releasing this file?" (yes / no / inconclusive;
    `verdict.release_answer`), with the sentence the page and the command line open with, and how often
    the audit as it ships answered no in its pre-registered calibration (`calibration`:
    `calibrated_power.release_statement`, None under another policy; with `refitted`, (the generator in
    hand, the titles of the attacks that refitted it), what they change)."""
    at_risk = [e["label"] for e in entries if e["level"] == LEVELS["at_risk"]]
    open_ = [e["label"] for e in entries if e["level"] != LEVELS["below"] and e["level"] != LEVELS["at_risk"]]
    # a false "no" and a false "yes" are each at most alpha per audit (synthrisk.measures.policy)
    level = f"at level {policy.alpha:g} per audit"
    if answer == "no":
        why = f"at risk of {', '.join(at_risk)}"
    elif answer == "yes":
        why = "every risk is below its threshold"
    else:
        why = f"not shown to be below the threshold: {', '.join(open_)}"
    sentence = f"Does this audit support releasing this file? {answer.capitalize()}: {why} ({level})."
    return {"answer": answer, "sentence": sentence, "alpha": policy.alpha,
            "audit_revision": calibrated_power.AUDIT_REVISION,
            "calibration": _with_refits(calibration, refitted)}


def _with_refits(statement: str | None, refitted) -> str | None:
    if statement is None or not refitted:
        return statement
    name, attacks = refitted
    return f"{statement} {REFITTED.format(name=name, attacks=' and '.join(attacks))}."


def refitting_attacks(runs: list[Outcome], generator) -> tuple[str, list[str]] | None:
    """(the generator's name, the titles of the measures that refitted it and ran), or None."""
    titles = list(dict.fromkeys(r.run.measure.title for r in runs
                                if r.status == "ok" and r.run.measure.refits_generator))
    return (generator.name, titles) if generator is not None and titles else None


def build(data, runs: list[Outcome], measures: dict, found, seconds: float, policy: Policy | None = None,
          generator=None) -> dict:
    """The audit's JSON from its runs and their `summary.Summary` (`found`); `seconds`: since the audit
    started (its page, drawn after the JSON, is not counted); `generator`: the generator in hand, when
    the audit refitted it."""
    from ..versions import library_versions

    policy = policy or Policy()
    files = {k: (str(v) if v else None) for k, v in data.files.items()}
    # what the audit as it ships detected in its pre-registered calibration, at the nearest calibrated size
    n_train = len(data.members)
    power = {risk: calibrated_power.quote(risk, n_train, policy) for risk in found.risks["risk"]}
    calibration = calibrated_power.release_statement(n_train, policy)
    entries = risk_entries(found.risks, found.exposed, runs, measures, data, power)
    criteria = criteria_entries(entries)
    release = release_entry(entries, found.answer, policy, calibration, refitting_attacks(runs, generator))
    measured = measure_entries(runs, measures, found.verdicts)
    evidence = _row(found.evidence.drop(columns=["dataset", "generator"]))
    utility = utility_entry(found.tables, measures)
    document = {
        "inputs": {**files, "schema": data.schema_path or (None if data.inferred_yaml else data.schema.origin),
                   "schema_inferred": data.inferred_yaml is not None,
                   "n_train": len(data.members), "n_holdout": len(data.holdout), "n_synthetic": len(data.synthetic),
                   "n_aux": 0 if data.aux is None else len(data.aux),
                   "generator": None if generator is None else generator.spec,
                   "checks": data.checks, "notes": list(data.notes),
                   "normalised": list(data.normalised), "unknown_levels": list(data.unknown_levels)},
        "schema": data.schema.to_dict(),
        "seed": SEED,
        "policy": {**policy.to_dict(), "statement": policy.statement()},
        "risks": entries,
        "criteria": criteria,
        "release": release,
        "utility": utility,
        "measures": measured,
        "evidence": evidence,
        "seconds": round(seconds, 1),
        "versions": library_versions(PACKAGES),
    }
    return finite_or_null(document)
