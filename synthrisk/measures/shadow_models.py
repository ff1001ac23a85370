"""Shadow-model membership inference with the generator in hand, as a measure
(`synthrisk.shadow_mia.release`): the steward's audit refits the generator that made the release on
the records that are not targets, with and without each target, and asks of every target whether the
release was fitted on it. Runs only when the input carries the generator (`synthrisk audit
--generator`); otherwise it is skipped with the reason.

Evidence: the AUC of member targets against holdout targets on the release's per-target p-values
(reference 0.5; permutation test, exact under the null). It names nobody (the module doc of
`synthrisk.shadow_mia.release` says why); the page's table gives each target's vulnerability.

Summary JSON: `ShadowRelease.to_json()` (with every target's row). Per-record table: one row per
target (row_id, member, file, row, kind, vulnerability, its attack's AUC and TPRs with intervals, the
release's score and p-value)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..settings import setting
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable
from .registry import register_measure
from .wording import interval, pct

ATTACK = "shadow models (generator in hand)"


@register_measure
class ShadowModels(Measure):
    name = "shadow_models"
    title = "Shadow-model membership inference (generator in hand)"
    risk = "membership"
    record_columns = ("row_id", "member", "file", "row", "kind", "vulnerability", "auc", "auc_low", "auc_high",
                      *(f"{key}@{fpr:g}" for fpr in (0.1, 0.01, 0.001) for key in ("tpr", "tpr_low", "tpr_high")),
                      "release_score", "release_p")
    order = 47
    refits_generator = True

    @dataclass(frozen=True)
    class Settings:
        # Targets: Meeus et al.'s most vulnerable records and a random sample, of the members and
        # holdout pooled; about half are members. 80 targets keep each shadow dataset's inserted
        # targets (half of them) a minority of its records at 1,000 members.
        n_outliers: int = setting(40, "targets with the highest vulnerability (Meeus et al.: mean Gower distance to "
                                  "the nearest neighbours)", minimum=0)
        n_random: int = setting(40, "targets drawn at random from the rest", minimum=0)
        neighbours: int = setting(5, "neighbours of the vulnerability score", minimum=1)
        # 200 + 200 refits: 100 "out" evaluation datasets per target resolve a TPR at FPR 0.01 (one
        # false positive allowed); cart at 1,000 members takes about 3 minutes on one core.
        shadow_datasets: int = setting(200, "refits that train the shadow models", minimum=4)
        eval_datasets: int = setting(200, "fresh refits that judge them", minimum=4)
        n_trees: int = setting(100, "trees of each target's random forest", minimum=1)

        def __post_init__(self):
            if self.n_outliers + self.n_random < 2:
                raise ValueError("n_outliers + n_random must be at least 2 (member and holdout targets)")

    def run(self, data, settings, unit):
        from ..shadow_mia.release import attack_release

        if data.generator is None:
            raise NotApplicable("needs the generator that made the release, to refit it (synthrisk audit "
                                "--generator NAME)")
        if not data.generator.refittable:
            raise NotApplicable(data.generator.why_not_refittable())
        if data.holdout.empty:
            raise NotApplicable("needs holdout records (records the generator never saw)")
        aux = data.aux if data.aux is not None and len(data.aux) else None
        with data.generator.refits(data.seed) as refit:
            result = attack_release(
                data.members, data.synthetic, data.holdout, schema=data.schema, spec=data.generator.spec,
                name=data.generator.name, aux=aux, seed=data.seed, n_outliers=settings.n_outliers,
                n_random=settings.n_random, neighbours=settings.neighbours, shadow_datasets=settings.shadow_datasets,
                eval_datasets=settings.eval_datasets, n_trees=settings.n_trees, progress=data.generator.progress,
                refit=refit)
        return MeasureResult(result.to_json(), result.records.reindex(columns=list(self.record_columns)))

    def log_line(self, result) -> str:
        s = result.summary
        return (f"AUC {s['auc']:.4f} over {s['n_member_targets']} member and {s['n_holdout_targets']} holdout "
                f"targets (permutation p {s['auc_p_value']:.3g}), {s['fits']} refits of {s['refitted']}")

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs = tabulate.collect_runs(summaries, {
            "auc": lambda s: s["auc"], "ci_low": lambda s: s["auc_ci_low"], "ci_high": lambda s: s["auc_ci_high"],
            "p_value": lambda s: s["auc_p_value"], "beats": lambda s: s["auc_p_value"] < 0.05,
            "fits": lambda s: s["fits"], "fits_failed": lambda s: s["fits_failed"],
            "targets_above_chance": lambda s: s["targets_above_chance"]})
        table = tabulate.over_seeds(runs, tabulate.PAIR, ["auc", "fits", "fits_failed", "targets_above_chance"],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
        return {self.name: table}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "auc_mean" not in table:
            return None
        return tabulate.evidence_rows(
            table, self.risk, self.name, ATTACK, "AUC", "auc_mean", 0.5,
            "per target (the most vulnerable and random records of the members and holdout): a forest trained on "
            "refits of the generator with and without the target scores the release; reference: AUC 0.5 of member "
            "against holdout targets on the release's p-values (one-sided permutation test); interval: "
            "Hanley-McNeil", effect_scale=2.0).assign(n_identified=0)

    # --- the steward's audit ---------------------------------------------------------------------
    def explain(self, row: dict) -> str:
        return (f"The generator was refitted many times with and without each target record, and a classifier "
                f"per target learnt what its presence changes; on the release, member targets look fitted-on "
                f"more than holdout targets with AUC {float(row['value']):.3f}{interval(row)} (0.5 when the "
                f"release did not learn who was in the training data); "
                f"{pct(max(2 * (float(row['value']) - 0.5), 0.0))} advantage over a coin toss.")

    def reported(self, summaries):
        """Per target: its kind, whether it is a member, its vulnerability under this generator (the
        attack's AUC and TPR at 10, 1 and 0.1 % FPR on fresh refits, with intervals) and the release's
        p-value; notes state the budget and what it can tell from chance."""
        ok = [s for s in summaries if s.get("status") == "ok"]
        if not ok:
            return None
        rows, notes = [], []
        for summary in ok:
            for t in summary["targets"]:
                rows.append({"target": f"{t['file']}:{t['row']}", "kind": t["kind"],
                             "member": "yes" if t["member"] else "no",
                             "AUC": t["auc"], "ci_low": t["auc_low"], "ci_high": t["auc_high"],
                             **{f"{label}{end}": t.get(f"tpr{suffix}@{fpr:g}") for fpr in (0.1, 0.01, 0.001)
                                for end, suffix, label in (("", "", f"TPR at FPR {fpr:g}"),
                                                           (" low", "_low", f"TPR at FPR {fpr:g}"),
                                                           (" high", "_high", f"TPR at FPR {fpr:g}"))},
                             "release p-value": t["release_p"]})
            notes.append(_budget_note(summary))
        return {"caption": "Each target's vulnerability under the generator (its attack on fresh refits: AUC and "
                           "TPR at a fixed FPR, 0.5 and the FPR at chance) and the release's p-value (low: the "
                           "release looks fitted on the target)", "rows": rows, "notes": notes}


def _budget_note(summary: dict) -> str:
    smallest = summary.get("smallest_tpr_at_1e-02")
    tells = (f"at FPR 0.01 it tells a TPR of {smallest:.0%} or more from chance" if smallest is not None
             else "too few evaluation refits to set a threshold at FPR 0.01")
    return (f"Budget: {summary['fits']} refits of {summary['refitted']} ({summary['shadow_datasets']} to train, "
            f"{summary['eval_datasets']} to judge; {summary['fits_failed']} failed), {summary['records_per_dataset']} "
            f"records each, drawn from {summary['reference']}; {summary['seconds']:.0f} s. Per target, {tells}. "
            f"{summary['targets_above_chance']} of {len(summary['targets'])} targets are vulnerable (AUC interval "
            f"above 0.5); {summary['n_member_targets']} of them are members, {summary['n_holdout_targets']} holdout "
            f"records. The release-level AUC is read on targets chosen for being vulnerable: it says more about them "
            f"than about an average member.")
