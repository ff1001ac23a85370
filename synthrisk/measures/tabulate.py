"""The per-run rows and the over-seeds table that most measures' summaries are made of: one row
per dataset x generator with means (and spreads) over the seeds that ran, the seeds whose test
beat the reference, and a status that keeps failed and skipped runs visible."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..mia.metrics import LOW_FPRS
from ..stats.multiple_testing import merged_p_value

PAIR = ["dataset", "generator"]
#: the fields of a membership attack's run summary (its `tpr_at_fpr` and `n_members`) that carry its
#: TPRs at the low FPRs into the evidence (`collect_runs` fields; `over_seeds` means of TPR_MEANS)
TPR_FIELDS = {**{f"tpr_at_{fpr}": (lambda s, fpr=fpr: (s.get("tpr_at_fpr") or {}).get(fpr)) for fpr in LOW_FPRS},
              "n_members": lambda s: s.get("n_members")}
TPR_MEANS = list(TPR_FIELDS)


def collect_runs(summaries: list[dict], fields: dict[str, Callable[[dict], object]],
                 keys=("dataset", "generator", "seed"), rows: Callable[[dict], list[dict]] | None = None) -> pd.DataFrame:
    """One row per run summary (or per item of `rows(info)` for a run that holds several attacks):
    its keys, status and error, and `fields` computed from its summary (ok runs only)."""
    out = []
    for info in summaries:
        base = {k: info[k] for k in keys} | {"status": info["status"], "error": info.get("error")}
        if info["status"] != "ok":
            out.append(base)
            continue
        for item in (rows(info) if rows else [info]):
            out.append({**base, **{name: get(item) for name, get in fields.items()}})
    return pd.DataFrame(out)


def over_seeds(runs: pd.DataFrame, by: list[str], means: list[str], beats: str | None = None,
               ci: tuple[str, str] | None = None, p_value: str | None = None) -> pd.DataFrame:
    """Per `by` group: `{m}_mean` and `{m}_sd` of each of `means` over ok runs, `n_seeds` (ok),
    `n_seeds_beating` (ok runs whose `beats` column is true), `ci_low_min` / `ci_high_max` (the
    widest interval over seeds), `p_value_merged` (the `p_value` column merged over seeds:
    `synthrisk.stats.multiple_testing.merged_p_value`, twice the median) and
    `status` ("ok", "failed k/n: error" or "skipped: reason")."""
    groups = []
    for key, group in runs.groupby(by, sort=True, dropna=False):
        ok = group[group["status"] == "ok"]
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        for m in means:
            values = pd.to_numeric(ok[m], errors="coerce") if m in ok else pd.Series(dtype=float)
            row[f"{m}_mean"] = values.mean() if len(values) else np.nan
            row[f"{m}_sd"] = values.std() if len(values) > 1 else np.nan
        if ci:
            row["ci_low_min"] = pd.to_numeric(ok[ci[0]], errors="coerce").min() if len(ok) else np.nan
            row["ci_high_max"] = pd.to_numeric(ok[ci[1]], errors="coerce").max() if len(ok) else np.nan
        if p_value:
            row["p_value_merged"] = merged_p_value(ok[p_value]) if p_value in ok else np.nan
        row["n_seeds"] = len(ok)
        row["n_seeds_beating"] = int(ok[beats].astype(bool).sum()) if beats and len(ok) else 0
        row["status"] = _status(group)
        groups.append(row)
    return pd.DataFrame(groups)


def _status(group: pd.DataFrame) -> str:
    n = len(group)
    failed, skipped = group[group["status"] == "failed"], group[group["status"] == "skipped"]
    if len(failed):
        return f"failed {len(failed)}/{n}: {failed['error'].iloc[0]}"
    if len(skipped):
        return f"skipped: {skipped['error'].iloc[0]}"
    return "ok"


def tpr_evidence(table: pd.DataFrame) -> dict:
    """A membership attack's evidence columns at the low FPRs, from an over-seeds table: its
    `tpr_at_{fpr}_mean` and, where it has any, the members they are read on (`n_members_mean`);
    NaN where it has none."""
    has_tpr = any(f"tpr_at_{fpr}_mean" in table for fpr in LOW_FPRS)
    return {**{f"tpr_at_{fpr}": table.get(f"tpr_at_{fpr}_mean", np.nan) for fpr in LOW_FPRS},
            "n_scored": table.get("n_members_mean", np.nan) if has_tpr else np.nan}


def evidence_rows(table: pd.DataFrame, risk: str, measure: str, attack, metric: str, value: str,
                  reference, detail: str, p_value="p_value_merged", effect_scale: float = 1.0) -> pd.DataFrame:
    """EVIDENCE_COLUMNS rows from an over-seeds table (ok rows only); `reference` and `p_value` are
    numbers or names of columns of `table`. A membership attack's TPRs at the low FPRs and the
    members they are read on: `tpr_evidence`."""
    table = table[table["n_seeds"] > 0]

    def column_or_value(x):
        return table[x] if isinstance(x, str) else x

    return pd.DataFrame({
        "dataset": table["dataset"], "generator": table["generator"], "risk": risk, "measure": measure,
        "attack": attack if isinstance(attack, str) else attack(table), "metric": metric,
        "value": table[value], "reference": column_or_value(reference),
        "ci_low": table.get("ci_low_min", np.nan), "ci_high": table.get("ci_high_max", np.nan),
        "n_seeds": table["n_seeds"], "n_seeds_beating": table["n_seeds_beating"],
        **tpr_evidence(table), "detail": detail,
        "p_value": (table[p_value] if p_value in table else np.nan) if isinstance(p_value, str) else p_value,
        "effect_scale": effect_scale, "n_identified": 0, "named_by": ""})
