"""The KDE membership attacks (true-distribution and realistic) and El Emam's Method 1 baseline
as a measure: one job per synthetic dataset.

Summary JSON: `MiaResult.to_json()` (docs/design.md: `auc`, `f1`, `precision`, `tpr_at_fpr`,
`baseline`, `realistic`, ...) plus `roc` (thinned ROC points per attack). Per-record table:
row_id, member, distance and the attacks' scores."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.split import ROW_ID
from ..mia.settings import MiaSettings
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable, WorkflowOutputs, member_outcomes, no_outcomes
from .registry import register_measure
from .wording import membership_auc

# The AUC attacks of mia.csv and what the verdict calls them.
AUC_ATTACKS = {"kde_true": "KDE (true distribution)", "kde_realistic": "KDE (realistic)",
               "method1": "nearest-synthetic distance (Method 1's score)"}
#: The true-distribution KDE attack fits its two densities on the member/non-member labels: an
#: oracle's upper bound that reads any difference between the members and the holdout, in either
#: direction, as membership. It is reported in the MIA tables as that bound, never as evidence for
#: a verdict (a release that is the holdout itself gave it AUC 0.99).
ORACLE_ATTACKS = {"kde_true"}


#: the per-record score of each label-free membership attack, as its outcomes read it ("distance":
#: closer to the release is more likely a member); never the true-distribution KDE score, which
#: reads the member and holdout labels that no attacker has
MEMBER_SCORES = {"method1": "distance", "kde_realistic": "p_member_realistic"}


def flagged_members(records: pd.DataFrame, score: str, attack: str, fpr: float = 1e-2) -> pd.DataFrame:
    """The outcomes (OUTCOME_COLUMNS) of a membership attack's members, from its per-record table
    (`member` 1/0 and the attack's `score`, higher = more likely a member): a hit when scored above
    all but `fpr` of the non-members (the attack's TPR at that FPR); none without non-members."""
    members = records[records["member"] == 1]
    non_members = records.loc[records["member"] == 0, score].to_numpy(float)
    if not len(non_members):
        return no_outcomes()
    cut = np.quantile(non_members, 1 - fpr)
    return member_outcomes(attack, members[ROW_ID], members[score].to_numpy(float) > cut)


def attack_outcomes(records: pd.DataFrame) -> pd.DataFrame:
    """The outcomes of each label-free attack (`MEMBER_SCORES`) on the members of the per-record
    table, each flagging by its own score at FPR 1e-2."""
    found = [flagged_members(records.assign(**{score: -records[score] if score == "distance" else records[score]}),
                             score, attack)
             for attack, score in MEMBER_SCORES.items() if score in records]
    return pd.concat(found, ignore_index=True) if found else no_outcomes()


def _summary_columns(tables) -> pd.DataFrame | None:
    from ..mia.summary import summary_columns

    return summary_columns(tables["mia"], tables["mia_thresholds"])


@register_measure
class Mia(Measure):
    name = "mia"
    title = "Membership inference"
    risk = "membership"
    record_columns = ("row_id", "member", "distance")
    threads = 1
    order = 20
    Settings = MiaSettings
    outputs = WorkflowOutputs(
        tables=("mia", "mia_thresholds"), formats={"mia_thresholds": ("csv", "md")}, figures=("roc", "f1"),
        caption="mia.rst", summary=_summary_columns,
        summary_labels={"mia_auc": "MIA AUC", "mia_tpr_low_fpr": "TPR @ low FPR",
                        "mia_member_share": "MIA member share t",
                        "mia_f1_gain_label_free_tau_kde_realistic": "F1 gain KDE (realistic), label-free τ",
                        "mia_f1_gain_oracle_tau_kde_realistic": "F1 gain KDE (realistic), oracle τ",
                        "mia_f1_gain_label_free_tau_method1": "F1 gain Method 1, label-free τ",
                        "mia_f1_gain_oracle_tau_method1": "F1 gain Method 1, oracle τ"})

    def run(self, data, settings: MiaSettings, unit):
        from ..mia import membership_attack

        if data.holdout.empty:
            raise NotApplicable("membership inference needs holdout records (non-members) to tell members from")
        aux = data.aux if len(data.aux) else None
        result = membership_attack(
            data.members, data.synthetic, data.holdout, schema=data.schema, aux=aux, realistic=aux is not None,
            aux_member_fraction=settings.aux_member_fraction, seed=data.seed, thresholds=settings.thresholds,
            member_share=settings.member_share, population_size=data.population_size,
            min_attack_members=settings.min_attack_members, max_attack=settings.max_attack)
        s = result.summary
        print(f"attack set: {s['n_attack']} records, member share {s['member_share']:.4f} "
              f"(target {s['member_share_target']}, {s['member_share_rule']}); "
              f"aux members {s['n_aux_members']} (disjoint from the scored members)")
        return MeasureResult({**result.to_json(), "roc": result.roc()}, result.records, attack_outcomes(result.records))

    def log_line(self, result) -> str:
        return f"AUC {result.summary['auc']:.4f}"

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        from ..mia.summary import tables

        return tables(summaries)

    def draw(self, summaries, tables, figures_dir, settings) -> None:
        from ..mia.summary import draw

        draw(summaries, figures_dir)

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables["mia"]
        table = table[table["attack"].isin(set(AUC_ATTACKS) - ORACLE_ATTACKS)]
        if "auc_mean" not in table:
            return None
        table = table.dropna(subset=["auc_mean"])
        return pd.DataFrame({
            "dataset": table["dataset"], "generator": table["generator"], "risk": self.risk,
            "measure": self.name, "attack": table["attack"], "metric": "AUC", "value": table["auc_mean"],
            "reference": 0.5, "ci_low": table["auc_ci_low_min"], "ci_high": table["auc_ci_high_max"],
            "n_seeds": table["n_seeds"], "n_seeds_beating": table["n_seeds_beating_chance"],
            **tabulate.tpr_evidence(table),
            "detail": "reference: AUC 0.5 and TPR = FPR at 1e-2 (Mann-Whitney and beta-binomial tests, Holm "
                      "over the run's attacks); interval: Hanley-McNeil, widest over seeds",
            "p_value": table.get("auc_p_value_merged", np.nan), "effect_scale": 2.0, "n_identified": 0, "named_by": ""})

    # --- the steward's audit ---------------------------------------------------------------------
    def explain(self, row: dict) -> str:
        return membership_auc(row)
