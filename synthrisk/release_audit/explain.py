"""What each number of the audit means, in one sentence a non-specialist can act on, and which
subgroups of the members carry the risk.

The sentences read the verdict row of `synthrisk.measures.verdict.risk_table` (the strongest
attack of a risk, or the closest one when none beats its reference); the subgroups reuse RAPID's
attribution (`synthrisk.rapid.attribution.attribute_risk`) on the flags of the strongest attack's
own per-record table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..data.split import ROW_ID
from ..measures.base import RISKS
from ..measures.policy import LEVELS
from ..rapid.attribution import OTHER, attribute_risk

#: subgroups shown per risk, and the fewest members a subgroup must hold to be shown (smaller
#: ones describe a handful of identifiable people, and their rates are noise)
N_SUBGROUPS, MIN_SUBGROUP = 5, 20


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _interval(row: dict, scale=_pct) -> str:
    low, high = row.get("ci_low"), row.get("ci_high")
    if low is None or high is None or any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return ""
    return f" (95% interval {scale(low)} to {scale(high)})"


def _number(value: float) -> str:
    return f"{value:.3f}"


def _sentence(row: dict) -> str:
    """What the attack's number says, by the measure that produced it."""
    measure, value, reference = row["measure"], float(row["value"]), float(row["reference"])
    attack = row["attack"]
    if measure == "rapid":
        attacker, sensitive = [part.strip() for part in attack.split("->", 1)]
        if row.get("metric") == "RAPID member excess":
            return (f"A model ({attacker}) trained on the release alone infers a training record's '{sensitive}' from its "
                    f"quasi-identifiers, confidently and correctly, {_pct(value)} more often than for holdout records the "
                    f"release was not made from{_interval(row)}; what it infers as well about anyone of the population "
                    "is population-level inference, not a leak of the training records.")
        return (f"A model ({attacker}) trained on the release alone and given a training record's quasi-identifiers "
                f"infers its '{sensitive}' confidently and correctly for {_pct(value)} of the training records"
                f"{_interval(row)}; guessing from the release's label shares does so for {_pct(reference)} "
                "(chance floor).")
    if measure in ("mia", "domias"):
        tpr = row.get("tpr_at_1e-02")
        extra = (f"; it flags {_pct(tpr)} of training records while wrongly flagging 1% of other people"
                 if tpr is not None and not (isinstance(tpr, float) and math.isnan(tpr)) else "")
        return (f"Given a person's record and the release, the attack '{attack}' tells whether the person was in "
                f"the training data with AUC {_number(value)}{_interval(row, _number)} where 0.5 is a coin toss"
                f"{extra}.")
    if measure == "dcr":
        return (f"Distance to closest record: {_pct(value)} of the synthetic records lie closer to a training record "
                f"than to any holdout record{_interval(row)}; a generator that does not copy its training records "
                f"gives {_pct(reference)} (both compared on equally many records).")
    if measure in ("singling_out", "linkability", "inference"):
        doing = {"singling_out": "isolates a single training record with a query written from the release",
                 "linkability": "links the two halves of a training record's columns through the release",
                 "inference": "guesses a training record's sensitive value from its nearest synthetic record"}[measure]
        return (f"The attack '{attack}' {doing}; its success on training records, corrected for its success on "
                f"holdout records the generator never saw, is {_pct(value)}{_interval(row)} (0% = it does no "
                "better on training records than on strangers, 100% = it succeeds on every training record).")
    return f"{attack}: {row['metric']} {value:.3g} against its reference {reference:.3g}."


