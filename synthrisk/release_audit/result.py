"""The audit's result, `Audit`: what the page and `audit.json` of `synthrisk audit` hold, computed
in memory (`synthrisk.release_audit.compute`) and written only when asked (`to_html`, `to_json`)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..data.schema import DatasetSchema
from ..measures.policy import Policy

__all__ = ["Audit"]

#: the columns of `Audit.risks`, in order
RISK_COLUMNS = ["risk", "level", "verdict", "attack", "measure", "metric", "value", "reference", "ci_low", "ci_high",
                "p_holm", "threshold", "scale", "effect", "effect_low", "effect_high", "alpha", "decide_factor",
                "detectable_effect", "n_identified", "calibrated_power", "unreliable"]
#: the columns of `Audit.measures`, in order
MEASURE_COLUMNS = ["measure", "title", "risk", "status", "verdict", "reason", "subsample_note", "seconds", "reported"]
#: the columns of `Audit.identified`, in order
IDENTIFIED_COLUMNS = ["risk", "row_id", "attack", "score", "p_value", "named_by"]


@dataclass(frozen=True, eq=False)  # frames have no truth value: two audits compare by identity
class Audit:
    """One audit of a synthetic release, computed in memory: what the page and `audit.json` of
    `synthrisk audit` hold, as typed fields.

    - `answer`: "yes" (every risk below its threshold), "no" (a risk at risk) or "inconclusive", the
      answer to "does this audit support releasing this file?"; `sentence` says it with the reason;
    - `risks`: one row per risk (`RISK_COLUMNS`): its level (at risk / below the threshold /
      inconclusive / not measured), the verdict sentence, the attack shown with its value, reference
      and interval, the Holm-adjusted p-value, the threshold and the scale it is compared on, the
      effect and its two one-sided bounds, the level of the risk's Holm family, how many times the records would decide
      an inconclusive risk, the smallest effect the audit detects with the policy's power, the members
      named, what the verdict detected in the calibration study at the nearest calibrated size (when
      the policy reads risks at the study's level), and a warning when the verdict compares the
      release with records of another population;
    - `identified`: the training records the audit names (false-discovery rate controlled), one row
      per risk and record: risk, row_id (row of the training file), attack, score, p_value, and
      `named_by`: for singling out, linkability and inference, the membership attack that named the
      person (the score and p-value are its), empty where the attack names them itself;
    - `measures`: one row per measure (`MEASURE_COLUMNS`): whether it ran (ok / skipped / failed, with
      the reason), its own verdict, what a size cap changed, its seconds, and its own numbers as its
      field reads them (`reported`: synthpop's repU and DiSCO; DCR's readings beside the holdout's;
      the shadow models' targets; the per-person evidence's two tests beside their references);
    - `evidence`: every attack against its reference (one row per attack), the rows the verdicts are
      read from (`synthrisk.measures.base.EVIDENCE_COLUMNS`);
    - `utility`: column shapes, pair trends and train-on-synthetic/test-on-real efficacy (None
      without a holdout); `notes`: what the input checks found (small files, overlaps, another
      population, changed roles); `policy`: the release policy the levels are read against;
    - `tables`: the measures' tables by name (e.g. `tables["dcr"]`); `schema`: the schema the data were
      checked against (given, or inferred from the training records); `html`: the self-contained page.

    `to_json()` and `to_dict()` give the audit's JSON document; `to_html(path)` writes the page. Both
    are what the audit computed: the fields are the audit's own copies, and a field changed or
    replaced (`dataclasses.replace`) is not written back into them."""

    answer: str
    sentence: str
    risks: pd.DataFrame = field(repr=False)
    identified: pd.DataFrame = field(repr=False)
    measures: pd.DataFrame = field(repr=False)
    evidence: pd.DataFrame = field(repr=False)
    utility: dict | None = field(repr=False)
    notes: tuple[str, ...] = field(repr=False)
    policy: Policy = field(repr=False)
    tables: dict[str, pd.DataFrame] = field(repr=False)
    schema: DatasetSchema = field(repr=False)
    html: str = field(repr=False)
    #: the JSON document (`to_dict`, `to_json`)
    _document: dict = field(repr=False)

    @classmethod
    def of(cls, document: dict, *, evidence: pd.DataFrame, policy: Policy, tables: dict[str, pd.DataFrame],
           schema: DatasetSchema, html: str) -> Audit:
        """The audit from its JSON document and the in-memory objects it was built from (how
        `synthrisk.audit` makes it; a user never needs to)."""
        return cls(answer=document["release"]["answer"], sentence=document["release"]["sentence"],
                   risks=risk_frame(document["risks"]), identified=identified_frame(document["risks"]),
                   measures=measure_frame(copy.deepcopy(document["measures"])),
                   evidence=evidence.drop(columns=["dataset", "generator"], errors="ignore").reset_index(drop=True),
                   utility=copy.deepcopy(document["utility"]), notes=tuple(document["inputs"]["notes"]),
                   policy=policy,
                   tables=tables, schema=schema, html=html, _document=document)

    def to_dict(self) -> dict:
        """The audit's JSON document as a mapping (a copy): what `audit.json` holds, with the inputs,
        the schema, the settings of every measure and the library versions beside the fields above."""
        return copy.deepcopy(self._document)

    def to_json(self, path: str | Path | None = None) -> str:
        """The audit as JSON text (what `audit.json` holds); also written to `path` when given (never
        over a file synthrisk did not write)."""
        text = json.dumps(self._document, indent=2, allow_nan=False)
        if path is not None:
            _write(path, text)
        return text

    def to_html(self, path: str | Path) -> Path:
        """Write the self-contained page (figures inline) to `path`; a file synthrisk did not write is
        never overwritten. Returns the path."""
        return _write(path, self.html)

    def __repr__(self) -> str:
        inputs = self._document["inputs"]
        lines = [f"Audit of {inputs['n_synthetic']} synthetic records against {inputs['n_train']} training and "
                 f"{inputs['n_holdout']} holdout records ({self.policy.statement()})", self.sentence]
        lines += [f"  {entry['label']}: {entry['verdict']}" for entry in self._document["risks"]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return self.risks[["risk", "level", "attack", "value", "reference", "ci_low", "ci_high", "threshold"]].to_html(
            index=False, na_rep="", float_format=lambda v: f"{v:.3f}")


def risk_frame(entries: list[dict]) -> pd.DataFrame:
    """`Audit.risks` from the document's risk entries."""
    rows = []
    for entry in entries:
        attack = entry.get("strongest_attack") or {}
        policy = entry.get("policy") or {}
        rows.append({"risk": entry["risk"], "level": entry["level"], "verdict": entry["verdict"],
                     **{k: attack.get(k) for k in ("attack", "measure", "metric", "value", "reference", "ci_low",
                                                   "ci_high")},
                     **{k: policy.get(k) for k in ("p_holm", "threshold", "scale", "effect", "effect_low",
                                                   "effect_high", "alpha", "decide_factor", "detectable_effect")},
                     "n_identified": entry.get("n_identified"),
                     "calibrated_power": entry.get("calibrated_power"), "unreliable": entry.get("unreliable")})
    return pd.DataFrame(rows, columns=RISK_COLUMNS)


def identified_frame(entries: list[dict]) -> pd.DataFrame:
    """`Audit.identified` from the document's risk entries."""
    rows = [{"risk": entry["risk"], "named_by": "", **member} for entry in entries
            for member in entry.get("identified") or []]
    return pd.DataFrame(rows, columns=IDENTIFIED_COLUMNS)


def measure_frame(entries: list[dict]) -> pd.DataFrame:
    """`Audit.measures` from the document's measure entries."""
    return pd.DataFrame([{k: m.get(k) for k in MEASURE_COLUMNS} for m in entries], columns=MEASURE_COLUMNS)


def _write(path: str | Path, text: str) -> Path:
    """Write the page or the JSON in one step (a temporary file beside `path`, renamed over it) and
    record it in the folder's manifest, where every synthrisk command, the audit included, finds it.
    Refused (a `DataError`) when `path` holds a file synthrisk did not write."""
    from ..outputs import check_output_file, write_file

    path = check_output_file(path, {}, option="path")
    return write_file(path, text, command="synthrisk.audit", option="path")
