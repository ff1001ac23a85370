"""MAMA-MIA as a measure (`synthrisk.mia.mama_mia`, `synthrisk.mia.mama_mia_privbayes`): with the
generator in hand and that generator MST or synthcity's PrivBayes, every member and holdout record is
scored by the release's density ratio on the column sets the generator measures (MST's pairs,
PrivBayes's child-and-parents sets), and read as the per-person exposure evidence is (`Exposure`,
whose tables, evidence and naming it shares): the AUC of members against the holdout with its exact
test, and the members named by Benjamini-Hochberg on conformal p-values. Skipped, with the reason,
without a generator, for another one, or for PrivBayes when synthcity's environment is not built.

Summary JSON: the AUC, its test and interval, the members named, the generator the attack knows
(`knows`: MST or PrivBayes), the focal points (column sets, weights, the threshold), the selection
runs. Per-record table: row_id, member, score, p_value, identified."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..mia.mama_mia import FOCAL_RUNS
from ..mia.mama_mia_privbayes import FOCAL_RUNS as PRIVBAYES_RUNS
from ..settings import same_as, setting
from .base import MeasureResult, NotApplicable
from .exposure import Exposure, named_outcomes
from .registry import register_measure
from .wording import interval, pct


@register_measure
class MamaMia(Exposure):
    name = "mama_mia"
    title = "MAMA-MIA: membership inference that knows the generator is MST or PrivBayes"
    order = 48
    refits_generator = True
    attack = "MAMA-MIA (the generator's marginals)"
    detail = ("score: the release's share of a record's cells over the real records' share, on the column sets the "
              "generator measures (focal points from repeated selections, Golob et al. 2025); reference: AUC 0.5 against the "
              "holdout records (one-sided Mann-Whitney); interval: Hanley-McNeil; members named: Benjamini-Hochberg "
              "on conformal p-values")

    @dataclass(frozen=True)
    class Settings:
        runs: int = setting(FOCAL_RUNS, "MST selections that find the focal points (milliseconds each)", minimum=1)
        privbayes_runs: int = setting(PRIVBAYES_RUNS, "synthcity PrivBayes network searches that find the focal "
                                      "points (each seconds to a minute, in synthcity's environment)", minimum=1)
        fdr: float = same_as(Exposure.Settings, "fdr")

    def run(self, data, settings, unit):
        from ..data.split import ROW_ID
        from ..mia.exposure import judge_scores, member_records
        from ..mia.mama_mia import kept, scores, threshold_share

        spec = data.generator.spec if data.generator is not None else None
        if spec is None or not known_generator(spec):
            raise NotApplicable("needs the generator in hand, and that generator MST or synthcity's PrivBayes (a "
                                "workflow's generators; synthrisk audit --generator mst|synthcity "
                                "--generator-config FILE)")
        if data.holdout.empty:
            raise NotApplicable("needs holdout records (records the generator never saw)")
        columns = list(data.schema.columns)
        frames = [data.members, data.holdout] + ([data.aux] if data.aux is not None and len(data.aux) else [])
        real = pd.concat([f[columns] for f in frames], ignore_index=True)
        m, n = len(data.members), len(data.holdout)
        focus = (_mst_focus if _is_mst(spec) else _privbayes_focus)(data, settings, real)
        focal = kept(focus.weights, focus.epsilon)
        wanted, released, reference = focus.codes([real.iloc[: m + n], data.synthetic[columns], real])
        found = scores(wanted, released, reference, focal)
        judged = judge_scores(found[:m], found[m:], settings.fdr)
        ids = [f[ROW_ID].to_numpy() for f in (data.members, data.holdout)]
        summary = {**judged.to_json(settings.fdr), "knows": focus.generator, "epsilon": focus.epsilon,
                   "runs": focus.runs, "threshold_share": threshold_share(focus.epsilon),
                   "focal_points": [{"columns": list(cols), "weight": w, "kept": cols in focal}
                                    for cols, w in sorted(focus.weights.items(), key=lambda kv: (-kv[1], kv[0]))]}
        records = member_records(ids[0], ids[1], found, judged)
        return MeasureResult(summary, records, named_outcomes(records, self.attack))

    def log_line(self, result) -> str:
        s = result.summary
        kept = sum(f["kept"] for f in s["focal_points"])
        return f"AUC {s['auc']:.4f} on {kept} focal sets, {s['n_identified']} member(s) named at FDR {s['fdr']:g}"

    def names_members(self, generator) -> bool:
        return generator is not None and known_generator(generator.spec)

    def explain(self, row: dict) -> str:
        return (f"Knowing which generator made the release (MST or PrivBayes), every record is scored by how much "
                f"more often the release holds its values on the column sets that generator measures than the real "
                f"records do: training records "
                f"score higher than records the generator never saw with AUC {float(row['value']):.3f}"
                f"{interval(row)} (0.5 when the release did not learn who was in the training data); "
                f"{pct(max(2 * (float(row['value']) - 0.5), 0.0))} advantage over a coin toss.")

    def reported(self, summaries):
        """The focal points: each column set the generator chose in the runs, its weight and whether it was kept."""
        ok = [s for s in summaries if s.get("status") == "ok"]
        if not ok:
            return None
        summary = ok[0]
        knows = summary.get("knows", "MST")  # a summary written before PrivBayes was known is MST's
        what = SELECTIONS[knows]
        rows = [{"columns": " × ".join(f.get("columns", f.get("pair", []))), "selected in runs": f["weight"],
                 "kept": "yes" if f["kept"] else ""} for f in summary["focal_points"]]
        note = (f"{summary['runs']} {what} at ε = {summary['epsilon']:g} on samples of {summary['n_members']} real "
                f"records; a set is kept when chosen in at least {summary['threshold_share']:.2f} × the most chosen "
                f"set's runs (the authors' threshold for this ε).")
        return {"caption": f"MAMA-MIA's focal points: the column sets {knows} measures", "rows": rows,
                "notes": [note]}


#: what a focal-point run is, by the generator the attack knows
SELECTIONS = {"MST": "MST selections", "PrivBayes": "PrivBayes network searches (synthcity 0.2.12)"}


def _is_mst(spec: dict) -> bool:
    from ..mia.mama_mia import is_mst

    return is_mst(spec)


def known_generator(spec: dict) -> bool:
    """Whether MAMA-MIA knows the generator of this config entry: MST, or synthcity's PrivBayes."""
    from ..mia.mama_mia_privbayes import is_privbayes

    return _is_mst(spec) or is_privbayes(spec)


