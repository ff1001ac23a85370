"""Per-person membership evidence as a measure (`synthrisk.mia.exposure`): the exposure score's AUC
against the records the generator never saw, the members named by Benjamini-Hochberg on their
conformal p-values, and the copied rare members named by the rare-copies count test
(`synthrisk.mia.rare_copies`), which sees the handful of copies the conformal p-values cannot name.
Any member named makes the membership risk *at risk* (`n_identified` of the evidence row); the page
and the JSON list them, each with the test that named them.

Summary JSON: `ExposureResult.to_json()`. Per-record table: row_id, member, score, p_value,
identified, rare_copy_p, rare_named (members and calibration records; no real values)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..mia.rare_copies import RARE_SHARE
from ..settings import setting
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable, member_outcomes, reported_runs
from .registry import register_measure
from .wording import interval, pct

ATTACK = "exposure (release over population closeness)"
#: the attack a member named by the rare-copies test is listed under
RARE_ATTACK = "rare copies (exact count test of the rarest records)"


def named_outcomes(records: pd.DataFrame, attack: str) -> pd.DataFrame:
    """The members' outcomes (OUTCOME_COLUMNS) of an attack that names members itself, from its
    per-record table (`member`, `score`, `p_value`, `identified`, and `rare_named` / `rare_copy_p` when
    the rare-copies test ran): a hit is a member named, listed under `attack` with its conformal
    p-value, or under the rare-copies test with that test's p-value when it named them (and
    Benjamini-Hochberg did not)."""
    members = records[records["member"] == 1]
    named = members["identified"].astype(bool).to_numpy()
    by_count = (members["rare_named"].fillna(False).astype(bool).to_numpy() if "rare_named" in members
                else np.zeros(len(members), dtype=bool))
    p_value = members["p_value"].to_numpy(float)
    if "rare_copy_p" in members:
        p_value = np.where(by_count, members["rare_copy_p"].to_numpy(float), p_value)
    return member_outcomes(attack, members["row_id"], named, named=named,
                           named_by=np.where(by_count, RARE_ATTACK, attack), score=members["score"].to_numpy(float),
                           p_value=p_value)


@register_measure
class Exposure(Measure):
    name = "exposure"
    title = "Per-person membership evidence (conformal exposure)"
    risk = "membership"
    record_columns = ("row_id", "member", "score", "p_value", "identified", "rare_copy_p", "rare_named")
    order = 45
    #: the attack's name in the evidence, and how its row reads
    attack = ATTACK
    detail = ("score: how much closer the release comes to a record than the other real records do; reference: AUC "
              "0.5 against the holdout records (one-sided Mann-Whitney, merged over seeds); interval: "
              "Hanley-McNeil, widest over seeds; members named: Benjamini-Hochberg on conformal p-values, and the copied "
              "rare members when the rare-copies count test rejects")

    @dataclass(frozen=True)
    class Settings:
        # The default policy's rates (`naming_fdr`, 0.9 of its family-wise level, and
        # `rare_copies_level`, 0.05 of it; the audit sets them from its policy, a workflow config states
        # them beside its `policy:`), so that naming anyone in a release that never saw its members
        # happens in at most 4.75 % of audits, and the lower bounds spend the rest of the 5 %.
        fdr: float = setting(0.045, "false-discovery rate of the members named by their conformal p-values (the "
                             "default policy's naming rate; the audit sets it from its policy)",
                             exclusiveMinimum=0, exclusiveMaximum=1)
        rare_level: float = setting(0.0025, "level of the rare-copies count test, whose matched rare members are "
                                    "named when it rejects (the default policy's; the audit sets it from its "
                                    "policy)", exclusiveMinimum=0, exclusiveMaximum=1)

    def run(self, data, settings, unit):
        from ..mia.exposure import exposure

        if data.holdout.empty:
            raise NotApplicable("per-person evidence needs holdout records (records the generator never saw)")
        aux = data.aux if data.aux is not None and len(data.aux) else None
        result = exposure(data.members, data.synthetic, data.holdout, schema=data.schema, aux=aux, fdr=settings.fdr,
                          rare_level=settings.rare_level)
        return MeasureResult(result.to_json(), result.records, named_outcomes(result.records, self.attack))

    def log_line(self, result) -> str:
        s = result.summary
        rare, level = s.get("rare_copies") or {}, s.get("rare_level")
        test = ("rare copies not tested" if level is None
                else f"rare copies p = {rare.get('p_value', float('nan')):.2g} at {level:g}")
        return f"AUC {s['auc']:.4f}, {s['n_identified']} member(s) named (FDR {s['fdr']:g}; {test})"

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        runs = tabulate.collect_runs(summaries, {
            "auc": lambda s: s["auc"], "ci_low": lambda s: s["auc_ci_low"], "ci_high": lambda s: s["auc_ci_high"],
            "p_value": lambda s: s["auc_p_value"], "beats": lambda s: s["auc_p_value"] < 0.05,
            "n_identified": lambda s: s["n_identified"], "min_named": lambda s: s["min_named"], **tabulate.TPR_FIELDS})
        table = tabulate.over_seeds(runs, tabulate.PAIR, ["auc", "n_identified", "min_named", *tabulate.TPR_MEANS],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
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

    def names_members(self, generator) -> bool:
        return True

    def reported(self, summaries):
        """How each test of the per-person evidence read the release, with its reference beside it:
        Benjamini-Hochberg (members scored against the holdout, the fewest it can name) and the
        rare-copies test (the rare records' exact copies, members against the holdout's)."""
        runs = reported_runs(summaries)
        if not runs:
            return None
        rows = []
        for summary, seed in runs:
            rows.append({**seed, "test": "Benjamini-Hochberg on conformal p-values",
                         "records read": f"{summary['n_members']:,} members against {summary['n_calibration']:,} "
                                         "holdout records",
                         "reference": f"names nobody or at least {summary['min_named']:,}",
                         "level": float(f"{summary['fdr']:.6g}"), "p-value": None,
                         "members named": summary.get("n_named_conformal", summary["n_identified"])})
            rare = summary.get("rare_copies")
            if rare:
                rejects = rare["p_value"] <= summary["rare_level"]
                rows.append({**seed, "test": "rare copies (exact count test)",
                             "records read": f"{rare['n_rare']:,} rarest records ({rare['n_rare_members']:,} of them "
                                             f"members): {rare['member_matches']:,} members copied exactly",
                             "reference": f"{rare['holdout_matches']:,} holdout records copied exactly",
                             "level": float(f"{summary['rare_level']:.6g}"), "p-value": rare["p_value"],
                             "members named": rare["member_matches"] if rejects else 0})
        return {"caption": "How the per-person evidence named members: each test beside its reference (what a "
                           "release that never saw the members would give)",
                "rows": rows,
                "notes": [f"Members named by both tests are counted under each. The rare-copies test reads the "
                          f"{100 * RARE_SHARE:g} % of the members and holdout records pooled that lie "
                          "farthest from every other real record (and every record tied with the last of them), "
                          "chosen without reading who is a member; when the release never saw the members, "
                          "members and holdout records among them are copied alike (hypergeometric, exact)."]}

