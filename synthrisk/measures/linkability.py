"""Linkability risk against a control set (Giomi et al. 2023; synthrisk.anonymity): the attacker
holds two halves of a record's quasi-identifiers from two sources and links them through their
nearest synthetic records; success on the members against the control records. One job per
synthetic dataset.

Summary JSON: `attacks`, one `LinkabilityResult.to_json()` (risk, interval, rates, aux_cols, ...).
Per-record table: row_id, member, linked."""

from __future__ import annotations

from dataclasses import dataclass

from ..anonymity._inputs import DEFAULT_N_ATTACKS
from ..settings import setting
from . import _control
from .base import MeasureResult, hit_outcomes
from .registry import register_measure
from .wording import control_corrected


@register_measure
class Linkability(_control.ControlSetMeasure):
    name = "linkability"
    title = "Linkability against a control set"
    risk = "linkability"
    record_columns = ("row_id", "member", "linked")
    order = 70
    outputs = _control.outputs("linkability", "linkability risk (vs control)")

    @dataclass(frozen=True)
    class Settings:
        n_attacks: int = setting(DEFAULT_N_ATTACKS, "records the attacker tries to link", minimum=1)
        n_neighbors: int = setting(1, "a link is right when the record's other half is among this many nearest",
                                   minimum=1)
        aux_cols: tuple | None = setting(None, "the two halves of the attacker's columns, [[...], [...]] (null: "
                                         "the quasi-identifiers split in two)", minItems=2, maxItems=2,
                                         items={"type": "array", "items": {"type": "string"}, "minItems": 1})
        confidence: float = setting(0.95, "of the risk's interval", exclusiveMinimum=0, exclusiveMaximum=1)

    def run(self, data, settings, unit):
        from ..anonymity import linkability

        members, control = _control.members_and_control(data)
        aux_cols = tuple(list(half) for half in settings.aux_cols) if settings.aux_cols else None
        result = _control.run_or_skip(linkability, members, data.synthetic, control, schema=data.schema,
                                      aux_cols=aux_cols,
                                      n_attacks=settings.n_attacks, n_neighbors=settings.n_neighbors,
                                      seed=data.seed, confidence=settings.confidence)
        label = f"linkability ({settings.n_neighbors} neighbour{'s' if settings.n_neighbors > 1 else ''})"
        return MeasureResult({"attacks": [{**result.to_json(), "label": label}]}, result.records,
                             hit_outcomes(result.records, "linked", label))

    # --- the steward's audit ---------------------------------------------------------------------

    def explain(self, row: dict) -> str:
        return control_corrected(row, "links the two halves of a training record's columns through the release")
