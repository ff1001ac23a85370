"""Numeric columns read as groups, for the disclosure measures: synthpop counts a number as a level
of its own (`factor(x)`), so a numeric key with many values makes almost every record unique, and a
numeric target makes almost every key group's target differ. The paper groups such variables
(`ngroups_keys`, `ngroups_target`: quantile groups, at 20 for its numeric target); the disclosure
measures of the audit group every numeric column with more than `n_groups` distinct values in the
release into `n_groups` quantile groups.

The breaks are taken from the release alone, not from the original records and the release together
as synthpop does: the audit reads members and holdout records on the same groups, and groups drawn
from one of them would favour it. They are R's `quantile` (type 7, numpy's "linear") at 0, 1/n, ...,
1 of the release's non-missing values, the repeated ones dropped; with fewer than three groups the
release's range is cut into `n_groups` equal widths instead (synthpop's fallback). A value falls in
[b_i, b_{i+1}), the largest in the last group; a value of another file below the release's smallest
falls in the first group and one above its largest in the last. A missing value stays missing
(synthpop's level `Missing`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ConfigError

#: numeric columns with more distinct values than this in the release are grouped into this many
DEFAULT_GROUPS = 20


def check_groups(n_groups, key: str = "groups") -> int:
    """`n_groups` as a count of groups: 0 (no grouping) or at least 2 (synthpop refuses 1)."""
    if isinstance(n_groups, bool) or not isinstance(n_groups, (int, np.integer)) or n_groups < 0 or n_groups == 1:
        raise ConfigError(f"{key}: must be 0 (no groups) or a whole number of at least 2, got {n_groups!r}")
    return int(n_groups)


def needs_groups(release: pd.Series, n_groups: int) -> bool:
    """Whether a column is read in groups: numeric, not boolean, with more than `n_groups` distinct
    values in the release (`n_groups` 0: never)."""
    numeric = pd.api.types.is_numeric_dtype(release) and not pd.api.types.is_bool_dtype(release)
    return bool(n_groups) and numeric and release.nunique(dropna=True) > n_groups


def breaks(release: pd.Series, n_groups: int) -> np.ndarray:
    """The group boundaries of a numeric column, from the release's values (module docstring)."""
    values = pd.to_numeric(release, errors="coerce").dropna().to_numpy(float)
    edges = np.unique(np.quantile(values, np.linspace(0, 1, n_groups + 1), method="linear"))
    if len(edges) < 4:  # fewer than three groups
        edges = np.unique(np.linspace(values.min(), values.max(), n_groups + 1))
    return edges


def grouped(column: pd.Series, edges: np.ndarray) -> pd.Series:
    """Each value as the label of its group, "[a, b)" (the last "[a, b]", the edges written to 15
    significant digits, so that no two groups share a label); missing stays missing."""
    names = [f"[{a:.15g}, {b:.15g})" for a, b in zip(edges[:-1], edges[1:])]
    names[-1] = names[-1][:-1] + "]"
    values = pd.to_numeric(column, errors="coerce").to_numpy(float)
    index = np.clip(np.searchsorted(edges[1:-1], values, side="right"), 0, len(names) - 1)
    labels = np.asarray(names, dtype=object)[index]
    labels[np.isnan(values)] = None
    return pd.Series(labels, index=column.index, name=column.name, dtype=object)


def group_columns(frames: dict[str, pd.DataFrame], columns, release: pd.DataFrame,
                  n_groups: int = DEFAULT_GROUPS) -> tuple[dict[str, pd.DataFrame], dict[str, list[float]]]:
    """`frames` with every column of `columns` that `needs_groups` in the release replaced by its
    group labels, on breaks from the release; and those breaks, by column (what the page states)."""
    edges = {c: breaks(release[c], n_groups) for c in columns if needs_groups(release[c], n_groups)}
    out = {}
    for name, frame in frames.items():
        frame = frame.copy()
        for column, cut in edges.items():
            frame[column] = grouped(frame[column], cut)
        out[name] = frame
    return out, {c: [float(b) for b in cut] for c, cut in edges.items()}
