"""RAPID attribute-inference risk as a measure: one job per attacker x sensitive attribute.

Summary JSON: the keys of `RapidResult.to_json()` (DESIGN.md: `rapid`, `n_records`, `n_at_risk`,
`tau`, `attacker`, `sensitive`, `curve`, ...) plus `attribution` (risk by quasi-identifier group).
Per-record table: row_id, score, at_risk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..rapid.settings import RapidSettings
from .base import Figure, Measure, MeasureResult
from .registry import register_measure

PAIR = ["dataset", "generator"]


@register_measure
class Rapid(Measure):
    name = "rapid"
    title = "RAPID attribute-inference risk"
    caption = "rapid.rst"
    risk = "attribute_inference"
    record_columns = ("row_id", "score", "at_risk")
    order = 10
    Settings = RapidSettings
    summary_labels = {"rapid_max": "RAPID_max (attackers beating chance)", "rapid_chance_floor": "RAPID chance floor",
                      "rapid_excess": "RAPID excess over chance", "rapid_verdict": "RAPID verdict"}

    def units(self, schema, settings) -> list[str]:
        """(attacker, sensitive) pairs that apply (logit and the calibrated attackers only for
        categorical targets, linear only for continuous ones), as `{attacker}-{sensitive}`:
        attacker names never contain '-', so the first '-' splits them."""
        from ..rapid.attackers import applicable

        return [f"{attacker}-{sensitive}" for sensitive in schema.sensitive for attacker in settings.attackers
                if applicable(attacker, schema.is_categorical(sensitive))]

    def unit_key(self, unit: str) -> dict:
        attacker, sensitive = unit.split("-", 1)
        return {"attacker": attacker, "sensitive": sensitive}

    def run(self, data, settings: RapidSettings, unit):
        from ..rapid import rapid

        key = self.unit_key(unit)
        result = rapid(data.members, data.synthetic, data.schema, key["sensitive"], attacker=key["attacker"],
                       tau=settings.tau, epsilon=settings.epsilon, method=settings.method, error=settings.error,
                       n_trees=settings.n_trees, n_permutations=settings.permutations, seed=data.seed,
                       n_jobs=self.threads, null_refits=settings.null_refits, max_train=settings.max_train,
                       max_records=settings.max_records)
        return MeasureResult({**result.to_json(), "attribution": result.attribution.to_dict("records")},
                             result.records)

    def log_line(self, result) -> str:
        s = result.summary
        return f"RAPID = {s['rapid']:.4f} [{s['ci_low']:.4f}, {s['ci_high']:.4f}], p = {s.get('p_value')}"

    def tables(self) -> list[str]:
        return ["rapid", "rapid_max"]

    def figures(self, datasets) -> list[Figure]:
        return [Figure(f"rapid_{kind}_{dataset}", self.caption) for dataset in datasets
                for kind in ("max", "curves", "attribution")]

    def summarise(self, paths, tables_dir, figures_dir, settings: RapidSettings) -> None:
        from ..rapid.summary import write_summary

        write_summary(paths, tables_dir, figures_dir, settings.attackers[0])

    def summary_columns(self, tables_dir) -> pd.DataFrame | None:
        """RAPID per dataset x generator against chance: the largest RAPID_max over the sensitive
        attributes (attackers that beat chance only) with its sd, chance floor and excess (all three
        of that attribute; excess 0 when no attacker beats chance for any), one verdict per
        sensitive attribute, and RAPID_max per attribute."""
        rapid_max = pd.read_csv(Path(tables_dir) / "rapid_max.csv")
        rows = []
        for key, group in rapid_max.groupby(PAIR):
            best = group.dropna(subset=["rapid_max_mean"])
            best = best.loc[best["rapid_max_mean"].idxmax()] if len(best) else None
            rows.append({**dict(zip(PAIR, key)),
                         "rapid_max": np.nan if best is None else best["rapid_max_mean"],
                         "rapid_max_sd": np.nan if best is None else best["rapid_max_sd"],
                         "rapid_chance_floor": np.nan if best is None else best["null_mean"],
                         "rapid_excess": 0.0 if best is None else best["excess_mean"],
                         "rapid_verdict": "; ".join(f"{r.sensitive}: {r.verdict}" for r in group.itertuples()),
                         **{f"rapid_max[{r.sensitive}]": r.rapid_max_mean for r in group.itertuples()}})
        return pd.DataFrame(rows) if rows else None

    def evidence(self, tables_dir) -> pd.DataFrame | None:
        """One row per dataset x generator x sensitive attribute x attacker: RAPID against its chance
        floor (label-permutation mean, or the refit null when higher), beating it when Holm over
        the suite rejects (rapid.csv's n_seeds_beating_chance)."""
        table = pd.read_csv(Path(tables_dir) / "rapid.csv")
        if "rapid_mean" not in table:
            return None
        table = table.dropna(subset=["rapid_mean"])
        return pd.DataFrame({
            "dataset": table["dataset"], "generator": table["generator"], "risk": self.risk,
            "measure": self.name, "attack": table["attacker"] + " -> " + table["sensitive"].astype(str),
            "metric": "RAPID", "value": table["rapid_mean"], "reference": table["chance_floor_mean"],
            "ci_low": table["ci_low_min"], "ci_high": table["ci_high_max"], "n_seeds": table["n_seeds"],
            "n_seeds_beating": table["n_seeds_beating_chance"], "tpr_at_1e-02": np.nan, "tpr_at_1e-03": np.nan,
            "detail": "reference: chance floor (permutation null)",
            "p_value": table.get("p_value_max", np.nan), "effect_scale": 1.0})
