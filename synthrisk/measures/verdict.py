"""One verdict per risk: for every dataset x generator and risk type (membership, attribute
inference, singling out, linkability), every attack of every measure of that risk read against its
own reference point, and the risk decided against the policy's threshold
(`synthrisk.measures.policy`: at risk / below the threshold / inconclusive).

- Each attack has a one-sided p-value of beating its reference (its measure's own test; over seeds
  twice the median, a valid merged p-value; a measure that gives none has one derived from its 95%
  interval). Holm's procedure over the risk's attacks at the risk's level (`Policy.risk_alpha`, the
  audit's family-wise level over its four risks) decides which attacks beat their reference
  (`beats`, what the calibration study counts as "fired").
- Effects share one scale per risk: effect = effect_scale x (value - reference), with bounds from
  the attack's own interval's spread on each side, so that an asymmetric interval, such as the score
  intervals of the control-set risks and of RAPID's member excess, keeps its shape. The lower bound
  is one-sided at `lower_alpha / k`, simultaneous over the risk's k attacks (Bonferroni; the share of
  the audit's level the bounds spend on "at risk"): the attack chosen after looking at all k is still
  covered. The upper bound is one-sided at `upper_alpha` per attack: "below" needs every attack's
  upper bound below the threshold, an intersection-union test whose false "below" (and false "yes")
  is at most that level with no split (`synthrisk.measures.policy`).
- The level: *at risk* when an attack's simultaneous lower bound lies above the threshold, or when a
  measure identifies a person (`n_identified` > 0: members named with a controlled false-discovery
  rate); *below the threshold* when every attack has an interval and every upper bound lies below
  it; *inconclusive* otherwise, with how many times the records would decide it at the current
  estimates (`decide_factor`: the most any attack straddling the threshold needs).
- The attack shown: for *at risk* the one with the largest lower bound (or the identifying one); else
  the one with the largest upper bound, which is the one that keeps the risk from being below the
  threshold (an attack without an interval first).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..stats.multiple_testing import holm_adjusted
from .base import EVIDENCE_COLUMNS, RISKS, TPR_COLUMNS
from .policy import ANSWERS, LEVELS, Policy

PAIR = ["dataset", "generator"]
RISK_COLUMNS = PAIR + ["risk", "level", "verdict", "attack", "measure", "metric", "value", "reference", "excess",
                       "ci_low", "ci_high", "p_value", "p_holm", "effect", "effect_low", "effect_high", "threshold",
                       "alpha", "audit_alpha", "detectable_effect", "decide_factor", "beats", "n_identified",
                       "named_by", "n_seeds_beating", "n_seeds", "tpr_at_1e-02", "tpr_at_1e-03", "tpr_at_1e-01",
                       "n_scored", "n_attacks", "n_attacks_beating",
                       "detail", "unit", "reads_holdout"]
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
    `effect`, `effect_se`, the simultaneous `effect_low` and the per-attack `effect_high`."""
    policy = policy or Policy()
    out = with_defaults(evidence)
    if out.empty:
        return out.assign(p=[], p_holm=[], beats=[], family_size=[], effect=[], effect_se=[], effect_low=[],
                          effect_high=[], excess=[])
    value, reference = out["value"].astype(float), out["reference"].astype(float)
    scale = out["effect_scale"].astype(float).fillna(1.0)
    se = _spread(out)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (value - reference) / se
    # se 0: the value is certain; it beats its reference exactly when it is above it
    z = z.where(se > 0, np.where(value > reference, np.inf, -np.inf))
    derived = pd.Series(norm.sf(z), index=out.index).where(se.notna())
    p = pd.to_numeric(out["p_value"], errors="coerce")
    out["p"] = p.fillna(derived).fillna(1.0).clip(0.0, 1.0)
    out["excess"] = value - reference
    out["effect"] = scale * (value - reference)
    out["effect_se"] = scale * se
    keys = PAIR + ["risk"]
    out["family_size"] = out.groupby(keys)["p"].transform("size")
    out["p_holm"] = out.groupby(keys)["p"].transform(holm_adjusted)
    out["beats"] = out["p_holm"] <= policy.risk_alpha
    k = out["family_size"].astype(float)
    z_low, z_high = norm.ppf(1 - policy.lower_alpha / k), norm.ppf(1 - policy.upper_alpha)
    below, above = _side_spreads(out)
    out["effect_low"] = out["effect"] - z_low * scale * below
    out["effect_high"] = out["effect"] + z_high * scale * above
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
    return float((norm.ppf(1 - policy.risk_alpha / k) + norm.ppf(policy.power)) * se.min())


