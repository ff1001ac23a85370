"""synthpop's disclosure measures (Raab, Nowok & Dibben 2024; `synthrisk.disclosure`) as two
measures: `repu`, identity disclosure (replicated uniques), read under singling out, and `disco`,
attribute disclosure (DiSCO: disclosive in the synthetic data, correct in the original), read
under attribute inference, per target. One job per synthetic dataset each; the audit runs both,
the workflow those its config names (`repu:`, `disco:`).

Keys default to the schema's quasi-identifiers and targets to its sensitive columns; numeric
columns with many values are read in quantile groups of the release (`synthrisk.disclosure.grouping`,
the breaks stated in the summary). Each attack reports:
- `synthpop`: the measures as synthpop computes them with the training records as the original
  (population-level, as RAPID as published is: they count what the release says about anyone
  who looks like a training record), and `holdout`: the same with the holdout records as the
  original (what the release says about people it was not made from);
- the member excess: every real record (members and holdout together, as one original) is
  flagged (a replicated unique: unique on the keys among the real records and in the release; or
  DiSCO on the target), and the members' share minus the holdout's share is the excess, with
  Newcombe's interval and the exact one-sided test of `synthrisk.stats.proportions`. Given the
  release, a record's flag depends on its own values and on the real records taken together (their
  keys; with `exclude_over_denom_lim`, also their cell counts), never on which of them were
  members, so under "the release says no more about members than about holdout records" the labels
  are exchangeable and the test is exact. (synthpop's repU on members minus repU on the
  holdout would count a key's uniqueness within each file, which depends on the labels.)

The member excess is the evidence the verdicts read: repU's under singling out, DiSCO's under
attribute inference (Holm over each risk's attacks, as for the others).

Summary JSON: `attacks`, one per target (repU: one, with target null): label, keys, target, groups,
synthpop, holdout, n_members, n_holdout, member_hits, holdout_hits, member_rate, holdout_rate,
member_excess, member_excess_ci_low/high, member_excess_p_value. Per-record table: row_id, member,
target, flagged (ids and flags only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ..data.split import ROW_ID
from ..disclosure import core
from ..disclosure.grouping import DEFAULT_GROUPS, group_columns
from ..errors import SynthriskError
from ..settings import setting
from ..stats.proportions import MEMBER_EXCESS_TEST, member_excess_test
from . import tabulate
from .base import Measure, MeasureResult, NotApplicable, WorkflowOutputs, hit_outcomes, reported_runs
from .registry import register_measure
from .wording import interval, pct

NOTE = ("reference: 0, members flagged as often as holdout records (every real record flagged with members and "
        f"holdout as one original); p: {MEMBER_EXCESS_TEST}; interval: Newcombe's hybrid score interval")


@dataclass(frozen=True)
class KeySettings:
    """The settings repU and DiSCO share: the keys, the groups of numeric columns and synthpop's
    key filters, refused where they enter (a config block, `synthrisk.measure(..., groups=1)`), not
    as a failed run."""

    keys: tuple[str, ...] | None = setting(None, "the key columns (null: the schema's quasi-identifiers)",
                                           minItems=1, uniqueItems=True)
    groups: int = setting(DEFAULT_GROUPS, "numeric key columns with more distinct values are read in this many "
                          "quantile groups (0: none; synthpop refuses 1)", minimum=0, **{"not": {"const": 1}})
    denom_lim: int = setting(core.DEFAULT_DENOM_LIM, "synthpop's denom.lim: with exclude_over_denom_lim, table cells "
                             "of more records than this are excluded", minimum=1)
    exclude_over_denom_lim: bool = setting(False, "synthpop's exclude.over.denom.lim: exclude the cells over "
                                           "denom_lim")
    use_keys_na: bool = setting(True, "synthpop's usekeys.na: a missing key value is a key level")


def _outputs(name: str, headline: str, labels: tuple[str, str]) -> WorkflowOutputs:
    """A synthpop measure's outputs: its columns of the summary table, synthpop's value `headline`
    (largest over targets) and the largest member excess per dataset x generator, with their labels."""

    def summary(tables) -> pd.DataFrame | None:
        table = tables[name]
        if "member_excess_mean" not in table:
            return None
        grouped = table.groupby(tabulate.PAIR)
        return pd.DataFrame({headline: grouped[f"{headline}_mean"].max(),
                             f"{name}_member_excess": grouped["member_excess_mean"].max()}).reset_index()

    return WorkflowOutputs(summary=summary, summary_labels=dict(zip((headline, f"{name}_member_excess"), labels)))


class _Synthpop(Measure):
    """What repU and DiSCO share: the keys, the groups, the three readings of one release and the
    member excess of the flag `flag` (a column of `synthrisk.disclosure.DisclosureResult.records`)."""

    flag: ClassVar[str]                 # the flag of `DisclosureResult.records` the excess counts
    headline: ClassVar[str]             # synthpop's number the tables lead with
    shown: ClassVar[tuple[str, ...]]    # synthpop's numbers on the audit's page
    caption_words: ClassVar[str]
    record_columns = ("row_id", "member", "target", "flagged")

    def targets(self, data, settings) -> list[str | None]:
        raise NotImplementedError

    def filters(self, settings, target: str | None) -> dict:
        return {"denom_lim": settings.denom_lim, "exclude_over_denom_lim": settings.exclude_over_denom_lim,
                "use_keys_na": settings.use_keys_na}

    def run(self, data, settings, unit):
        if data.holdout.empty:
            raise NotApplicable("needs holdout records (n_holdout > 0) for the member excess")
        keys = list(settings.keys or data.schema.quasi_identifiers)
        unknown = [k for k in keys if k not in data.schema.columns]
        if unknown:
            raise SynthriskError(f"{self.name}.keys: {unknown} are not columns of the dataset")
        if not keys:
            raise NotApplicable("needs key variables (the schema's quasi-identifiers, or keys:)")
        targets = self.targets(data, settings)
        numeric = [c for c in dict.fromkeys([*keys, *[t for t in targets if t]]) if c not in data.schema.categorical]
        frames, groups = group_columns({"members": data.members, "holdout": data.holdout,
                                        "synthetic": data.synthetic}, numeric, data.synthetic, settings.groups)
        members, holdout, synthetic = frames["members"], frames["holdout"], frames["synthetic"]
        real = pd.concat([members, holdout], ignore_index=True)
        is_member = np.arange(len(real)) < len(members)
        attacks, records, outcomes = [], [], []
        for target in targets:
            # a target that is also a key (settings that name it in both) is read on the other keys
            mine = [k for k in keys if k != target]
            if not mine:
                raise NotApplicable(f"no key is left for the target '{target}' once it is taken out of the keys")
            options = self.filters(settings, target)
            on_members = core.disclosure(members, synthetic, mine, target, **options)
            on_holdout = core.disclosure(holdout, synthetic, mine, target, **options)
            flags = core.disclosure(real, synthetic, mine, target, **options).records[self.flag].to_numpy(bool)
            hits, holdout_hits = int(flags[is_member].sum()), int(flags[~is_member].sum())
            test = member_excess_test(hits, len(members), holdout_hits, len(holdout))
            attacks.append({"label": self.label(target), "keys": list(on_members.keys), "target": target,
                            "groups": {c: groups[c] for c in [*on_members.keys, target] if c in groups},
                            "synthpop": _measures(on_members), "holdout": _measures(on_holdout),
                            "n_members": len(members), "n_holdout": len(holdout), "member_hits": hits,
                            "holdout_hits": holdout_hits, "member_rate": hits / len(members),
                            "holdout_rate": holdout_hits / len(holdout), **test})
            records.append(pd.DataFrame({ROW_ID: real[ROW_ID].to_numpy(), "member": is_member,
                                         "target": target or "", "flagged": flags}))
            outcomes.append(hit_outcomes(records[-1], "flagged", self.label(target)))
        return MeasureResult({"attacks": attacks}, pd.concat(records, ignore_index=True)[list(self.record_columns)],
                             pd.concat(outcomes, ignore_index=True))

    def label(self, target: str | None) -> str:
        raise NotImplementedError

    def log_line(self, result) -> str:
        return "; ".join(f"{a['label']}: synthpop {a['synthpop'][self.headline]:.2f} %, member excess "
                         f"{a['member_excess']:+.4f} [{a['member_excess_ci_low']:+.4f}, {a['member_excess_ci_high']:+.4f}], "
                         f"p = {a['member_excess_p_value']:.3g}" for a in result.summary["attacks"])

    # --- the tables and the evidence ---------------------------------------------------------------
    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        """Per dataset x generator x attack, over seeds: synthpop's value on the training records and on
        the holdout (percent), and the member excess with its interval and test."""
        runs = tabulate.collect_runs(summaries, {
            "attack": lambda a: a["label"], "synthpop": lambda a: a["synthpop"][self.headline],
            "synthpop_holdout": lambda a: a["holdout"][self.headline], "member_rate": lambda a: a["member_rate"],
            "holdout_rate": lambda a: a["holdout_rate"], "member_excess": lambda a: a["member_excess"],
            "ci_low": lambda a: a["member_excess_ci_low"], "ci_high": lambda a: a["member_excess_ci_high"],
            "p_value": lambda a: a["member_excess_p_value"],
            "beats": lambda a: a["member_excess_p_value"] <= 0.05}, rows=lambda info: info["attacks"])
        by = tabulate.PAIR + (["attack"] if "attack" in runs else [])
        table = tabulate.over_seeds(runs, by, ["synthpop", "synthpop_holdout", "member_rate", "holdout_rate",
                                               "member_excess"],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
        return {self.name: table.rename(columns={"synthpop_mean": f"{self.headline}_mean",
                                                 "synthpop_sd": f"{self.headline}_sd",
                                                 "synthpop_holdout_mean": f"{self.headline}_holdout_mean",
                                                 "synthpop_holdout_sd": f"{self.headline}_holdout_sd"})}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "member_excess_mean" not in table or "attack" not in table:
            return None
        rows = tabulate.evidence_rows(table, self.risk, self.name, lambda t: t["attack"],
                                      "member excess (members minus holdout)", "member_excess_mean", 0.0, NOTE)
        return rows.assign(reads_holdout=True)  # the member excess reads the members against the holdout

    # --- the steward's audit -----------------------------------------------------------------------

    def reported(self, summaries):
        """synthpop's numbers on the training records (as synthpop prints them) and on the holdout, the
        member excess with its interval and test, and notes stating the keys, groups, filters and the
        checks synthpop flags."""
        runs = reported_runs(summaries)
        if not runs:
            return None
        rows, notes = [], []
        for summary, seed in runs:
            for a in summary["attacks"]:
                rows.append({**seed, "measure": self.headline,
                             "target": a["target"] or "",
                             **{f"{name} on training records (%)": a["synthpop"][name] for name in self.shown},
                             f"{self.headline} on holdout records (%)": a["holdout"][self.headline],
                             "member excess": a["member_excess"], "ci_low": a["member_excess_ci_low"],
                             "ci_high": a["member_excess_ci_high"], "p-value": a["member_excess_p_value"]})
                notes += _notes(a)
        return {"caption": self.caption_words, "rows": rows, "notes": list(dict.fromkeys(notes))}


def _notes(attack: dict) -> list[str]:
    """What the reader needs to redo the numbers: keys, groups, filters, and synthpop's flags."""
    settings = attack["synthpop"]["settings"]
    notes = [f"Keys: {', '.join(attack['keys'])}."]
    for column, edges in attack["groups"].items():
        notes.append(f"'{column}' read in {len(edges) - 1} quantile groups of the release (breaks "
                     f"{', '.join(f'{b:g}' for b in edges)}).")
    filters = [f"denom_lim {settings['denom_lim']}" + ("" if settings["exclude_over_denom_lim"] else " (not applied: "
                                                        "exclude_over_denom_lim false, synthpop's default)")]
    if attack["target"]:
        filters += [f"thresh_1way {settings['thresh_1way']}", f"thresh_2way {settings['thresh_2way']}",
                    f"use_target_na {str(settings['use_target_na']).lower()}"]
        if settings["not_target_levels"]:
            filters.append(f"not_target_levels {settings['not_target_levels']} for '{attack['target']}'")
    filters.append(f"use_keys_na {str(all(settings['use_keys_na'])).lower()}")
    notes.append("Filters (synthpop's defaults unless set): " + ", ".join(filters) + ".")
    checks = attack["synthpop"]["checks"]
    one_way = checks.get("one_way") or {}
    if one_way.get("flagged"):
        notes.append(f"synthpop's one-way check flags '{attack['target']}' = {one_way['level']}: "
                     f"{one_way['pct']:.1f}% of the DiSCO records have it (a commonly known relationship may "
                     "account for them; not_target_levels leaves it out).")
    if checks.get("two_way"):
        notes.append(f"synthpop's two-way check: {len(checks['two_way'])} key-target pair(s) of '{attack['target']}' "
                     "need checks (a key level where most original records share the target level).")
    return notes


