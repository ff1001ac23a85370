"""Which quasi-identifiers and subgroups carry the RAPID risk.

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

from ..data.schema import DatasetSchema

OTHER = "(other, small groups)"


def _groups(series: pd.Series, categorical: bool, bins: int) -> pd.Series:
    if categorical:
        return series.astype(object).where(series.notna(), "(missing)").astype(str)
    values = series.astype("float64")
    labels = pd.qcut(values, q=bins, duplicates="drop")
    out = labels.astype(str)
    return out.where(values.notna(), "(missing)")


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
