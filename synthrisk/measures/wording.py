"""How the audit words numbers, shared by the measures' `explain` sentences and the audit's own
(`synthrisk.release_audit.explain`), so that every sentence formats a share, an AUC and an
interval the same way. A plug-in measure may use them too."""

from __future__ import annotations

import math


def pct(value: float) -> str:
    """A share as a percentage with one decimal: 0.1234 -> '12.3%'."""
    return f"{100 * value:.1f}%"


def number(value: float) -> str:
    """A number on its own scale (an AUC, say) with three decimals."""
    return f"{value:.3f}"


def finite(value) -> bool:
    """Whether `value` is a finite number (not None, NaN or infinite)."""
    return value is not None and isinstance(value, (int, float)) and math.isfinite(float(value))


def interval(row: dict, scale=pct) -> str:
    """' (95% interval low to high)' from the row's `ci_low` / `ci_high`, or '' when either is missing."""
    low, high = row.get("ci_low"), row.get("ci_high")
    if low is None or high is None or any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        return ""
    return f" (95% interval {scale(low)} to {scale(high)})"


def generic(row: dict) -> str:
    """The sentence of a measure that words nothing of its own: the attack, its metric, value and reference."""
    value, reference = float(row["value"]), float(row["reference"])
    return f"{row['attack']}: {row['metric']} {value:.3g} against its reference {reference:.3g}."


def membership_auc(row: dict) -> str:
    """An attack that scores records for membership, read as its AUC against 0.5 (and its TPR at
    FPR 1e-2 when the row has one)."""
    value, tpr = float(row["value"]), row.get("tpr_at_1e-02")
    extra = (f"; it flags {pct(tpr)} of training records while wrongly flagging 1% of other people"
             if tpr is not None and not (isinstance(tpr, float) and math.isnan(tpr)) else "")
    return (f"Given a person's record and the release, the attack '{row['attack']}' tells whether the person was in "
            f"the training data with AUC {number(value)}{interval(row, number)} where 0.5 is a coin toss"
            f"{extra}.")


def control_corrected(row: dict, doing: str) -> str:
    """An anonymeter-style attack that `doing` (a verb phrase), read as its success on the members
    corrected for its success on control records (the holdout)."""
    return (f"The attack '{row['attack']}' {doing}; its success on training records, corrected for its success on "
            f"holdout records the generator never saw, is {pct(float(row['value']))}{interval(row)} (0% = it does no "
            "better on training records than on strangers, 100% = it succeeds on every training record).")