def _attack_factor(effect: float, low: float, high: float, threshold: float) -> float:
    """How many times the records would make one attack's interval leave the threshold's side it
    straddles, at its current estimate (a standard error falls as one over the square root of the
    records): 0 when it does not straddle it, NaN without an interval, inf on the threshold."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan")
    if not low <= threshold <= high:
        return 0.0
    gap = abs(effect - threshold)
    half = (high - effect) if effect < threshold else (effect - low)
    return float((half / gap) ** 2) if gap > 0 else float("inf")


def decide_factor(group: pd.DataFrame, threshold: float) -> float:
    """How many times the records (every file alike) would decide an inconclusive risk at the current
    estimates: the most any of its attacks needs to leave the threshold's side (NaN when an attack
    has no interval)."""
    factors = [_attack_factor(float(r.effect), float(r.effect_low), float(r.effect_high), threshold)
               for r in group.itertuples()]
    return float("nan") if any(np.isnan(f) for f in factors) else float(max(factors))


def _decide(group: pd.DataFrame, threshold: float) -> tuple[str, pd.Series]:
    """(level key, the attack shown) of one risk's attacks, decided against `threshold`."""
    identified = group["n_identified"].fillna(0) > 0
    if identified.any():
        return "at_risk", group[identified].sort_values(["n_identified", "attack"], ascending=[False, True]).iloc[0]
    low = group["effect_low"].fillna(-np.inf)
    if (low > threshold).any():
        return "at_risk", group.assign(_low=low).sort_values(["_low", "attack"], ascending=[False, True]).iloc[0]
    high = group["effect_high"].fillna(np.inf)  # an attack without an interval cannot be below anything
    shown = group.assign(_high=high).sort_values(["_high", "attack"], ascending=[False, True]).iloc[0]
    return ("below" if (high < threshold).all() else "inconclusive"), shown


def risk_table(evidence: pd.DataFrame, policy: Policy | None = None) -> pd.DataFrame:
    """One row per dataset x generator x risk (RISK_COLUMNS) from the measures' evidence rows."""
    policy = policy or Policy()
    if evidence.empty:
        return pd.DataFrame(columns=RISK_COLUMNS)
    decided = decisions(evidence, policy)
    rows = []
    for (dataset, generator, risk), group in decided.groupby(PAIR + ["risk"], sort=False):
        threshold = policy.threshold(risk)
        level, best = _decide(group, threshold)
        power = detectable_effect(group, policy)
        factor = decide_factor(group, threshold) if level == "inconclusive" else float("nan")
        n_beating = int(group["beats"].sum())
        # the members the attack shown names (attacks of one risk may name the same people)
        identified = int(best["n_identified"]) if level == "at_risk" and pd.notna(best["n_identified"]) else 0
        verdict = _verdict_text(level, best, len(group), n_beating, identified, threshold, policy, power, factor)
        rows.append({"dataset": dataset, "generator": generator, "risk": risk, "level": LEVELS[level],
                     "verdict": verdict,
                     **{c: best[c] for c in RISK_COLUMNS if c in best and c not in ("dataset", "generator", "risk",
                                                                                     "p_value", "level", "beats",
                                                                                     "n_identified")},
                     "p_value": best["p"], "threshold": threshold, "alpha": policy.risk_alpha,
                     "audit_alpha": policy.alpha, "detectable_effect": power, "decide_factor": factor,
                     "beats": bool(n_beating), "n_identified": identified,
                     "n_attacks": len(group), "n_attacks_beating": n_beating})
    table = pd.DataFrame(rows)[RISK_COLUMNS]
    order = {risk: i for i, risk in enumerate(RISKS)}
    return table.sort_values(PAIR + ["risk"], key=lambda s: s.map(order) if s.name == "risk" else s,
                             kind="stable").reset_index(drop=True)


def measure_verdicts(evidence: pd.DataFrame, policy: Policy | None = None) -> dict[str, str]:
    """Each measure's own verdict, by name: its strongest attack against its reference, as if it were
    the only measure of its risk (`risk_table` of its evidence rows alone)."""
    verdicts = {}
    for name, rows in evidence.groupby("measure", sort=False):
        table = risk_table(rows, policy)
        if len(table):
            verdicts[name] = table["verdict"].iloc[0]
    return verdicts


def release_answer(levels: dict[str, str | None]) -> str:
    """The audit's answer to "does this audit support releasing this file?" from each risk's level
    (None or "not measured" for a risk not measured): no when any risk is at risk, yes only when
    every risk is measured and below its threshold, inconclusive otherwise."""
    values = [levels.get(risk) for risk in RISKS]
    if LEVELS["at_risk"] in values:
        return ANSWERS["no"]
    if all(value == LEVELS["below"] for value in values):
        return ANSWERS["yes"]
    return ANSWERS["inconclusive"]


