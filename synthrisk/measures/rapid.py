"""RAPID attribute-inference risk as a measure: one job per attacker x sensitive attribute.

Summary JSON: the keys of `RapidResult.to_json()` (docs/design.md: `rapid`, `n_records`, `n_at_risk`,
`tau`, `attacker`, `sensitive`, `curve`, ..., and with a holdout `rapid_holdout`, `member_excess`
with its interval and p-value) plus `attribution` (risk by quasi-identifier group).
Per-record table: row_id, score, at_risk (the members).

RAPID as published counts population-level inference: an attacker trained on a release of other
people of the same population infers the members' attribute as well (on the simulator, 2,000
population records disjoint from the members: RAPID 0.47 on the members and 0.48 on records it never
saw). So the privacy verdict rests on the member excess, RAPID on the members minus the same fitted
attacker on the holdout; RAPID against its chance floor is shown beside it as population-level
inference. Without a holdout the verdict falls back to RAPID against its chance floor."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.split import ROW_ID
from ..errors import ConfigError
from ..rapid.settings import RapidSettings
from .base import Measure, MeasureResult, WorkflowOutputs, member_outcomes
from .registry import register_measure
from .wording import interval, pct

PAIR = ["dataset", "generator"]


def unit_name(attacker: str, sensitive: str) -> str:
    """The unit (job) of one attacker x sensitive attribute: attacker names never contain '-', so
    the first '-' splits them (`Rapid.unit_key`)."""
    return f"{attacker}-{sensitive}"


def attack_name(attacker: str, sensitive: str) -> str:
    """The attack of one attacker x sensitive attribute, as its evidence row and outcomes name it."""
    return f"{attacker} -> {sensitive}"

#: the metric of an evidence row read as the member excess (members against the holdout)
MEMBER_EXCESS = "RAPID member excess"


def summary_columns(tables) -> pd.DataFrame | None:
    """RAPID per dataset x generator against chance (population-level inference): the largest
    RAPID_max over the sensitive attributes (attackers that beat chance only) with its sd, chance
    floor and excess (all three of that attribute; excess 0 when no attacker beats chance for
    any), one verdict per sensitive attribute, and RAPID_max per attribute. Beside it the member
    excess: the largest over the sensitive attributes (NaN without a holdout) and one verdict per
    attribute."""
    rapid_max = tables["rapid_max"]
    rows = []
    for key, group in rapid_max.groupby(PAIR):
        best = group.dropna(subset=["rapid_max_mean"])
        best = best.loc[best["rapid_max_mean"].idxmax()] if len(best) else None
        member = group.get("member_excess_max_mean", pd.Series(np.nan, index=group.index))
        member_verdicts = [f"{r.sensitive}: {v}" for r, v in
                           zip(group.itertuples(), group.get("member_verdict", member)) if isinstance(v, str)]
        rows.append({**dict(zip(PAIR, key)),
                     "rapid_max": np.nan if best is None else best["rapid_max_mean"],
                     "rapid_max_sd": np.nan if best is None else best["rapid_max_sd"],
                     "rapid_chance_floor": np.nan if best is None else best["null_mean"],
                     "rapid_excess": 0.0 if best is None else best["excess_mean"],
                     "rapid_verdict": "; ".join(f"{r.sensitive}: {r.verdict}" for r in group.itertuples()),
                     "rapid_member_excess": member.max() if member.notna().any() else np.nan,
                     "rapid_member_verdict": "; ".join(member_verdicts) if member_verdicts else np.nan,
                     **{f"rapid_max[{r.sensitive}]": r.rapid_max_mean for r in group.itertuples()}})
    return pd.DataFrame(rows) if rows else None


@register_measure
class Rapid(Measure):
    name = "rapid"
    title = "RAPID attribute-inference risk"
    risk = "attribute_inference"
    record_columns = ("row_id", "score", "at_risk")
    order = 10
    Settings = RapidSettings
    outputs = WorkflowOutputs(
        tables=("rapid", "rapid_max"), formats={"rapid_attribution": ("csv", "md"), "rapid_curves": ("csv", "md")},
        figures=("max", "curves", "attribution"), caption="rapid.rst", summary=summary_columns,
        summary_labels={"rapid_max": "RAPID_max, population-level inference (attackers beating chance)",
                        "rapid_chance_floor": "RAPID chance floor",
                        "rapid_excess": "RAPID excess over chance (population-level inference)",
                        "rapid_verdict": "RAPID population-level inference",
                        "rapid_member_excess": "RAPID member excess (members minus holdout)",
                        "rapid_member_verdict": "RAPID member excess verdict"})

    def units(self, schema, settings) -> list[str]:
        """(attacker, sensitive) pairs that apply (logit and the calibrated attackers only for
        categorical targets, linear only for continuous ones), as `unit_name` writes them."""
        from ..rapid.attackers import applicable

        return [unit_name(attacker, sensitive) for sensitive in schema.sensitive for attacker in settings.attackers
                if applicable(attacker, schema.is_categorical(sensitive))]

    def unit_key(self, unit: str) -> dict:
        attacker, sensitive = unit.split("-", 1)
        return {"attacker": attacker, "sensitive": sensitive}

    def run(self, data, settings: RapidSettings, unit):
        from ..rapid import rapid

        key = self.unit_key(unit)
        # The holdout (records the generator never saw) separates member-specific inference from
        # population-level inference; without one the member excess is not available.
        holdout = data.holdout if data.holdout is not None and len(data.holdout) else None
        if holdout is None and not settings.permutations:
            # Without a holdout the verdict is RAPID against its chance floor, which the permutations give.
            raise ConfigError("rapid: permutations 0 leaves RAPID untested against chance when no holdout is "
                              "given; give a holdout or set permutations >= 1")
        result = rapid(data.members, data.synthetic, schema=data.schema, sensitive=key["sensitive"],
                       attacker=key["attacker"], tau=settings.tau, epsilon=settings.epsilon, method=settings.method,
                       error=settings.error, n_trees=settings.n_trees, n_permutations=settings.permutations,
                       seed=data.seed, n_jobs=self.threads, null_refits=settings.null_refits,
                       max_train=settings.max_train, max_records=settings.max_records, holdout=holdout)
        # the members the attacker infers confidently and correctly
        outcomes = member_outcomes(attack_name(key["attacker"], key["sensitive"]), result.records[ROW_ID],
                                   result.records["at_risk"])
        return MeasureResult({**result.to_json(), "attribution": result.attribution.to_dict("records")},
                             result.records, outcomes)

    def log_line(self, result) -> str:
        s = result.summary
        line = f"RAPID = {s['rapid']:.4f} [{s['ci_low']:.4f}, {s['ci_high']:.4f}], p = {s.get('p_value')}"
        if s.get("member_excess") is not None:
            line += (f"; holdout {s['rapid_holdout']:.4f}, member excess {s['member_excess']:+.4f} "
                     f"[{s['member_excess_ci_low']:+.4f}, {s['member_excess_ci_high']:+.4f}], "
                     f"p = {s['member_excess_p_value']:.3g}")
        return line

    def tabulate(self, summaries, settings: RapidSettings) -> dict[str, pd.DataFrame]:
        from ..rapid.summary import tables

        return tables(summaries)

    def draw(self, summaries, tables, figures_dir, settings: RapidSettings) -> None:
        from ..rapid.summary import draw

        draw(summaries, tables["rapid_max"], figures_dir, settings.attackers[0])

    def evidence(self, tables) -> pd.DataFrame | None:
        """One row per dataset x generator x sensitive attribute x attacker.

        With a holdout: the member excess (RAPID on the members minus the same attacker on holdout
        records it never saw) against 0, with its interval (Newcombe's, widest over seeds), its
        exact one-sided permutation p-value (merged over seeds: twice the median) and the seeds where it is above 0
        (Holm over the suite); RAPID against its chance floor is population-level inference,
        which a release of other people of the population carries as well, so it is named in the
        detail only. Without a holdout: RAPID against its chance floor (label-permutation mean, or
        the refit null when higher), beating it when Holm over the suite rejects, as the fallback."""
        table = tables["rapid"]
        if "rapid_mean" not in table:
            return None
        table = table.dropna(subset=["rapid_mean"])
        member = (table["member_excess_mean"].notna() if "member_excess_mean" in table
                  else pd.Series(False, index=table.index))

        def column(name):
            return table[name] if name in table else pd.Series(np.nan, index=table.index)

        population = [f"population-level inference, RAPID {r:.3f} "
                      + (f"vs floor {f:.3f}" if pd.notna(f) else "(no chance test run: permutations 0)") + ", shown apart"
                      for r, f in zip(table["rapid_mean"], table["chance_floor_mean"])]
        detail = np.where(member, [f"RAPID on members minus the same attacker on holdout records it never saw ({p})"
                                   for p in population],
                          "reference: chance floor (permutation null); no holdout records, so the member excess is "
                          "not available and RAPID counts population-level inference (what the release teaches about "
                          "anyone of the population) as well as member-specific inference")
        return pd.DataFrame({
            "dataset": table["dataset"], "generator": table["generator"], "risk": self.risk,
            "measure": self.name, "attack": [attack_name(a, s) for a, s in zip(table["attacker"], table["sensitive"])],
            "metric": np.where(member, MEMBER_EXCESS, "RAPID"),
            "value": np.where(member, column("member_excess_mean"), table["rapid_mean"]),
            "reference": np.where(member, 0.0, table["chance_floor_mean"]),
            "ci_low": np.where(member, column("member_excess_ci_low_min"), table["ci_low_min"]),
            "ci_high": np.where(member, column("member_excess_ci_high_max"), table["ci_high_max"]),
            "n_seeds": table["n_seeds"],
            "n_seeds_beating": np.where(member, column("n_seeds_member_excess"), table["n_seeds_beating_chance"]),
            "tpr_at_1e-02": np.nan, "tpr_at_1e-03": np.nan, "tpr_at_1e-01": np.nan, "n_scored": np.nan,
            "detail": detail,
            "p_value": np.where(member, column("member_excess_p_value_merged"), column("p_value_max")),
            "effect_scale": 1.0, "n_identified": 0, "named_by": "",
            # the run of this attacker x attribute holds its records; the member excess reads the
            # members against the holdout, RAPID against its chance floor (no holdout) does not
            "unit": [unit_name(a, s) for a, s in zip(table["attacker"], table["sensitive"])], "reads_holdout": member})

    # --- the steward's audit ---------------------------------------------------------------------
    @staticmethod
    def _attacker_sensitive(row: dict) -> tuple[str, str]:
        """(attacker, sensitive) of an evidence row's attack `{attacker} -> {sensitive}`."""
        attacker, sensitive = [part.strip() for part in row["attack"].split("->", 1)]
        return attacker, sensitive

    def explain(self, row: dict) -> str:
        attacker, sensitive = self._attacker_sensitive(row)
        value, reference = float(row["value"]), float(row["reference"])
        if row.get("metric") == MEMBER_EXCESS:
            return (f"A model ({attacker}) trained on the release alone infers a training record's '{sensitive}' from its "
                    f"quasi-identifiers, confidently and correctly, {pct(value)} more often than for holdout records the "
                    f"release was not made from{interval(row)}; what it infers as well about anyone of the population "
                    "is population-level inference, not a leak of the training records (RAPID as published is in the "
                    "attack's detail). A release that keeps the data's associations carries that inference, "
                    "and no privacy mechanism removes it without removing the association: a steward who finds it too "
                    f"strong for '{sensitive}' can coarsen or leave out the quasi-identifiers that carry it (RAPID's "
                    "attribution, 'Who carries the attribute-inference risk') or leave the attribute out.")
        return (f"A model ({attacker}) trained on the release alone and given a training record's quasi-identifiers "
                f"infers its '{sensitive}' confidently and correctly for {pct(value)} of the training records"
                f"{interval(row)}; guessing from the release's label shares does so for {pct(reference)} "
                "(chance floor).")