def _measures(result: core.DisclosureResult) -> dict:
    """synthpop's numbers of one reading (percent), its filters and checks."""
    return {**result.identity, **(result.attribute | result.caps if result.target is not None else {}),
            "n_original": result.n_original, "settings": result.settings, "checks": result.checks}


@register_measure
class ReplicatedUniques(_Synthpop):
    name = "repu"
    title = "Replicated uniques (synthpop's identity disclosure)"
    risk = "singling_out"
    flag = "replicated_unique"
    headline = "repU"
    shown = ("UiO", "repU")
    caption_words = ("Identity disclosure (synthpop's replicated uniques): UiO, the training records unique on the "
                     "keys; repU, those whose keys are unique in the release too. The member excess compares members "
                     "with holdout records, all of them read as one original.")
    order = 65
    outputs = _outputs("repu", "repU", ("repU, % of training records (synthpop)", "replicated uniques: member excess"))

    Settings = KeySettings

    def targets(self, data, settings):
        return [None]

    def label(self, target):
        return "replicated uniques (repU)"

    def explain(self, row: dict) -> str:
        return (f"synthpop's replicated uniques: a training record unique on its quasi-identifiers among the real "
                f"records and unique in the release too lets an intruder who knows those values find the person's "
                f"one synthetic record; {pct(float(row['value']))} more training records than holdout records are "
                f"such replicated uniques{interval(row)} (0% = the release reproduces unique people it was made from "
                "no more often than unique people it never saw).")


