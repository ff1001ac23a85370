"""One verdict per risk: for every dataset x generator and risk type (membership, attribute
inference, singling out, linkability), the strongest attack of every measure of that risk, read
against its own reference point.

An attack counts as beating its reference for a dataset x generator when it does so in a strict
majority of the seeds (each measure decides per seed with its own test: Holm over the run's
attacks for the membership AUCs and RAPID, the control-set interval for the anonymeter-style
risks, the binomial test for DCR). The strongest attack is the one with the largest excess over
its reference among those that beat it; when none does, the verdict says so and the row shows the
attack that came closest, so a reader sees how far from its reference the best attempt was. A
generator is never called safe on one attack: the row counts the attacks tried.
"""

from __future__ import annotations

import pandas as pd

from .base import EVIDENCE_COLUMNS, RISKS

PAIR = ["dataset", "generator"]
RISK_COLUMNS = PAIR + ["risk", "verdict", "attack", "measure", "metric", "value", "reference", "excess",
                       "ci_low", "ci_high", "n_seeds_beating", "n_seeds", "tpr_at_1e-02", "tpr_at_1e-03",
                       "n_attacks", "n_attacks_beating", "detail"]
NO_ATTACK = "no attack beats its reference"


def beats(evidence: pd.DataFrame) -> pd.Series:
    return evidence["n_seeds_beating"].astype(float) > evidence["n_seeds"].astype(float) / 2


def risk_table(evidence: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset x generator x risk (RISK_COLUMNS) from the measures' evidence rows."""
    if evidence.empty:
        return pd.DataFrame(columns=RISK_COLUMNS)
    evidence = evidence.assign(excess=evidence["value"].astype(float) - evidence["reference"].astype(float),
                               beats=beats(evidence))
    rows = []
    for (dataset, generator, risk), group in evidence.groupby(PAIR + ["risk"], sort=False):
        winners = group[group["beats"]]
        pool = winners if len(winners) else group
        best = pool.sort_values(["excess", "attack"], ascending=[False, True]).iloc[0]
        if len(winners):
            verdict = (f"at risk: {best['attack']} ({best['metric']} {best['value']:.3f} vs reference "
                       f"{best['reference']:.3f}; {len(winners)} of {len(group)} attacks beat their reference)")
        else:
            some = group[group["n_seeds_beating"].astype(float) > 0]
            some = some.sort_values(["n_seeds_beating", "excess"], ascending=False)
            verdict = f"{NO_ATTACK} ({len(group)} attacks tried"
            verdict += (f"; {len(some)} beat it in a minority of seeds, e.g. {some.iloc[0]['attack']} in "
                        f"{int(some.iloc[0]['n_seeds_beating'])}/{int(some.iloc[0]['n_seeds'])})" if len(some) else ")")
        rows.append({"dataset": dataset, "generator": generator, "risk": risk, "verdict": verdict,
                     **{c: best[c] for c in RISK_COLUMNS if c in best and c not in ("dataset", "generator", "risk")},
                     "n_attacks": len(group), "n_attacks_beating": len(winners)})
    table = pd.DataFrame(rows)[RISK_COLUMNS]
    order = {risk: i for i, risk in enumerate(RISKS)}
    return table.sort_values(PAIR + ["risk"], key=lambda s: s.map(order) if s.name == "risk" else s,
                             kind="stable").reset_index(drop=True)


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
