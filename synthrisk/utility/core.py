"""One utility evaluation of a synthetic table: efficacy per sensitive attribute plus fidelity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import DataError
from .efficacy import efficacy
from .fidelity import fidelity


@dataclass
class UtilityResult:
    efficacy: pd.DataFrame   # target, metric, synthetic, real, ratio
    fidelity: dict           # quality, column_shapes, column_pair_trends

    @property
    def efficacy_ratio(self) -> float:
        """Mean ratio over targets of the headline metric (AUC for categorical, R² for continuous)."""
        headline = self.efficacy[self.efficacy["metric"].isin(["auc", "r2"])]
        return float(np.nanmean(headline["ratio"])) if len(headline) else float("nan")

    def to_json(self) -> dict:
        return {**self.fidelity, "efficacy_ratio": self.efficacy_ratio,
                "efficacy": self.efficacy.to_dict("records")}


def utility(real_train: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame,
            schema: DatasetSchema, seed: int = 0) -> UtilityResult:
    for what, frame in (("real members", real_train), ("synthetic data", synthetic), ("holdout", holdout)):
        missing = [c for c in schema.columns if c not in frame.columns]
        if missing:
            raise DataError(f"{what} lack the schema's column(s) {missing} (schema {schema.origin})")
        if frame.empty:
            raise DataError(f"{what} are empty; utility needs rows to train and test on")
    return UtilityResult(efficacy(real_train, synthetic, holdout, schema, seed=seed),
                         fidelity(real_train, synthetic, schema))
