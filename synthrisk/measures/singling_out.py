"""Singling-out risk against a control set (Giomi et al. 2023; anonymeter's definitions,
synthrisk.anonymity): queries that single out one synthetic record, checked on the members and on
control records; univariate and multivariate, one job per synthetic dataset.

Summary JSON: `attacks`, one `SinglingOutResult.to_json()` per mode (risk, ci_low, ci_high,
residual, main/control/baseline rates, n_queries, ...). Per-record table: mode, query, member,
singled_out, row_id (ids only)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..anonymity._inputs import DEFAULT_N_ATTACKS, DEFAULT_PERMUTATIONS
from ..settings import setting
from . import _control
from .base import MeasureResult, member_outcomes
from .registry import register_measure
from .wording import control_corrected


def isolated_members(queries: pd.DataFrame, attack: str) -> pd.DataFrame:
    """The outcomes of a singling-out attack from its per-query table: its records are per query,
    not per attacked member, so they list its hits only, the members its queries isolate (never a
    control record), once each."""
    isolated = queries[queries["member"].astype(bool) & queries["singled_out"].astype(bool)]
    return member_outcomes(attack, isolated["row_id"].drop_duplicates(), True)


@register_measure
class SinglingOut(_control.ControlSetMeasure):
    name = "singling_out"
    title = "Singling out against a control set"
    risk = "singling_out"
    record_columns = ("mode", "query", "member", "singled_out", "row_id")
    order = 60
    outputs = _control.outputs("singling_out", "singling-out risk (vs control)")

    @dataclass(frozen=True)
    class Settings:
        modes: tuple[str, ...] = setting(("univariate", "multivariate"), "the attacks: queries on one column, "
                                         "or on n_cols columns", minItems=1, uniqueItems=True,
                                         items={"enum": ["univariate", "multivariate"]})
        n_attacks: int = setting(DEFAULT_N_ATTACKS, "singling-out queries per mode", minimum=1)
        n_cols: int = setting(3, "conditions per multivariate query", minimum=1)
        confidence: float = setting(0.95, "of the risk's interval", exclusiveMinimum=0, exclusiveMaximum=1)
        permutations: int = setting(DEFAULT_PERMUTATIONS, "member/control relabellings of the test (p >= 1 / (B + 1))",
                                    minimum=1)

    def run(self, data, settings, unit):
        from ..anonymity import singling_out

        members, control = _control.members_and_control(data)
        attacks, records, outcomes = [], [], []
        for mode in settings.modes:
            result = _control.run_or_skip(singling_out, members, data.synthetic, control, schema=data.schema,
                                          n_attacks=settings.n_attacks, mode=mode, n_cols=settings.n_cols,
                                          seed=data.seed, confidence=settings.confidence,
                                          permutations=settings.permutations)
            label = f"singling out ({mode})"
            attacks.append({**result.to_json(), "label": label})
            records.append(result.records.assign(mode=mode))
            outcomes.append(isolated_members(result.records, label))
        return MeasureResult({"attacks": attacks}, pd.concat(records, ignore_index=True)[list(self.record_columns)],
                             pd.concat(outcomes, ignore_index=True))

    # --- the steward's audit ---------------------------------------------------------------------

    def explain(self, row: dict) -> str:
        return control_corrected(row, "isolates a single training record with a query written from the release")