@dataclass(frozen=True)
class Focus:
    """What the attack learnt of the generator: the focal points' weights, the ε their threshold reads,
    the runs, and how records are coded on the generator's own domain."""

    generator: str
    weights: Counter
    epsilon: float
    runs: int
    codes: Callable[[list[pd.DataFrame]], list[dict]]


def _mst_focus(data, settings, real) -> Focus:
    from ..mia import mama_mia

    generator = mama_mia.mst_of(data.generator.spec, seed=data.seed)
    if generator.domain != "public":
        raise NotApplicable("MST with domain from_data reads its codes from the training records, so the attack "
                            "cannot rebuild them (and the release is not DP)")
    weights = mama_mia.focal_points(data.generator.spec, mama_mia.in_canonical_order(real), data.schema,
                                    len(data.members), settings.runs, data.seed)
    domain = generator.domain_columns(real, data.schema)
    return Focus("MST", weights, generator.epsilon, settings.runs,
                 lambda frames: [mama_mia.mst_codes(f, domain) for f in frames])


def _privbayes_focus(data, settings, real) -> Focus:
    from ..mia import mama_mia_privbayes
    from ..mia.mama_mia import in_canonical_order

    if data.generator.python is None:
        raise NotApplicable("synthcity's PrivBayes runs in its own environment, and the attack runs its network "
                            "search there: that environment is not built (the workflow builds .venv-synthcity when a "
                            "generator needs it)")
    generator = mama_mia_privbayes.privbayes_of(data.generator.spec)
    weights = mama_mia_privbayes.focal_points(data.generator.spec, in_canonical_order(real), data.schema,
                                              len(data.members), settings.privbayes_runs, data.seed,
                                              data.generator.python)
    return Focus("PrivBayes", weights, generator.privacy()["epsilon"], settings.privbayes_runs,
                 lambda frames: mama_mia_privbayes.value_codes(frames, data.schema))
