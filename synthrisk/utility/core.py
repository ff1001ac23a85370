"""One utility evaluation of a synthetic table: efficacy per sensitive attribute plus fidelity."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.schema import DatasetSchema
from ..errors import DataError
from ..stats.sampling import sample_positions
from .efficacy import efficacy
from .fidelity import fidelity
from .settings import DEFAULT_MAX_RECORDS


@dataclass
class UtilityResult:
    efficacy: pd.DataFrame   # target, metric, synthetic, real, ratio
    fidelity: dict           # quality, column_shapes, column_pair_trends
    #: what the size cap changed, for the report; None: nothing
    subsample_note: str | None = None

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
                               "efficacy": self.efficacy.to_dict("records"),
                               "capped": self.subsample_note is not None, "subsample_note": self.subsample_note})


def utility(members: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, *,
            schema: DatasetSchema, seed: int = 0, max_records: int | None = DEFAULT_MAX_RECORDS) -> UtilityResult:
    """SDMetrics' quality of the release against the members and the efficacy of models trained on
    it, tested on the holdout. A file of more than `max_records` records is read through a seeded
    random sample of that many (None: no cap), and `subsample_note` says so."""
    from ..data.split import ROW_ID

    if max_records is not None and (isinstance(max_records, bool) or not isinstance(max_records, numbers.Integral)
                                    or max_records < 1):
        raise DataError(f"utility: max_records must be a positive whole number or None, got {max_records!r}")

    typed = []
    for what, frame in (("real members", members), ("synthetic data", synthetic), ("holdout", holdout)):
        frame = schema.conform(frame.drop(columns=[ROW_ID], errors="ignore"), what=what)
        if frame.empty:
            raise DataError(f"{what} are empty; utility needs rows to train and test on")
        typed.append(frame)
    members, synthetic, holdout = typed
    schema.unknown_level_shares(pd.concat([members, holdout], ignore_index=True), synthetic,
                                reference="real records")
    (members, synthetic, holdout), note = _capped((members, synthetic, holdout), max_records, seed)
    return UtilityResult(efficacy(members, synthetic, holdout, schema, seed=seed),
                         fidelity(members, synthetic, schema), note)


def _capped(frames, cap: int | None, seed: int):
    """The frames, each cut to a seeded random sample of `cap` records when longer (each file's draw
    its own: one file's sample never depends on whether another was cut), and the note."""
    if cap is None or all(len(f) <= cap for f in frames):
        return frames, None
    out, said = [], []
    for index, (name, frame) in enumerate(zip(("training", "synthetic", "holdout"), frames)):
        if len(frame) > cap:
            said.append(f"{cap:,} of the {len(frame):,} {name} records")
            rng = np.random.default_rng([seed, 0x5554, index])
            frame = frame.iloc[sample_positions(rng, len(frame), cap)].reset_index(drop=True)
        out.append(frame)
    return tuple(out), (f"quality and efficacy read {', '.join(said)} (drawn at random, seeded; "
                        "utility.max_records)")
