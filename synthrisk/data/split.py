"""Split real data into members (train), non-members (holdout) and the attacker's aux set."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from ..errors import ConfigError

ROW_ID = "row_id"


def row_ids(frame: pd.DataFrame) -> np.ndarray:
    """A frame's `row_id` column (its rows in the file the records came from), else its positions."""
    return frame[ROW_ID].to_numpy() if ROW_ID in frame.columns else np.arange(len(frame))


def split_real(
    real: pd.DataFrame, n_train: int, n_holdout: int, n_aux: int, seed: int,
    stratify: str | None = None, dataset: str = "dataset", members: str = "random",
) -> dict[str, pd.DataFrame]:
    """Disjoint random subsets of `real`; each carries `row_id`, the row's index in real.parquet.

    The three parts are drawn without replacement, so members and non-members come from the same
    population and no record is in two parts. With `stratify`, each part keeps that column's
    class shares.

    `members="leading"` makes the first `n_train` rows the members in every seed (holdout and aux
    are still drawn at random from the rest). It reproduces setups whose training file is fixed,
    such as the RAPID paper's synthesis from all of UCI `adult.data`, with `adult.test` (the same
    census extraction) supplying the non-members.
    """
    total = n_train + n_holdout + n_aux
    if min(n_train, n_holdout) < 1 or n_aux < 0:
        raise ConfigError(f"datasets.{dataset}: n_train and n_holdout must be >= 1 and n_aux >= 0")
    if total > len(real):
        raise ConfigError(
            f"datasets.{dataset}: n_train + n_holdout + n_aux = {total} exceeds the {len(real)} rows of the data"
        )
    if members not in ("random", "leading"):
        raise ConfigError(f"datasets.{dataset}.members: must be 'random' or 'leading', not {members!r}")
    if stratify is not None and stratify not in real.columns:
        raise ConfigError(f"datasets.{dataset}.stratify: column {stratify!r} is not in the data")
    ids = np.arange(len(real))
    labels = real[stratify].astype(str).to_numpy() if stratify else None
    rng = np.random.RandomState(seed)
    parts, rest, rest_labels = {}, ids, labels
    sizes = (("train", n_train), ("holdout", n_holdout), ("aux", n_aux))
    if members == "leading":
        parts["train"], rest = ids[:n_train], ids[n_train:]
        rest_labels = labels[n_train:] if labels is not None else None
        sizes = sizes[1:]
    for name, size in sizes:
        if size == len(rest):
            chosen, rest = rest, rest[:0]
        elif size == 0:
            chosen = rest[:0]
        else:
            chosen, rest, *lab = train_test_split(
                rest, *([rest_labels] if rest_labels is not None else []),
                train_size=size, random_state=rng, stratify=rest_labels,
            )
            if rest_labels is not None:
                rest_labels = lab[1]
        parts[name] = chosen
    out = {}
    for name, chosen in parts.items():
        chosen = np.sort(chosen)
        frame = real.iloc[chosen].reset_index(drop=True)
        frame.insert(0, ROW_ID, chosen)
        out[name] = frame
    return out
