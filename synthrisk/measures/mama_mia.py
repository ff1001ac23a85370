"""MAMA-MIA on MST as a measure (`synthrisk.mia.mama_mia`): with the generator in hand and that
generator MST, every member and holdout record is scored by the release's density ratio on the
pairs MST measures, and read as the per-person exposure evidence is (`Exposure`, whose tables,
evidence and naming it shares): the AUC of members against the holdout with its exact test, and the
members named by Benjamini-Hochberg on conformal p-values. Skipped, with the reason, without a
generator or for another one.

Summary JSON: the AUC, its test and interval, the members named, the focal points (pairs, weights,
the threshold), the selection runs. Per-record table: row_id, member, score, p_value, identified."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..mia.mama_mia import FOCAL_RUNS
from ..settings import same_as, setting
from .base import MeasureResult, NotApplicable
from .exposure import Exposure, named_outcomes
from .registry import register_measure
from .wording import interval, pct


@register_measure
class MamaMia(Exposure):
    name = "mama_mia"
    title = "MAMA-MIA: membership inference that knows the generator is MST"
    order = 48
    refits_generator = True
    attack = "MAMA-MIA (MST's marginals)"
    detail = ("score: the release's share of a record's cells over the real records' share, on the column pairs MST "
              "selects (focal points from repeated selections, Golob et al. 2025); reference: AUC 0.5 against the "
              "holdout records (one-sided Mann-Whitney); interval: Hanley-McNeil; members named: Benjamini-Hochberg "
              "on conformal p-values")

    @dataclass(frozen=True)
    class Settings:
        runs: int = setting(FOCAL_RUNS, "MST selections that find the focal points", minimum=1)
        fdr: float = same_as(Exposure.Settings, "fdr")

    def run(self, data, settings, unit):
        from ..data.split import ROW_ID
        from ..mia import mama_mia
        from ..mia.exposure import judge_scores, member_records

        if data.generator is None or not mama_mia.is_mst(data.generator.spec):
            raise NotApplicable("needs the generator in hand, and that generator MST (a workflow's MST generators; "
                                "synthrisk audit --generator mst --generator-config FILE)")
        if data.holdout.empty:
            raise NotApplicable("needs holdout records (records the generator never saw)")
        generator = mama_mia.mst_of(data.generator.spec, seed=data.seed)
        if generator.domain != "public":
            raise NotApplicable("MST with domain from_data reads its codes from the training records, so the attack "
                                "cannot rebuild them (and the release is not DP)")
        columns = list(data.schema.columns)
        frames = [data.members, data.holdout] + ([data.aux] if data.aux is not None and len(data.aux) else [])
        real = pd.concat([f[columns] for f in frames], ignore_index=True)
        weights = mama_mia.focal_points(data.generator.spec, real, data.schema, len(data.members), settings.runs,
                                        data.seed)
        focal = mama_mia.kept(weights, generator.epsilon)
        domain = generator.domain_columns(real, data.schema)
        m, n = len(data.members), len(data.holdout)
        scores = mama_mia.scores(real.iloc[: m + n], data.synthetic[columns], real, domain, focal)
        judged = judge_scores(scores[:m], scores[m:], settings.fdr)
        ids = [f[ROW_ID].to_numpy() for f in (data.members, data.holdout)]
        summary = {**judged.to_json(settings.fdr), "epsilon": generator.epsilon, "runs": settings.runs,
                   "threshold_share": mama_mia.threshold_share(generator.epsilon),
                   "focal_points": [{"pair": list(pair), "weight": w, "kept": pair in focal}
                                    for pair, w in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))]}
        records = member_records(ids[0], ids[1], scores, judged)
        return MeasureResult(summary, records, named_outcomes(records, self.attack))

    def log_line(self, result) -> str:
        s = result.summary
        kept = sum(f["kept"] for f in s["focal_points"])
        return f"AUC {s['auc']:.4f} on {kept} focal pairs, {s['n_identified']} member(s) named at FDR {s['fdr']:g}"

    def names_members(self, generator) -> bool:
        from ..mia.mama_mia import is_mst

        return generator is not None and is_mst(generator.spec)

    def explain(self, row: dict) -> str:
        return (f"Knowing the release came from MST, every record is scored by how much more often the release "
                f"holds its values on the column pairs MST measures than the real records do: training records "
                f"score higher than records the generator never saw with AUC {float(row['value']):.3f}"
                f"{interval(row)} (0.5 when the release did not learn who was in the training data); "
                f"{pct(max(2 * (float(row['value']) - 0.5), 0.0))} advantage over a coin toss.")

    def reported(self, summaries):
        """The focal points: each pair MST selected in the runs, its weight and whether it was kept."""
        ok = [s for s in summaries if s.get("status") == "ok"]
        if not ok:
            return None
        summary = ok[0]
        rows = [{"pair": " × ".join(f["pair"]), "selected in runs": f["weight"], "kept": "yes" if f["kept"] else ""}
                for f in summary["focal_points"]]
        note = (f"{summary['runs']} MST selections at ε = {summary['epsilon']:g} on samples of {summary['n_members']} "
                f"real records; a pair is kept when selected in at least {summary['threshold_share']:.2f} × the most "
                f"selected pair's runs (the authors' threshold for this ε).")
        return {"caption": "MAMA-MIA's focal points: the column pairs MST measures", "rows": rows, "notes": [note]}