def meaning(row: dict) -> str:
    """One sentence on the number, one on whether it beats its reference and whether that matters
    under the policy, and what the audit could have detected."""
    n, k = int(row["n_attacks_beating"]), int(row["n_attacks"])
    threshold, alpha = float(row["threshold"]), float(row["alpha"])
    effect = (f"its effect (the share of records exposed beyond chance) is {_pct(float(row['effect']))}, at least "
              f"{_pct(float(row['effect_low']))} with the attacks' simultaneous confidence"
              if _finite(row.get("effect_low")) else f"its effect is {_pct(float(row['effect']))}")
    if row["level"] == LEVELS["at_risk"]:
        tail = (f"This beats its reference ({n} of {k} attacks do, family-wise level {alpha:g}), and {effect}, above the "
                f"policy threshold of {_pct(threshold)}: the release is at risk of {RISKS[row['risk']]}.")
    elif row["level"] == LEVELS["detectable"]:
        tail = (f"This beats its reference ({n} of {k} attacks do, family-wise level {alpha:g}), but {effect}, which "
                f"does not clear the policy threshold of {_pct(threshold)}: a detectable effect too small to matter "
                "under this policy.")
    else:
        could = (f" With its power, this audit would have detected an effect of {_pct(float(row['detectable_effect']))} "
                 "or more." if _finite(row.get("detectable_effect")) else "")
        tail = (f"This does not beat its reference, nor does any of the {k} attacks tried at family-wise level "
                f"{alpha:g}: no evidence of this risk on this release (absence of evidence for these attacks, not a "
                f"proof).{could}")
    return f"{_sentence(row)} {tail}"


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(float(value))


def _flags(measure: str, attack: str, records: pd.DataFrame) -> pd.DataFrame | None:
    """(row_id, flag) of the attacked members in the strongest attack's per-record table: which of
    them the attack got right. None for a measure whose records are not per member."""
    if records.empty:
        return None
    if measure == "rapid":
        return pd.DataFrame({ROW_ID: records[ROW_ID], "flag": records["at_risk"].astype(bool)})
    if measure in ("mia", "domias"):
        members = records[records["member"] == 1]
        score = "p_member_true" if measure == "mia" else "score"
        non_members = records.loc[records["member"] == 0, score].to_numpy(float)
        if not len(non_members):
            return None
        # flagged: scored above all but 1% of the non-members (the attack's TPR at FPR 1e-2)
        cut = np.quantile(non_members, 0.99)
        return pd.DataFrame({ROW_ID: members[ROW_ID], "flag": members[score].to_numpy(float) > cut})
    if measure in ("linkability", "inference"):
        part = records[records["member"].astype(bool)]
        if measure == "inference" and "->" in attack:
            part = part[part["secret"] == attack.split("->", 1)[1].strip()]
        column = "linked" if measure == "linkability" else "correct"
        return pd.DataFrame({ROW_ID: part[ROW_ID], "flag": part[column].astype(bool)})
    return None  # DCR: per synthetic record; singling out: per query


def subgroups(row: dict, records: pd.DataFrame, members: pd.DataFrame, schema) -> list[dict]:
    """The members' subgroups (a quasi-identifier's level or quintile) with the highest share that the
    strongest attack gets right, with their size and the share over all attacked members."""
    flags = _flags(row["measure"], row["attack"], records)
    if flags is None or flags.empty or not flags["flag"].any():
        return []
    attacked = members.set_index(ROW_ID).loc[flags[ROW_ID].to_numpy()].reset_index()
    groups = attribute_risk(attacked, flags["flag"].to_numpy(), schema, min_group=MIN_SUBGROUP)
    groups = groups[(groups["group"] != OTHER) & (groups["n"] >= MIN_SUBGROUP)]
    overall = float(flags["flag"].mean())
    # Only groups more exposed than the attacked members as a whole: when every group sits at the
    # overall share (an identity release exposes everyone), no subgroup stands out.
    groups = groups[groups["rapid"] > overall + 1e-12]
    top = groups.sort_values(["rapid", "n"], ascending=[False, False]).head(N_SUBGROUPS)
    return [{"column": r.quasi_identifier, "group": r.group, "n": int(r.n), "n_exposed": int(r.n_at_risk),
             "share_exposed": float(r.rapid), "share_exposed_overall": overall} for r in top.itertuples()]
