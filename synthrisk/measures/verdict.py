"""One verdict per risk: for every dataset x generator and risk type (membership, attribute
inference, singling out, linkability), every attack of every measure of that risk read against its
own reference point, with the family of attacks controlled and the effect read against a policy.

- Each attack has a one-sided p-value of beating its reference (its measure's own test; over seeds
  the median, so that a p-value below a level means it does so in a majority of seeds; a measure that
  gives none has one derived from its 95% interval). Holm's procedure over the risk's attacks at the
  policy's family-wise level `alpha` decides which attacks beat their reference: with k attacks
  tried, "any attack beats its reference" is then wrong at most `alpha` of the time under the null.
- Effects share one scale (`synthrisk.measures.policy`): effect = effect_scale x (value - reference),
  with a simultaneous interval over the risk's k attacks (Bonferroni: each at 1 - alpha/k, from the
  attack's own interval's spread on each side, so that an asymmetric interval, such as the score
  intervals of the control-set risks and of RAPID's member excess, keeps its shape), so the strongest
  attack, chosen after looking at all k, is still covered.
- The level: *at risk* when an attack beats its reference and its simultaneous lower bound lies above
  the policy threshold; *detectable, below the policy threshold* when an attack beats its reference
  but no lower bound clears the threshold; *no evidence* otherwise, with the effect this audit could
  have detected with the policy's power (normal approximation from the most precise attack's spread).
- The strongest attack is the one with the largest simultaneous lower bound among those that beat
  their reference; when none does, the one closest to doing so (smallest p-value), so that a reader
  sees how far from its reference the best attempt was.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..multiple_testing import holm_adjusted
from .base import EVIDENCE_COLUMNS, RISKS
from .policy import LEVELS, Policy

PAIR = ["dataset", "generator"]
RISK_COLUMNS = PAIR + ["risk", "level", "verdict", "attack", "measure", "metric", "value", "reference", "excess",
                       "ci_low", "ci_high", "p_value", "p_holm", "effect", "effect_low", "effect_high", "threshold",
                       "alpha", "detectable_effect", "n_seeds_beating", "n_seeds", "tpr_at_1e-02", "tpr_at_1e-03",
                       "n_attacks", "n_attacks_beating", "detail"]
NO_ATTACK = "no attack beats its reference"
Z95 = float(norm.ppf(0.975))


def _spread(evidence: pd.DataFrame) -> pd.Series:
    """The standard error of each attack's value, from the width of its 95% interval (NaN without
    one). A zero-width interval is a standard error of 0, not a missing one: an attack that separates
    every member from every holdout record (AUC 1, interval [1, 1]) is certain, and must be able to
    clear the policy threshold."""
    width = evidence["ci_high"].astype(float) - evidence["ci_low"].astype(float)
    return (width / (2 * Z95)).where(width >= 0)


def _side_spreads(evidence: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(below, above): the standard errors of each attack's value on the side of its interval's lower
    and upper end (the distance to that end at 95%), so that an asymmetric interval keeps its shape
    when `decisions` rescales it to the simultaneous level. NaN without an interval."""
    value = evidence["value"].astype(float)
    ok = _spread(evidence).notna()
    below = ((value - evidence["ci_low"].astype(float)).clip(lower=0.0) / Z95).where(ok)
    above = ((evidence["ci_high"].astype(float) - value).clip(lower=0.0) / Z95).where(ok)
    return below, above


def decisions(evidence: pd.DataFrame, policy: Policy | None = None) -> pd.DataFrame:
    """`evidence` with, per attack: `p` (its p-value, or one from its interval), `p_holm` (Holm-adjusted
    over the attacks of its dataset x generator x risk), `beats` (p_holm <= alpha), `family_size`,
    `effect`, `effect_se` and the simultaneous `effect_low` / `effect_high`."""
    policy = policy or Policy()
    out = evidence.copy()
    if out.empty:
        return out.assign(p=[], p_holm=[], beats=[], family_size=[], effect=[], effect_se=[], effect_low=[],
                          effect_high=[], excess=[])
    value, reference = out["value"].astype(float), out["reference"].astype(float)
    scale = out["effect_scale"].astype(float).fillna(1.0) if "effect_scale" in out else pd.Series(1.0, index=out.index)
    se = _spread(out)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (value - reference) / se
    # se 0: the value is certain; it beats its reference exactly when it is above it
    z = z.where(se > 0, np.where(value > reference, np.inf, -np.inf))
    derived = pd.Series(norm.sf(z), index=out.index).where(se.notna())
    p = pd.to_numeric(out["p_value"], errors="coerce") if "p_value" in out else pd.Series(np.nan, index=out.index)
    out["p"] = p.fillna(derived).fillna(1.0).clip(0.0, 1.0)
    out["excess"] = value - reference
    out["effect"] = scale * (value - reference)
    out["effect_se"] = scale * se
    keys = PAIR + ["risk"]
    out["family_size"] = out.groupby(keys)["p"].transform("size")
    out["p_holm"] = out.groupby(keys)["p"].transform(holm_adjusted)
    out["beats"] = out["p_holm"] <= policy.alpha
    z = norm.ppf(1 - policy.alpha / (2 * out["family_size"].astype(float)))
    below, above = _side_spreads(out)
    out["effect_low"] = out["effect"] - z * scale * below
    out["effect_high"] = out["effect"] + z * scale * above
    return out


