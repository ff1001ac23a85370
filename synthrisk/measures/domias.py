"""DOMIAS (van Breugel et al., AISTATS 2023) as a measure: the density of the synthetic data over
the density of the population (fitted on the attacker's aux records) at each attack record, on the
KDE attack's attack set (synthrisk.domias).

Summary JSON: `DomiasResult.to_json()` (`auc`, `tpr_at_fpr`, `fpr_floor`, `n_members`,
`n_non_members`, `roc`, `no_reference` ablation, density settings, attack-set design) plus the
test of AUC > 0.5 (`auc_test`). Per-record table: row_id, member, score."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..mia.settings import MiaSettings
from ..settings import same_as, setting
from ..stats.multiple_testing import holm_rejects
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable, WorkflowOutputs
from .mia import flagged_members
from .registry import register_measure
from .wording import membership_auc

#: the attack, as its evidence row and outcomes name it
ATTACK = "DOMIAS"


def _beats(summary: dict, alpha: float) -> bool:
    """AUC above 0.5 or TPR at FPR 1e-2 above chance, Holm over the two tests (as for `mia`)."""
    p = [summary["auc_test"]["p_value"], (summary.get("tpr_test") or {}).get("p_value")]
    p = [v for v in p if v is not None]
    return bool(p) and bool(holm_rejects(p, alpha).any())


def _summary_columns(tables) -> pd.DataFrame | None:
    table = tables["domias"]
    return table[tabulate.PAIR + ["auc_mean"]].rename(columns={"auc_mean": "domias_auc"}) if "auc_mean" in table else None


@register_measure
class Domias(Measure):
    name = "domias"
    title = "DOMIAS: density-ratio membership inference"
    risk = "membership"
    record_columns = ("row_id", "member", "score")
    order = 50
    outputs = WorkflowOutputs(summary=_summary_columns, summary_labels={"domias_auc": "DOMIAS AUC"})

    @dataclass(frozen=True)
    class Settings:
        # the attack set of the KDE attack (synthrisk.mia): El Emam's member share, aux members
        member_share: float | str = same_as(MiaSettings, "member_share")
        aux_member_fraction: float = same_as(MiaSettings, "aux_member_fraction")
        min_attack_members: int = same_as(MiaSettings, "min_attack_members")
        bandwidth: float | str = setting("scott", "the kernels' bandwidth factor b (h = b x the column's standard "
                                         "deviation): scott (n^(-1/(d+4))) or a number in (0, 1]",
                                         oneOf=[{"type": "string", "enum": ["scott"]},
                                                {"type": "number", "exclusiveMinimum": 0, "maximum": 1}])
        alpha: float = setting(0.05, "level of the attack's tests", exclusiveMinimum=0, exclusiveMaximum=1)

    def run(self, data, settings, unit):
        from ..domias import domias
        from ..mia.metrics import auc_against_chance, tpr_against_chance

        if data.aux.empty:
            raise NotApplicable("DOMIAS needs the attacker's auxiliary records (n_aux > 0) for its reference density")
        result = domias(data.members, data.synthetic, data.holdout, schema=data.schema, aux=data.aux,
                        population_size=data.population_size, member_share=settings.member_share, seed=data.seed,
                        aux_member_fraction=settings.aux_member_fraction, bandwidth=settings.bandwidth,
                        min_attack_members=settings.min_attack_members)
        summary = result.to_json()
        summary["auc_test"] = auc_against_chance(summary["auc"], summary["n_members"], summary["n_non_members"])
        summary["tpr_test"] = {"fpr": 1e-2, "p_value": tpr_against_chance(
            summary["tpr_at_fpr"].get("1e-02"), 1e-2, summary["n_members"], summary["n_non_members"])}
        # the members its density-ratio score flags at FPR 1e-2
        return MeasureResult(summary, result.records, flagged_members(result.records, "score", ATTACK))

    def log_line(self, result) -> str:
        return f"DOMIAS AUC {result.summary['auc']:.4f}, p = {result.summary['auc_test']['p_value']:.3g}"

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs = tabulate.collect_runs(summaries, {
            "auc": lambda s: s["auc"], "ci_low": lambda s: s["auc_test"]["ci_low"],
            "ci_high": lambda s: s["auc_test"]["ci_high"],
            "beats": lambda s: _beats(s, settings.alpha), "p_value": lambda s: s["auc_test"]["p_value"],
            **tabulate.TPR_FIELDS, "auc_no_reference": lambda s: (s.get("no_reference") or {}).get("auc"),
            "member_share": lambda s: s["member_share"]})
        table = tabulate.over_seeds(runs, tabulate.PAIR, ["auc", *tabulate.TPR_MEANS, "auc_no_reference", "member_share"],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
        return {self.name: table}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "auc_mean" not in table:
            return None
        return tabulate.evidence_rows(
            table, self.risk, self.name, ATTACK, "AUC", "auc_mean", 0.5,
            "reference: AUC 0.5 and TPR = FPR at 1e-2 (Mann-Whitney and beta-binomial tests, Holm); interval: "
            "Hanley-McNeil, widest over seeds", effect_scale=2.0)

    # --- the steward's audit ---------------------------------------------------------------------
    def explain(self, row: dict) -> str:
        return membership_auc(row)
