"""What the verdicts detected in the calibration study (`benchmarks/verdict_calibration.py`), as
the audit quotes it next to a risk: "in the calibration study at about this size, this verdict
detected member copies in X % of the release with 80 % power", when the policy reads each risk at
the level the study did.

The study's published result is `synthrisk/reference/calibration_power.csv` (written by the
benchmark with `--publish`, through `synthrisk.study.calibration.publish_table`; one row per dataset x n
x risk x member-copy share: the share of splits whose risk verdict fired, its Clopper-Pearson
interval, the splits, the false-positive rate of the same verdict on the null releases, and the
commit). The audit picks the calibrated size nearest to its training file's (on a log scale) and
says which it is."""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

import pandas as pd

from .policy import DEFAULT_ALPHA

#: what the published study's verdicts were read at: the default policy's family-wise level, and the
#: anonymeter-style attacks per control-set risk of its cheaper settings (`synthrisk.study.calibration`)
STUDY_ALPHA = DEFAULT_ALPHA
STUDY_ATTACKS = 300
#: the published calibration result (package data)
PUBLISHED = "reference/calibration_power.csv"
COLUMNS = ["dataset", "n", "risk", "share", "splits", "power", "power_low", "power_high", "null_rate",
           "null_rate_high", "null_splits", "commit"]


#: The audit's revisions: a change of what the audit as it ships decides (its measures, their audit
#: settings, how the verdicts are read) is a new revision, and its calibration starts again in new
#: pre-registered cells (benchmarks/calibration/shipped/plan.yaml, each cell's `audit`). The page
#: quotes the current revision's calibration, or says that only an earlier one's has run.
AUDIT_REVISIONS = {
    1: "the audit before synthpop's measures joined its verdicts",
    2: "synthpop's replicated uniques and DiSCO join the singling-out and attribute-inference verdicts",
    3: "the rare-copies count test names copied rare members beside the conformal p-values",
    4: ("a risk is below the threshold when each attack's one-sided upper bound at the audit's level is (an "
        "intersection-union test), and the control-set linkability and inference attacks attack up to 25,000 "
        "members"),
}
AUDIT_REVISION = max(AUDIT_REVISIONS)

#: the pre-registered calibration of the audit as it ships (`benchmarks/shipped_calibration.py
#: --summarise`): per cell and release, the per-audit rates
SHIPPED = "reference/shipped_calibration.csv"
SHIPPED_COLUMNS = ["audit", "dataset", "n", "release", "null", "secondary", "splits", "planned", "at_risk",
                   "at_risk_rate", "at_risk_high", "yes", "yes_rate", "named", "fdp"]
#: the releases' names as the quote says them
RELEASE_WORDS = {"second_holdout": "a second holdout", "cart": "cart fitted on other records",
                 "leaky": "the leaky generator (10 % member copies)"}


def _release_words(release: str) -> str:
    if release.startswith("copies_"):
        return f"{100 * float(release.split('_', 1)[1]):g} % member copies"
    if release.startswith("rare_"):
        return f"copies of the rarest {100 * float(release.split('_', 1)[1]):g} % of members"
    return RELEASE_WORDS.get(release, release)


@lru_cache(maxsize=2)
def _package_table(name: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """A table shipped as package data (empty, with `columns`, when it is not shipped)."""
    path = resources.files("synthrisk").joinpath(name)
    if not path.is_file():
        return pd.DataFrame(columns=list(columns))
    with path.open() as handle:
        return pd.read_csv(handle)


def release_statement(n_train: int, policy, table: pd.DataFrame | None = None) -> str | None:
    """One sentence on how often the audit as it ships said "no" in its pre-registered calibration,
    at the calibrated size nearest to `n_train`: on releases that never saw their members (with the
    upper end of the interval) and on each positive control run so far. None when the policy is not
    the default one the study ran (its rates would not be this audit's) or nothing is calibrated."""
    from .policy import Policy

    if policy.to_dict() != Policy().to_dict():
        return None
    table = _package_table(SHIPPED, tuple(SHIPPED_COLUMNS)) if table is None else table
    if table.empty:
        return None
    revision = int(table["audit"].max())
    table = table[table["audit"] == revision]
    if "secondary" in table:  # a cell planned after the primary family was fixed is not quoted
        table = table[~table["secondary"].astype(bool)]
    if table.empty:
        return None
    n = nearest_size(table["n"], n_train)
    at = table[table["n"] == n]
    parts = []
    for dataset, rows in at.groupby("dataset", sort=True):
        nulls, said = rows[rows["null"].astype(bool)], []
        if len(nulls):
            k, m = int(nulls["at_risk"].sum()), int(nulls["splits"].sum())
            said.append(f"releases that never saw their members ({'; '.join(map(_release_words, nulls['release']))}) "
                        f"were answered “no” in {k} of {m} audits (upper bound "
                        f"{100 * float(nulls['at_risk_high'].max()):.1f} % per release, the bounds 95 % together) and "
                        f"“yes” in {int(nulls['yes'].sum())}")
        positives = rows[~rows["null"].astype(bool)]
        said += [f"{_release_words(r.release)}: “no” in {int(r.at_risk)} of {int(r.splits)}"
                 for r in positives.itertuples()]
        if positives.empty:
            said.append("no release with member copies has run yet, so how often this audit finds them is not measured")
        running = rows[rows["splits"] < rows["planned"]]
        so_far = (" (pre-registered splits run so far: " + ", ".join(
            f"{_release_words(r.release)} {int(r.splits)} of {int(r.planned)}" for r in running.itertuples()) + ")"
                  if len(running) else "")
        parts.append(f"on {dataset.capitalize()}, " + "; ".join(said) + so_far)
    if revision == AUDIT_REVISION:
        opening = "In this audit's pre-registered calibration (the audit as it ships, default policy)"
    else:
        opening = (f"This audit is revision {AUDIT_REVISION} ({AUDIT_REVISIONS[AUDIT_REVISION]}), whose pre-registered "
                   f"calibration has not run yet. In the calibration of revision {revision} "
                   f"({AUDIT_REVISIONS[revision]}; default policy)")
    return f"{opening} at {n:,} training records per split (this file has {n_train:,}): " + ". ".join(parts) + "."


def published() -> pd.DataFrame:
    """The published table (empty when none is shipped)."""
    return _package_table(PUBLISHED, tuple(COLUMNS))


def nearest_size(sizes, n_train: int) -> int:
    """The calibrated size nearest to `n_train` on a log scale."""
    return min(sorted(set(sizes)), key=lambda size: abs(math.log(size) - math.log(max(n_train, 1))))


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
    n = nearest_size(rows["n"], n_train)
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
