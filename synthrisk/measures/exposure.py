"""Per-person membership evidence as a measure (`synthrisk.mia.exposure`): the exposure score's AUC
against the records the generator never saw, and the members named by Benjamini-Hochberg on their
conformal p-values. Any member named makes the membership risk *at risk* (`n_identified` of the
evidence row); the page and the JSON list them.

Summary JSON: `ExposureResult.to_json()`. Per-record table: row_id, member, score, p_value,
identified (members and calibration records; no real values)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..settings import setting
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable
from .registry import register_measure
from .wording import interval, pct

ATTACK = "exposure (release over population closeness)"


@register_measure
class Exposure(Measure):
    name = "exposure"
    title = "Per-person membership evidence (conformal exposure)"
    risk = "membership"
    record_columns = ("row_id", "member", "score", "p_value", "identified")
    order = 45
    #: the attack's name in the evidence, and how its row reads
    attack = ATTACK
    detail = ("score: how much closer the release comes to a record than the other real records do; reference: AUC "
              "0.5 against the holdout records (one-sided Mann-Whitney, merged over seeds); interval: "
              "Hanley-McNeil, widest over seeds; members named: Benjamini-Hochberg on conformal p-values")

    @dataclass(frozen=True)
    class Settings:
        # False-discovery rate of the members named: the default policy's `naming_fdr` (0.9 of its
        # family-wise level; the audit sets it from its policy, a workflow config states it beside
        # its `policy:`), so that naming anyone in a release that never saw its members happens in at
        # most 4.5 % of audits, and the lower bounds spend the rest of the 5 %.
        fdr: float = setting(0.045, "false-discovery rate of the members named (the default policy's naming rate; "
                             "the audit sets it from its policy)", exclusiveMinimum=0, exclusiveMaximum=1)

    def run(self, data, settings, unit):
        from ..mia.exposure import exposure

        if data.holdout.empty:
            raise NotApplicable("per-person evidence needs holdout records (records the generator never saw)")
        aux = data.aux if data.aux is not None and len(data.aux) else None
        result = exposure(data.members, data.synthetic, data.holdout, schema=data.schema, aux=aux, fdr=settings.fdr)
        return MeasureResult(result.to_json(), result.records)

    def log_line(self, result) -> str:
        s = result.summary
        return f"AUC {s['auc']:.4f}, {s['n_identified']} member(s) named at FDR {s['fdr']:g}"

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs = tabulate.collect_runs(summaries, {
            "auc": lambda s: s["auc"], "ci_low": lambda s: s["auc_ci_low"], "ci_high": lambda s: s["auc_ci_high"],
            "p_value": lambda s: s["auc_p_value"], "beats": lambda s: s["auc_p_value"] < 0.05,
            "n_identified": lambda s: s["n_identified"], "min_named": lambda s: s["min_named"]})
        table = tabulate.over_seeds(runs, tabulate.PAIR, ["auc", "n_identified", "min_named"], beats="beats",
                                    ci=("ci_low", "ci_high"), p_value="p_value")
        if "n_identified" in runs:
            # Named in every seed (the least over seeds): each seed's naming is its own release's.
            fewest = runs[runs["status"] == "ok"].groupby(tabulate.PAIR)["n_identified"].min().rename("n_identified_min")
            table = table.merge(fewest.reset_index(), on=tabulate.PAIR, how="left")
        return {self.name: table}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "auc_mean" not in table:
            return None
        rows = tabulate.evidence_rows(table, self.risk, self.name, self.attack, "AUC", "auc_mean", 0.5, self.detail,
                                      effect_scale=2.0)
        named = table.loc[rows.index, "n_identified_min"] if "n_identified_min" in table else 0
        return rows.assign(n_identified=pd.Series(named, index=rows.index).fillna(0).astype(int))

    # --- the steward's audit ---------------------------------------------------------------------
    def explain(self, row: dict) -> str:
        return (f"Every record is scored by how much closer the release comes to it than the other real records "
                f"do: training records score higher than records the generator never saw with AUC "
                f"{float(row['value']):.3f}{interval(row)} (0.5 when the release did not learn who was in the "
                f"training data); {pct(max(2 * (float(row['value']) - 0.5), 0.0))} advantage over a coin toss.")

    def exposed_members(self, row: dict, records: pd.DataFrame) -> pd.DataFrame | None:
        members = records[records["member"] == 1]
        return pd.DataFrame({"row_id": members["row_id"], "flag": members["identified"].astype(bool)})

    def identified_members(self, row: dict, records: pd.DataFrame) -> list[dict]:
        named = records[(records["member"] == 1) & records["identified"].astype(bool)]
        named = named.sort_values(["p_value", "score", "row_id"], ascending=[True, False, True])
        return [{"row_id": int(r.row_id), "attack": self.attack, "score": float(r.score), "p_value": float(r.p_value)}
                for r in named.itertuples()]

    def names_members(self, generator) -> bool:
        return True

