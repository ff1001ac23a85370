"""What each number of the audit means, in one sentence a non-specialist can act on.

The sentences read the verdict row of `synthrisk.measures.verdict.risk_table` (the strongest
attack of a risk, or the closest one when none beats its reference): what the attack's number says
is the measure's own sentence (`Measure.explain`), whether it beats its reference and matters under
the policy is said here for every measure alike."""

from __future__ import annotations

from ..measures.base import RISKS, Measure
from ..measures.policy import LEVELS
from ..measures.wording import finite, pct


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

