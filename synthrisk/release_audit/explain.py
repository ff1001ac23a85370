"""What each number of the audit means, in one sentence a non-specialist can act on, and which
subgroups of the members carry the risk.

The sentences read the verdict row of `synthrisk.measures.verdict.risk_table` (the strongest
attack of a risk, or the closest one when none beats its reference): what the attack's number says
is the measure's own sentence (`Measure.explain`), whether it beats its reference and matters under
the policy is said here for every measure alike. The subgroups are those of RAPID's
attribution (`synthrisk.data.subgroups.attribute_risk`) on the members the strongest attack got
right, read from its outcomes (`synthrisk.measures.base.OUTCOME_COLUMNS`)."""

from __future__ import annotations

import pandas as pd

from ..data.split import ROW_ID
from ..data.subgroups import OTHER, attribute_risk
from ..measures.base import RISKS, Measure
from ..measures.policy import LEVELS
from ..measures.wording import finite, pct

#: subgroups shown per risk, and the fewest members a subgroup must hold to be shown (smaller
#: ones describe a handful of identifiable people, and their rates are noise)
N_SUBGROUPS, MIN_SUBGROUP = 5, 20


def meaning(row: dict, measure: Measure) -> str:
    """One sentence on the number (the sentence of `measure`, whose attack the verdict row shows),
    then the decision against the threshold: what the interval says, and for an inconclusive risk
    what would decide it."""
    n, k = int(row["n_attacks_beating"]), int(row["n_attacks"])
    threshold = float(row["threshold"])
    interval = finite(row.get("effect_low")) and finite(row.get("effect_high"))
    # the two bounds answer two questions at two levels (synthrisk.measures.policy): "at risk?" over
    # all the risk's attacks at once, "below?" per attack at the audit's level
    effect = (f"its effect is {pct(float(row['effect']))}: at least {pct(float(row['effect_low']))} with the "
              f"confidence of every attack of the risk at once, and at most {pct(float(row['effect_high']))} "
              f"at the audit's level {float(row['audit_alpha']):g}"
              if interval else f"its effect is {pct(float(row['effect']))}, with no interval")
    beating = f"{n} of {k} attacks beat their reference"
    identified = int(row.get("n_identified") or 0)
    if row["level"] == LEVELS["at_risk"] and identified and row.get("named_by"):
        tail = (f"It got right {identified} of the members whom {row['named_by']} names with a controlled "
                f"false-discovery rate (listed below): the release is at risk of {RISKS[row['risk']]}.")
    elif row["level"] == LEVELS["at_risk"] and identified:
        tail = (f"It names {identified} training record{'s' if identified != 1 else ''} as members with a controlled "
                f"false-discovery rate (listed below): the release is at risk of {RISKS[row['risk']]}.")
    elif row["level"] == LEVELS["at_risk"]:
        tail = (f"{effect[0].upper()}{effect[1:]}: even its lower end is above the threshold of {pct(threshold)}, so "
                f"the release is at risk of {RISKS[row['risk']]} ({beating}).")
    elif row["level"] == LEVELS["below"]:
        tail = (f"Every attack's upper bound is below the threshold of {pct(threshold)} (the highest is this one: "
                f"{effect}): this risk is below the threshold ({beating}).")
    else:
        factor = row.get("decide_factor")
        decide = (f" At this estimate, about {float(factor):.1f} times the records in every file (training, holdout "
                  "and release) would decide it." if finite(factor) else "")
        tail = (f"{effect[0].upper()}{effect[1:]}, which straddles the threshold of {pct(threshold)}: this audit cannot "
                f"tell whether the risk is above or below it ({beating}).{decide}")
    return f"{measure.explain(row)} {tail}"


def subgroups(outcomes: pd.DataFrame, members: pd.DataFrame, schema) -> list[dict]:
    """The members' subgroups (a quasi-identifier's level or quintile) with the highest share that the
    strongest attack gets right (its `outcomes`: the attacked members and its hits), with their size
    and the share over all attacked members. None when it got every attacked member right, or lists
    only its hits (singling out's queries): no subgroup then stands out."""
    hits = outcomes["hit"].to_numpy(bool)
    if not hits.any() or hits.all():
        return []
    attacked = members.set_index(ROW_ID).loc[outcomes[ROW_ID].to_numpy()].reset_index()
    groups = attribute_risk(attacked, hits, schema, min_group=MIN_SUBGROUP)
    groups = groups[(groups["group"] != OTHER) & (groups["n"] >= MIN_SUBGROUP)]
    overall = float(hits.mean())
    # Only groups more exposed than the attacked members as a whole: when every group sits at the
    # overall share (an identity release exposes everyone), no subgroup stands out.
    groups = groups[groups["rapid"] > overall + 1e-12]
    top = groups.sort_values(["rapid", "n"], ascending=[False, False]).head(N_SUBGROUPS)
    return [{"column": r.quasi_identifier, "group": r.group, "n": int(r.n), "n_exposed": int(r.n_at_risk),
             "share_exposed": float(r.rapid), "share_exposed_overall": overall} for r in top.itertuples()]
