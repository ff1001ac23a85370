"""What the three anonymeter-style measures (singling_out, linkability, inference) share: the
control set, its size, and how a control-corrected risk becomes a table row and a verdict row
(`ControlSetMeasure`, their base class)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import SynthriskError
from ..stats.sampling import sample_positions
from . import tabulate
from .base import Measure, NotApplicable, WorkflowOutputs

CONTROL_NOTE = ("reference: 0, the same attack on control records the generator never saw (risk = "
                "(main - control) / (1 - control)); p: permutation test of the member/control labels")
ALPHA = 0.05  # one seed's attack beats its control set when its one-sided p-value is at most this
_STREAM = 0x414E4F4E  # "ANON": the equal-size draw, independent of the other seeded draws


def members_and_control(data) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Members and control (the holdout) at equal sizes, the larger subsampled with the seed.

    The control set's success rate is the chance level of the attack, and the chance that a query
    singles out (or a guess hits) depends on the size of the table it is checked on; anonymeter
    rescales a smaller control count with a fitted curve, which under-corrects on Adult and is
    wrong in anonymeter 1.1.0 (benchmarks/anonymity_vs_anonymeter.py). Equal sizes need no
    correction."""
    if data.holdout.empty:
        raise NotApplicable("needs control records (the holdout, n_holdout > 0)")
    members, control = data.members, data.holdout
    n = min(len(members), len(control))
    rng = np.random.default_rng([data.seed, _STREAM])
    if len(members) > n:
        members = members.iloc[sample_positions(rng, len(members), n)]
    elif len(control) > n:
        control = control.iloc[sample_positions(rng, len(control), n)]
    return members.reset_index(drop=True), control.reset_index(drop=True)


def run_or_skip(evaluate, *args, **kwargs):
    """An evaluator's result, or NotApplicable with its message when it cannot apply to these
    data or settings (too few quasi-identifiers for linkability, ...)."""
    try:
        return evaluate(*args, **kwargs)
    except SynthriskError as exc:
        raise NotApplicable(str(exc)) from None


def risk_fields() -> dict:
    return {"risk": lambda s: s["risk"], "residual": lambda s: s["residual"], "ci_low": lambda s: s["ci_low"],
            "ci_high": lambda s: s["ci_high"], "main_rate": lambda s: s["main"]["rate"],
            "control_rate": lambda s: s["control"]["rate"],
            "baseline_rate": lambda s: (s.get("baseline") or {}).get("rate"),
            "beats": _beats, "p_value": _p_value}


def _beats(summary: dict) -> bool:
    p = _p_value(summary)
    return p is not None and p <= ALPHA


def _p_value(summary: dict) -> float | None:
    """One-sided p-value of "the risk is above 0": the evaluator's permutation test
    (`synthrisk.anonymity.risk`); for a run made before it had one, or a singling-out run with too
    many matches to relabel, the normal approximation the interval uses (too lenient at the null when
    the member rate is above the control rate: the verdict of such a run is marked by `test`)."""
    if summary.get("p_value") is not None:
        return float(summary["p_value"])
    from scipy.stats import norm

    z = norm.ppf(0.5 + summary.get("confidence", 0.95) / 2)
    se = summary["residual_error"] / z if summary.get("residual_error") else None
    if not se:
        return None
    return float(norm.sf(summary["residual"] / se))


class ControlSetMeasure(Measure):
    """What the three measures share past their `run`: each run's summary lists its `attacks` (each
    with its `label`), the measure's one table holds each attack's control-corrected risk over seeds,
    its evidence reads that risk against 0, its summary column (`{name}_risk`) is the largest risk
    over its attacks, and its control set is the holdout."""

    def log_line(self, result) -> str:
        return "; ".join(f"{a['label']}: {a['risk']:.3f} [{a['ci_low']:.3f}, {a['ci_high']:.3f}]"
                         for a in result.summary["attacks"])

    def tabulate(self, summaries, settings) -> dict[str, pd.DataFrame]:
        """Per dataset x generator x attack, the control-corrected risk over seeds."""
        runs = tabulate.collect_runs(summaries, {"attack": lambda s: s["label"], **risk_fields()},
                                     rows=lambda info: info["attacks"])
        by = tabulate.PAIR + (["attack"] if "attack" in runs else [])
        table = tabulate.over_seeds(runs, by, ["risk", "residual", "main_rate", "control_rate", "baseline_rate"],
                                    beats="beats", ci=("ci_low", "ci_high"), p_value="p_value")
        return {self.name: table}

    def evidence(self, tables) -> pd.DataFrame | None:
        table = tables[self.name]
        if "risk_mean" not in table or "attack" not in table:  # no run succeeded: no attack to read
            return None
        rows = tabulate.evidence_rows(table, self.risk, self.name, lambda t: t["attack"], "risk vs control",
                                      "risk_mean", 0.0, CONTROL_NOTE)
        # Its control set is the holdout: a holdout of another population corrects by the wrong rate.
        return rows.assign(reads_holdout=True)


def outputs(name: str, label: str) -> WorkflowOutputs:
    """A control-set measure's outputs: its column `{name}_risk` of the summary table (labelled
    `label`), the largest mean risk over its attacks per dataset x generator."""

    def largest_risk(tables) -> pd.DataFrame | None:
        table = tables[name]
        if "risk_mean" not in table:
            return None
        return table.groupby(tabulate.PAIR)["risk_mean"].max().rename(f"{name}_risk").reset_index()

    return WorkflowOutputs(summary=largest_risk, summary_labels={f"{name}_risk": label})
