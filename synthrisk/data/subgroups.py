"""Which quasi-identifiers and subgroups carry a per-record flag: RAPID's records at risk, or the
members an attack of the audit got right.

Per quasi-identifier, the records are grouped by its level (categorical) or quintile bin
(numeric; missing values form their own group); each subgroup gets its size, number at risk and
RAPID. The quasi-identifier's share of the risk variation is eta^2 = between-group variance of
the at-risk flag / its total variance (the R^2 of regressing the flag on that quasi-identifier's
groups), so quasi-identifiers can be ranked on one scale whatever their type. Only group labels
and counts leave this module; groups smaller than `min_group` are pooled so that no subgroup
describes a handful of identifiable people.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import DatasetSchema

OTHER = "(other, small groups)"


def _groups(series: pd.Series, categorical: bool, bins: int) -> pd.Series:
    if categorical:
        return series.astype(object).where(series.notna(), "(missing)").astype(str)
    values = series.astype("float64")
    out = pd.Series("(missing)", index=series.index, dtype=object)
    present = values.notna()
    if present.any():
        known = values[present]
        if known.nunique() == 1:  # one value: one group (qcut would make no bin at all)
            out[present] = f"{known.iloc[0]:g}"
        else:
            try:
                out[present] = pd.qcut(known, q=bins, duplicates="drop").astype(str)
            except ValueError:  # qcut's label rounding breaks on edges such as 1e-307: same bins by hand
                edges = np.unique(np.quantile(known, np.linspace(0, 1, bins + 1)))
                index = np.clip(np.searchsorted(edges, known.to_numpy(), side="left") - 1, 0, len(edges) - 2)
                out[present] = [f"({edges[i]:.3g}, {edges[i + 1]:.3g}]" for i in index]
    return out


def attribute_risk(real: pd.DataFrame, flags: np.ndarray, schema: DatasetSchema,
                   bins: int = 5, min_group: int = 10) -> pd.DataFrame:
    flags = np.asarray(flags, dtype=float)
    total_var = flags.var()
    rows = []
    for qi in schema.quasi_identifiers:
        groups = _groups(real[qi].reset_index(drop=True), schema.is_categorical(qi), bins)
        sizes = groups.map(groups.value_counts())
        groups = groups.where(sizes >= min_group, OTHER)
        frame = pd.DataFrame({"group": groups.to_numpy(), "flag": flags})
        stats = frame.groupby("group", sort=True)["flag"].agg(["size", "sum", "mean"])
        between = float(((stats["mean"] - flags.mean()) ** 2 * stats["size"]).sum() / len(flags))
        eta2 = between / total_var if total_var > 0 else 0.0
        for group, row in stats.iterrows():
            rows.append({"quasi_identifier": qi, "group": group, "n": int(row["size"]),
                         "n_at_risk": int(row["sum"]), "rapid": float(row["mean"]), "eta2": eta2})
    return pd.DataFrame(rows)