def _verdict_text(level: str, best: pd.Series, n: int, n_beating: int, identified: int, threshold: float,
                  policy: Policy, power: float, factor: float) -> str:
    family = (f"Holm over {n} attack{'s' if n != 1 else ''} at {policy.risk_alpha:g}, the audit's {policy.alpha:g} "
              f"over its {len(RISKS)} risks")
    shown = f"{best['metric']} {best['value']:.3f} vs reference {best['reference']:.3f}"
    beating = f"{n_beating} of {n} attacks beat their reference"
    if np.isfinite(best["effect_low"]) and np.isfinite(best["effect_high"]):
        bound = (f"effect {best['effect']:.3f}, bounds [{best['effect_low']:.3f}, {best['effect_high']:.3f}] (one-sided: "
                 f"the lower simultaneous over the attacks at {policy.lower_alpha:g}, the upper at {policy.upper_alpha:g})")
    else:
        bound = f"effect {best['effect']:.3f}, no interval"
    if level == "at_risk" and identified and best.get("named_by"):
        return (f"at risk: {best['attack']} got right {identified} member{'s' if identified != 1 else ''} whom "
                f"{best['named_by']} names (false-discovery rate controlled; {shown}; {beating}, {family})")
    if level == "at_risk" and identified:
        return (f"at risk: {best['attack']} identifies {identified} member{'s' if identified != 1 else ''} "
                f"(false-discovery rate controlled; {shown}; {beating}, {family})")
    if level == "at_risk":
        return (f"at risk: {best['attack']} ({shown}; {bound}, above the threshold {threshold:g}; {beating}, {family})")
    if level == "below":
        return (f"below the threshold: every attack's upper bound is below {threshold:g} (highest: {best['attack']}, "
                f"{shown}; {bound}; {beating}, {family})")
    if np.isfinite(factor):
        decide = f"about {factor:.1f} times the records would decide it at this estimate"
    elif np.isinf(factor):
        decide = "the estimate sits on the threshold: no size decides it"
    else:
        decide = "an attack without an interval cannot be decided"
    could = (f"; with {policy.power:.0%} power an attack beats its reference at an effect of {power:.3f} or more"
             if np.isfinite(power) else "")
    return (f"inconclusive: {best['attack']} ({shown}; {bound} straddles the threshold {threshold:g}: {decide}; "
            f"{beating}, {family}{could})")


def verdict_columns(risks: pd.DataFrame) -> pd.DataFrame | None:
    """The summary's `verdict_{risk}` columns, one per risk type measured."""
    if risks.empty:
        return None
    wide = risks.pivot(index=PAIR, columns="risk", values="verdict")
    wide = wide[[r for r in RISKS if r in wide]]
    wide.columns = [f"verdict_{r}" for r in wide.columns]
    return wide.reset_index()


#: the evidence columns that hold numbers
NUMERIC_EVIDENCE = ["value", "reference", "ci_low", "ci_high", "n_seeds", "n_seeds_beating", "tpr_at_1e-02",
                    "tpr_at_1e-03", "tpr_at_1e-01", "n_scored", "p_value", "effect_scale", "n_identified"]
#: evidence columns a measure (a plug-in written before them, say) may leave out, with their defaults:
#: no p-value (the verdict then derives one from the interval), an effect on the value's own scale,
#: nobody identified (`named_by`: the attack whose per-person evidence named the members an attack of
#: another risk got right, `synthrisk.release_audit.named`; empty when it names them itself), and no
#: TPR at the low FPRs (an attack without a per-member score)
OPTIONAL_EVIDENCE = {"p_value": float("nan"), "effect_scale": 1.0, "n_identified": 0, "named_by": "", "unit": "",
                     **dict.fromkeys(TPR_COLUMNS, float("nan")), "n_scored": float("nan")}


def with_defaults(evidence: pd.DataFrame) -> pd.DataFrame:
    """Evidence rows with the optional columns a measure left out: OPTIONAL_EVIDENCE, and
    `reads_holdout` true for membership attacks (they read the members against the holdout)."""
    out = evidence.assign(**{c: v for c, v in OPTIONAL_EVIDENCE.items() if c not in evidence})
    if "reads_holdout" in out:
        return out
    return out.assign(reads_holdout=out["risk"].eq("membership") if "risk" in out else False)


def collect_evidence(measures, tables) -> pd.DataFrame:
    """Every risk measure's evidence rows, read from `tables`: a mapping of table name to frame
    holding the measures' tables (the audit's, in memory; the workflow's table folder,
    `synthrisk.io.TableFolder`)."""
    parts = [m.evidence(tables) for m in measures.values() if m.risk]
    parts = [with_defaults(p)[EVIDENCE_COLUMNS] for p in parts if p is not None and len(p)]
    if not parts:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    evidence = pd.concat(parts, ignore_index=True)
    # Numbers as numbers, whether a measure's table came from memory (where a missing reference may
    # be None in an object column) or from a CSV (where it is NaN in a float one).
    return evidence.assign(**{c: pd.to_numeric(evidence[c], errors="coerce") for c in NUMERIC_EVIDENCE})


VERDICT_LABELS = {f"verdict_{risk}": f"verdict: {label}" for risk, label in RISKS.items()}