def beats(evidence: pd.DataFrame, policy: Policy | None = None) -> pd.Series:
    """Which attacks beat their reference, with the family of each risk controlled (Holm)."""
    return decisions(evidence, policy)["beats"]


def detectable_effect(group: pd.DataFrame, policy: Policy) -> float:
    """The smallest effect Holm's first step detects with the policy's power, from the most precise
    attack of the risk (normal approximation at its observed spread)."""
    se = group["effect_se"].dropna()
    if se.empty:
        return float("nan")
    k = len(group)
    return float((norm.ppf(1 - policy.alpha / k) + norm.ppf(policy.power)) * se.min())


def risk_table(evidence: pd.DataFrame, policy: Policy | None = None) -> pd.DataFrame:
    """One row per dataset x generator x risk (RISK_COLUMNS) from the measures' evidence rows."""
    policy = policy or Policy()
    if evidence.empty:
        return pd.DataFrame(columns=RISK_COLUMNS)
    decided = decisions(evidence, policy)
    rows = []
    for (dataset, generator, risk), group in decided.groupby(PAIR + ["risk"], sort=False):
        winners = group[group["beats"]]
        threshold = policy.threshold(risk)
        if len(winners):
            best = winners.assign(_low=winners["effect_low"].fillna(-np.inf)).sort_values(
                ["_low", "attack"], ascending=[False, True]).iloc[0]
            material = bool(np.isfinite(best["effect_low"]) and best["effect_low"] > threshold)
            level = "at_risk" if material else "detectable"
        else:
            best = group.sort_values(["p", "attack"]).iloc[0]
            level = "no_evidence"
        power = detectable_effect(group, policy)
        verdict = _verdict_text(level, best, len(group), len(winners), threshold, policy, power)
        rows.append({"dataset": dataset, "generator": generator, "risk": risk, "level": LEVELS[level],
                     "verdict": verdict,
                     **{c: best[c] for c in RISK_COLUMNS if c in best and c not in ("dataset", "generator", "risk",
                                                                                     "p_value", "level")},
                     "p_value": best["p"], "threshold": threshold, "alpha": policy.alpha,
                     "detectable_effect": power, "n_attacks": len(group), "n_attacks_beating": len(winners)})
    table = pd.DataFrame(rows)[RISK_COLUMNS]
    order = {risk: i for i, risk in enumerate(RISKS)}
    return table.sort_values(PAIR + ["risk"], key=lambda s: s.map(order) if s.name == "risk" else s,
                             kind="stable").reset_index(drop=True)


def _verdict_text(level: str, best: pd.Series, n: int, n_beating: int, threshold: float, policy: Policy,
                  power: float) -> str:
    family = f"Holm over {n} attack{'s' if n != 1 else ''} at {policy.alpha:g}"
    shown = f"{best['metric']} {best['value']:.3f} vs reference {best['reference']:.3f}"
    bound = (f"effect {best['effect']:.3f}, simultaneous lower bound {best['effect_low']:.3f}"
             if np.isfinite(best["effect_low"]) else f"effect {best['effect']:.3f}, no interval")
    if level == "at_risk":
        return (f"at risk: {best['attack']} ({shown}; {bound} above the policy threshold {threshold:g}; "
                f"{n_beating} of {n} attacks beat their reference, {family})")
    if level == "detectable":
        return (f"{LEVELS['detectable']}: {best['attack']} ({shown}; {bound}, not above the policy threshold "
                f"{threshold:g}; {n_beating} of {n} attacks beat their reference, {family})")
    could = (f"; with {policy.power:.0%} power this audit detects an effect of {power:.3f} or more"
             if np.isfinite(power) else "")
    return (f"no evidence: {NO_ATTACK} ({family}; closest: {best['attack']}, {shown}, p = {best['p']:.2g}{could})")


def verdict_columns(risks: pd.DataFrame) -> pd.DataFrame | None:
    """The summary's `verdict_{risk}` columns, one per risk type measured."""
    if risks.empty:
        return None
    wide = risks.pivot(index=PAIR, columns="risk", values="verdict")
    wide = wide[[r for r in RISKS if r in wide]]
    wide.columns = [f"verdict_{r}" for r in wide.columns]
    return wide.reset_index()


#: evidence columns a measure (a plug-in written before them, say) may leave out, with their defaults:
#: no p-value (the verdict then derives one from the interval) and an effect on the value's own scale
OPTIONAL_EVIDENCE = {"p_value": float("nan"), "effect_scale": 1.0}


def collect_evidence(measures, tables_dir) -> pd.DataFrame:
    parts = [m.evidence(tables_dir) for m in measures.values() if m.risk]
    parts = [p.assign(**{c: v for c, v in OPTIONAL_EVIDENCE.items() if c not in p})[EVIDENCE_COLUMNS]
             for p in parts if p is not None and len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EVIDENCE_COLUMNS)


VERDICT_LABELS = {f"verdict_{risk}": f"verdict: {label}" for risk, label in RISKS.items()}