@register_measure
class DiSCO(_Synthpop):
    name = "disco"
    title = "DiSCO (synthpop's attribute disclosure)"
    risk = "attribute_inference"
    flag = "disco"
    headline = "DiSCO"
    shown = ("Dorig", "DiSCO")
    caption_words = ("Attribute disclosure (synthpop's DiSCO), per target: Dorig, the training records whose key "
                     "group shares one target value in the original; DiSCO, those whose key group in the release "
                     "has one target value, their own. The member excess compares members with holdout records.")
    order = 85
    outputs = _outputs("disco", "DiSCO", ("DiSCO, % of training records (synthpop; largest over targets)",
                                          "DiSCO: member excess (largest over targets)"))

    @dataclass(frozen=True)
    class Settings(KeySettings):
        targets: tuple[str, ...] | None = setting(None, "the target columns (null: the schema's sensitive "
                                                  "columns)", minItems=1, uniqueItems=True)
        not_target_levels: dict = setting({}, "target -> its levels that are common knowledge (synthpop's "
                                          "not.targetlev), e.g. {income: ['<=50K']}",
                                          additionalProperties={"type": "array"})
        use_target_na: bool = setting(True, "synthpop's usetarget.na: a missing target value is a target level")
        thresh_1way: tuple[float, float] = setting(
            core.DEFAULT_THRESH_1WAY, "synthpop's thresh.1way: [DiSCO records, % of them] above which the commonest "
            "target level is flagged", minItems=2, maxItems=2, items={"minimum": 0})
        thresh_2way: tuple[float, float] = setting(
            core.DEFAULT_THRESH_2WAY, "synthpop's thresh.2way: [original records, % holding the target level] above "
            "which a key-target pair is flagged", minItems=2, maxItems=2, items={"minimum": 0})

    def targets(self, data, settings):
        targets = list(settings.targets or data.schema.sensitive)
        unknown = [t for t in targets if t not in data.schema.columns]
        if unknown:
            raise SynthriskError(f"disco.targets: {unknown} are not columns of the dataset")
        if not targets:
            raise NotApplicable("needs a target (the schema's sensitive columns, or targets:)")
        return targets

    def filters(self, settings, target):
        return {**super().filters(settings, target), "not_target_levels": settings.not_target_levels.get(target, ()),
                "use_target_na": settings.use_target_na, "thresh_1way": settings.thresh_1way,
                "thresh_2way": settings.thresh_2way}

    def label(self, target):
        return f"DiSCO -> {target}"

    def explain(self, row: dict) -> str:
        target = row["attack"].split("->", 1)[1].strip()
        return (f"synthpop's DiSCO on '{target}': the release's records that share a person's quasi-identifiers all "
                f"have one '{target}', and it is the person's own; that holds for {pct(float(row['value']))} more "
                f"training records than holdout records{interval(row)} (what it holds for anyone is population-level "
                "disclosure, in the measure's table as synthpop reports it).")
