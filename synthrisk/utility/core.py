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
        """Undefined numbers (a ratio to a real score of 0, SDMetrics' pair trends with nothing to
        compare) are null, never NaN."""
        from ..io import finite_or_null

        return finite_or_null({**self.fidelity, "efficacy_ratio": self.efficacy_ratio,
                               "efficacy": self.efficacy.to_dict("records")})


def utility(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *,
            schema: DatasetSchema, seed: int = 0) -> UtilityResult:
    from ..data.split import ROW_ID

    typed = []
    for what, frame in (("real members", members), ("synthetic data", synthetic), ("holdout", holdout)):
        frame = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=what)
        if frame.empty:
            raise DataError(f"{what} are empty; utility needs rows to train and test on")
        typed.append(frame)
    members, synthetic, holdout = typed
    schema.unknown_level_shares(pd.concat([members, holdout], ignore_index=True), synthetic,
                                reference="real records")
    return UtilityResult(efficacy(members, synthetic, holdout, schema, seed=seed),
                         fidelity(members, synthetic, schema))
