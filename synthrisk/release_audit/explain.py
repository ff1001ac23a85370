"""What each number of the audit means, in one sentence a non-specialist can act on, and which
subgroups of the members carry the risk.

The sentences read the verdict row of `synthrisk.measures.verdict.risk_table` (the strongest
attack of a risk, or the closest one when none beats its reference): what the attack's number says
is the measure's own sentence (`Measure.explain`), whether it beats its reference and matters under
the policy is said here for every measure alike. The subgroups reuse RAPID's attribution
(`synthrisk.rapid.attribution.attribute_risk`) on the members the strongest attack got right, which
the measure reads from its own per-record table (`Measure.exposed_members`)."""

from __future__ import annotations

import pandas as pd

from ..data.split import ROW_ID
from ..measures.base import RISKS, Measure
from ..measures.policy import LEVELS
from ..measures.wording import finite, pct
from ..rapid.attribution import OTHER, attribute_risk

#: subgroups shown per risk, and the fewest members a subgroup must hold to be shown (smaller
#: ones describe a handful of identifiable people, and their rates are noise)
N_SUBGROUPS, MIN_SUBGROUP = 5, 20


def meaning(row: dict, measure: Measure) -> str:
    """One sentence on the number (the sentence of `measure`, whose attack the verdict row's strongest
    is), one on whether it beats its reference and whether that matters under the policy, and what
    the audit could have detected."""
    n, k = int(row["n_attacks_beating"]), int(row["n_attacks"])
    threshold, alpha = float(row["threshold"]), float(row["alpha"])
    effect = (f"its effect (the share of records exposed beyond chance) is {pct(float(row['effect']))}, at least "
              f"{pct(float(row['effect_low']))} with the attacks' simultaneous confidence"
              if finite(row.get("effect_low")) else f"its effect is {pct(float(row['effect']))}")
    if row["level"] == LEVELS["at_risk"]:
        tail = (f"This beats its reference ({n} of {k} attacks do, family-wise level {alpha:g}), and {effect}, above the "
                f"policy threshold of {pct(threshold)}: the release is at risk of {RISKS[row['risk']]}.")
    elif row["level"] == LEVELS["detectable"]:
        tail = (f"This beats its reference ({n} of {k} attacks do, family-wise level {alpha:g}), but {effect}, which "
                f"does not clear the policy threshold of {pct(threshold)}: a detectable effect too small to matter "
                "under this policy.")
    else:
        could = (f" With its power, this audit would have detected an effect of {pct(float(row['detectable_effect']))} "
                 "or more." if finite(row.get("detectable_effect")) else "")
        tail = (f"This does not beat its reference, nor does any of the {k} attacks tried at family-wise level "
                f"{alpha:g}: no evidence of this risk on this release (absence of evidence for these attacks, not a "
                f"proof).{could}")
    return f"{measure.explain(row)} {tail}"


def subgroups(row: dict, measure: Measure, records: pd.DataFrame, members: pd.DataFrame, schema) -> list[dict]:
    """The members' subgroups (a quasi-identifier's level or quintile) with the highest share that the
    strongest attack (of `measure`, its per-record table `records`) gets right, with their size and
    the share over all attacked members."""
    flags = None if records.empty else measure.exposed_members(row, records)
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
