"""Model-ready views of typed frames, shared by the CART generator and the attackers."""

from __future__ import annotations

import numpy as np
import pandas as pd

MISSING_LEVEL = "\x00missing"  # a level no real category can collide with


def category_strings(series: pd.Series) -> np.ndarray:
    """Categories as strings with missing values as a level of their own."""
    return series.astype(object).where(series.notna(), MISSING_LEVEL).astype(str).to_numpy()


def numeric_values(frame: pd.DataFrame) -> np.ndarray:
    """Numeric (incl. nullable integer) columns as float64 with NaN for missing."""
    return frame.astype("float64").to_numpy(na_value=np.nan)
