"""Inference risk against a control set (Giomi et al. 2023; synthrisk.anonymity): the attacker
guesses a sensitive attribute from the nearest synthetic record on the other quasi-identifiers;
success on the members against the control records, per sensitive attribute. One job per
synthetic dataset. (RAPID measures attribute inference with a model attacker against a chance
floor; this is the control-set reading of the same risk.)

Summary JSON: `attacks`, one `InferenceResult.to_json()` per sensitive attribute. Per-record
table: secret, row_id, member, correct."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..anonymity._inputs import DEFAULT_N_ATTACKS
from ..settings import setting
from . import _control
from .base import MeasureResult, hit_outcomes
from .registry import register_measure
from .wording import control_corrected


@register_measure
class Inference(_control.ControlSetMeasure):
    name = "inference"
    title = "Attribute inference against a control set"
    risk = "attribute_inference"
    record_columns = ("secret", "row_id", "member", "correct")
    order = 80
    outputs = _control.outputs("inference", "inference risk (vs control, largest over attributes)")

    @dataclass(frozen=True)
    class Settings:
        n_attacks: int = setting(DEFAULT_N_ATTACKS, "records attacked per secret", minimum=1)
        tolerance: float = setting(0.05, "continuous secrets: a guess within this relative error is correct",
                                   minimum=0)
        secrets: tuple[str, ...] | None = setting(None, "the columns guessed (null: the schema's sensitive columns)",
                                                  minItems=1)
        confidence: float = setting(0.95, "of the risk's interval", exclusiveMinimum=0, exclusiveMaximum=1)

    def run(self, data, settings, unit):
        from ..anonymity import inference

        members, control = _control.members_and_control(data)
        attacks, records, outcomes = [], [], []
        for secret in settings.secrets or data.schema.sensitive:
            result = _control.run_or_skip(inference, members, data.synthetic, control, schema=data.schema, secret=secret,
                                          n_attacks=settings.n_attacks, seed=data.seed, tolerance=settings.tolerance,
                                          confidence=settings.confidence)
            label = f"nearest synthetic record -> {secret}"
            attacks.append({**result.to_json(), "label": label})
            records.append(result.records.assign(secret=secret))
            outcomes.append(hit_outcomes(result.records, "correct", label))
        return MeasureResult({"attacks": attacks}, pd.concat(records, ignore_index=True)[list(self.record_columns)],
                             pd.concat(outcomes, ignore_index=True))

    # --- the steward's audit ---------------------------------------------------------------------

    def explain(self, row: dict) -> str:
        return control_corrected(row, "guesses a training record's sensitive value from its nearest synthetic record")
