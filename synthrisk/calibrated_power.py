"""What the verdicts detected in the calibration study (`benchmarks/verdict_calibration.py`), as
the audit quotes it next to a risk: "in the calibration study at about this size, this verdict
detected member copies in X % of the release with 80 % power", when the policy reads each risk at
the level the study did.

The study's published result is `synthrisk/reference/calibration_power.csv` (written by the
benchmark with `--publish`, through `synthrisk.calibration.publish_table`; one row per dataset x n
x risk x member-copy share: the share of splits whose risk verdict fired, its Clopper-Pearson
interval, the splits, the false-positive rate of the same verdict on the null releases, and the
commit). The audit picks the calibrated size nearest to its training file's (on a log scale) and
says which it is."""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

import pandas as pd

from .measures.policy import DEFAULT_ALPHA

#: what the published study's verdicts were read at: the default policy's family-wise level, and the
#: anonymeter-style attacks per control-set risk of its cheaper settings (`synthrisk.calibration`)
STUDY_ALPHA = DEFAULT_ALPHA
STUDY_ATTACKS = 300
#: the published calibration result (package data)
PUBLISHED = "reference/calibration_power.csv"
COLUMNS = ["dataset", "n", "risk", "share", "splits", "power", "power_low", "power_high", "null_rate",
           "null_rate_high", "null_splits", "commit"]


@lru_cache(maxsize=1)
def published() -> pd.DataFrame:
    """The published table (empty when none is shipped)."""
    path = resources.files("synthrisk").joinpath(PUBLISHED)
    if not path.is_file():
        return pd.DataFrame(columns=COLUMNS)
    with path.open() as handle:
        return pd.read_csv(handle)


def quote(risk: str, n_train: int, policy, yours: str = "this file has") -> str | None:
    """`statement` at the policy's power, or None when the level a risk is read at is not the one the
    study's verdicts were read at (its power would not be this run's verdict's)."""
    if not math.isclose(policy.risk_alpha, STUDY_ALPHA):
        return None
    return statement(risk, n_train, power=policy.power, yours=yours)


def statement(risk: str, n_train: int, power: float = 0.8, table: pd.DataFrame | None = None,
              yours: str = "this file has") -> str | None:
    """One sentence on what this risk's verdict detected in the calibration study at the calibrated
    size nearest to `n_train`, or None when the study has no row for the risk. `yours` introduces
    the audited size ("this file has" 1,234)."""
    table = published() if table is None else table
    rows = table[table["risk"] == risk]
    if rows.empty:
        return None
    sizes = sorted(rows["n"].unique())
    n = min(sizes, key=lambda size: abs(math.log(size) - math.log(max(n_train, 1))))
    at = rows[rows["n"] == n].sort_values("share")
    dataset = ", ".join(sorted(at["dataset"].unique()))
    detected = at[at["power"] >= power]
    splits = int(at["splits"].min())
    where = (f"In the calibration study ({dataset}, {n:,} training records per split, {splits} random splits, "
             f"family-wise level {STUDY_ALPHA:g}, {STUDY_ATTACKS} attacks per control-set risk; {yours} {n_train:,})")
    null = at["null_rate"].dropna()
    false_alarm = (f"; on releases that never saw the members it fired in {100 * null.max():.1f} % of splits"
                   if len(null) else "")
    if detected.empty:
        largest = at.iloc[-1]
        return (f"{where}, this verdict did not reach {power:.0%} power on any share of member copies tried: it "
                f"fired in {100 * largest['power']:.0f} % of splits at {100 * largest['share']:g} % copies"
                f"{false_alarm}.")
    first = detected.iloc[0]
    return (f"{where}, this verdict detected a release in which {100 * first['share']:g} % of the records are "
            f"copies of training records in {100 * first['power']:.0f} % of splits (at least {power:.0%} power)"
            f"{false_alarm}.")
