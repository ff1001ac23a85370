"""Distance to closest record against a holdout (SDMetrics' and SynthEval's DCR / NNDR) as a
measure: one job per synthetic dataset (synthrisk.dcr).

Summary JSON: `DcrResult.to_json()` (`share_closer_to_member`, `share_interval` (share +- z x the
permutation sd), `p_value_one_sided` (the member/holdout permutation test), `p_value_sign_test` (for
comparison), DCR and NNDR quantiles, exact copies, the design). Per-record table: one row per
synthetic record scored (its index, nearest member and holdout row ids, distances, NNDR). `beats`
and the evidence row's p-value (merged over seeds: twice the median) are the permutation test's."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..dcr.core import DEFAULT_MAX_SYNTHETIC, DEFAULT_PERMUTATIONS
from ..settings import setting
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable, WorkflowOutputs, reported_runs
from .registry import register_measure
from .wording import interval, pct


def _summary_columns(tables) -> pd.DataFrame | None:
    table = tables["dcr"]
    if "share_mean" not in table:
        return None
    return table[tabulate.PAIR + ["share_mean", "exact_copies_member_share_mean"]].rename(
        columns={"share_mean": "dcr_share", "exact_copies_member_share_mean": "dcr_exact_copies"})


@register_measure
class Dcr(Measure):
    name = "dcr"
    title = "Distance to closest record (DCR) against a holdout"
    risk = "membership"
    record_columns = ("synthetic_index", "nearest_member", "distance_member", "nearest_holdout",
                      "distance_holdout", "closer_to_member")
    order = 40
    outputs = WorkflowOutputs(summary=_summary_columns,
                              summary_labels={"dcr_share": "DCR: share closer to members (0.5 ideal)",
                                              "dcr_exact_copies": "exact copies of members (share)"})

    @dataclass(frozen=True)
    class Settings:
        alpha: float = setting(0.05, "level of the one-sided permutation test of 'closer to members than to the "
                               "holdout'", exclusiveMinimum=0, exclusiveMaximum=1)
        max_synthetic: int | None = setting(DEFAULT_MAX_SYNTHETIC, "synthetic records searched at most (a seeded "
                                            "sample beyond; null: no cap)", minimum=1)
        permutations: int = setting(DEFAULT_PERMUTATIONS, "member/holdout relabellings of the test (p >= 1 / (B + 1))",
                                    minimum=1)

    def run(self, data, settings, unit):
        from ..dcr import dcr

        if data.holdout.empty:
            raise NotApplicable("DCR needs holdout records (non-members) to compare with")
        result = dcr(data.members, data.synthetic, data.holdout, schema=data.schema, seed=data.seed,
                     max_synthetic=settings.max_synthetic, permutations=settings.permutations)
        return MeasureResult(result.to_json(), result.records)

    def log_line(self, result) -> str:
        s = result.summary
        return (f"share closer to members {s['share_closer_to_member']:.4f} "
                f"[{s['share_interval']['low']:.4f}, {s['share_interval']['high']:.4f}], p = {s['p_value_one_sided']:.3g}")

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs = tabulate.collect_runs(summaries, {
            "share": lambda s: s["share_closer_to_member"], "ci_low": lambda s: s["share_interval"]["low"],
            "ci_high": lambda s: s["share_interval"]["high"], "p_value": lambda s: s["p_value_one_sided"],
            "beats": lambda s: s["p_value_one_sided"] < settings.alpha,
            "exact_copies_member_share": lambda s: s["exact_copies_member_share"],
            "exact_copies_holdout_share": lambda s: s["exact_copies_holdout_share"],
            "dcr_member_median": lambda s: s["dcr_member"]["median"],
            "dcr_holdout_median": lambda s: s["dcr_holdout"]["median"],
            "nndr_privacy_loss": lambda s: s["nndr_privacy_loss"]["value"]})
        table = tabulate.over_seeds(runs, tabulate.PAIR, ["share", "exact_copies_member_share",
                                                           "exact_copies_holdout_share", "dcr_member_median",
                                                           "dcr_holdout_median", "nndr_privacy_loss"],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
        return {self.name: table}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "share_mean" not in table:
            return None
        return tabulate.evidence_rows(
            table, self.risk, self.name, "DCR closer to members", "share closer to members", "share_mean", 0.5,
            "reference: 0.5 (as close to unseen records as to members); p: permutation test of the member/holdout "
            "labels over the pooled real records (merged over seeds: twice the median); interval: share +- 1.96 sd "
            "of the share over those relabellings (synthetic records sharing a nearest record included), widest over seeds",
            effect_scale=2.0)

    # --- the steward's audit (no subgroups: the per-record table is per synthetic record) ---------
    def explain(self, row: dict) -> str:
        value, reference = float(row["value"]), float(row["reference"])
        return (f"Distance to closest record: {pct(value)} of the synthetic records lie closer to a training record "
                f"than to any holdout record{interval(row)}; a generator that does not copy its training records "
                f"gives {pct(reference)} (both compared on equally many records).")

    def reported(self, summaries):
        """DCR's numbers as SDMetrics and SynthEval read them, each beside its holdout reference: the
        share of synthetic records closer to a member, the synthetic records that equal a real record
        exactly (members' against the holdout's), and the median distance to the closest record."""
        runs = reported_runs(summaries)
        if not runs:
            return None
        rows = []
        for s, seed in runs:
            n = s["n_synthetic"]
            rows += [
                {**seed, "reading": "synthetic records closer to a member than to any holdout record",
                 "release": f"{pct(s['share_closer_to_member'])} ({pct(s['share_interval']['low'])}–"
                            f"{pct(s['share_interval']['high'])})",
                 "reference": f"{pct(0.5)} (as close to unseen records as to members)", "p-value": s["p_value_one_sided"]},
                {**seed, "reading": "synthetic records equal to a real record",
                 "release": f"{s['exact_copies_member']:,} of {n:,} equal a member ({pct(s['exact_copies_member_share'])})",
                 "reference": f"{s['exact_copies_holdout']:,} equal a holdout record "
                              f"({pct(s['exact_copies_holdout_share'])})", "p-value": None},
                {**seed, "reading": "median distance to the closest record (Gower)",
                 "release": f"{s['dcr_member']['median']:.4f} to the members",
                 "reference": f"{s['dcr_holdout']['median']:.4f} to the holdout", "p-value": None}]
        return {"caption": "Distance to closest record: the release's distances to the members beside its "
                           "distances to the holdout records",
                "rows": rows,
                "notes": ["Members and holdout records are compared on equally many records. Where many people share "
                          "one record, the release equals holdout records as well: only the excess over the holdout "
                          "says that members were copied."]}
