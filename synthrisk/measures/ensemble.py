"""The ensemble membership attack as a measure (`synthrisk.mia.ensemble`): a meta-classifier over
DCR, NNDR, the exposure score, neighbourhood counts and a density ratio, read as the per-person
exposure evidence is (`Exposure`: the AUC of members against the holdout with its test, and members
named by Benjamini-Hochberg on conformal p-values).

Mode `shadow` (the default) trains it on refits of the generator in hand and runs only with one
(`synthrisk audit --generator`); mode `split` (`synthrisk.measure("ensemble", ..., mode="split")` or
a workflow config) trains it on a half of the members and holdout and reads the other half. The
audit runs the default, so without a generator its verdicts are unchanged (a black-box ensemble in
them would be a new audit revision, with its own calibration).

Summary JSON: the AUC, its test and interval, the members named, the mode and what trained it.
Per-record table: row_id, member, score, p_value, identified (the records scored)."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from ..mia.ensemble import MODES
from ..settings import same_as, setting
from .base import MeasureResult, NotApplicable
from .exposure import Exposure, named_outcomes
from .registry import register_measure
from .wording import interval, pct


@register_measure
class Ensemble(Exposure):
    name = "ensemble"
    title = "Ensemble membership inference (a meta-classifier over the attacks' signals)"
    order = 49
    refits_generator = True
    attack = "ensemble (meta-classifier over DCR, NNDR, exposure, density ratio)"
    detail = ("score: a gradient-boosting classifier's probability of membership from DCR, NNDR, the exposure score, "
              "neighbourhood counts and a density ratio, trained on refits of the generator (or on a half of the "
              "records) and read on records it did not train on; reference: AUC 0.5 against the holdout records "
              "(one-sided Mann-Whitney); interval: Hanley-McNeil; members named: Benjamini-Hochberg on conformal "
              "p-values")

    @dataclass(frozen=True)
    class Settings:
        mode: str = setting("shadow", "what the meta-classifier trains on: shadow (refits of the generator in "
                            "hand) or split (a blind half of the records)", enum=list(MODES))
        refits: int = setting(20, "shadow mode: refits of the generator in hand", minimum=1)
        per_refit: int = setting(500, "shadow mode: the 'in' and the 'out' records kept of each refit", minimum=1)
        fdr: float = same_as(Exposure.Settings, "fdr")

    def run(self, data, settings, unit):
        from ..data.split import ROW_ID
        from ..mia.ensemble import ensemble_scores
        from ..mia.exposure import judge_scores, member_records

        if settings.mode == "shadow" and data.generator is None:
            raise NotApplicable("needs the generator in hand to train on its refits (synthrisk audit --generator); "
                                "mode split trains on a half of the records instead")
        if settings.mode == "shadow" and not data.generator.refittable:
            raise NotApplicable(f"{data.generator.why_not_refittable()} (mode split trains on a half of the records "
                                "instead)")
        if data.holdout.empty:
            raise NotApplicable("needs holdout records (records the generator never saw)")
        generator = data.generator
        aux = data.aux if data.aux is not None and len(data.aux) else None
        with generator.refits(data.seed) if settings.mode == "shadow" else nullcontext() as refit:
            positions, scores, facts = ensemble_scores(
                data.members, data.synthetic, data.holdout, schema=data.schema, aux=aux, mode=settings.mode,
                spec=generator.spec if generator else None, name=generator.name if generator else None,
                refits=settings.refits, per_refit=settings.per_refit, seed=data.seed,
                progress=generator.progress if generator else None, refit=refit)
        m = len(data.members)
        is_member = positions < m
        judged = judge_scores(scores[is_member], scores[~is_member], settings.fdr)
        ids = (data.members[ROW_ID].to_numpy()[positions[is_member]],
               data.holdout[ROW_ID].to_numpy()[positions[~is_member] - m])
        summary = {**judged.to_json(settings.fdr), **facts}
        records = member_records(ids[0], ids[1], np.r_[scores[is_member], scores[~is_member]], judged)
        return MeasureResult(summary, records, named_outcomes(records, self.attack))

    def log_line(self, result) -> str:
        s = result.summary
        return f"AUC {s['auc']:.4f} ({s['mode']}), {s['n_identified']} member(s) named at FDR {s['fdr']:g}"

    def names_members(self, generator) -> bool:
        # the audit's default mode, shadow, runs only with a generator it can refit
        return generator is not None and generator.refittable

    def explain(self, row: dict) -> str:
        return (f"A classifier that weighs every distance and density signal together, trained where membership is "
                f"known, scores training records above records the generator never saw with AUC "
                f"{float(row['value']):.3f}{interval(row)} (0.5 when the release did not learn who was in the "
                f"training data); {pct(max(2 * (float(row['value']) - 0.5), 0.0))} advantage over a coin toss.")
