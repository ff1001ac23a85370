"""Simulator with a controllable dependence between quasi-identifiers and sensitive attributes.

Quasi-identifiers: three continuous (x1..x3, standard normal), one integer (age-like) and two
categoricals (region with 5 levels, group with 3). A linear index z of all six, standardised to
unit variance, drives both sensitive attributes through one latent per attribute:

    latent = strength * z + sqrt(1 - strength^2) * noise,   noise ~ N(0, 1)

so `strength` in [0, 1] is the correlation between the index and each latent: 0 means the
quasi-identifiers say nothing about the sensitive attributes, 1 means they determine them.
`y_cat` cuts its latent at the standard-normal tertiles (three balanced classes); `y_cont` is
50 + 10 * latent (positive, so relative errors are meaningful).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

REGION_EFFECTS = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
GROUP_EFFECTS = np.array([-0.8, 0.0, 0.8])


def simulate(n: int = 5000, strength: float = 0.8, seed: int = 0) -> pd.DataFrame:
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"simulate: strength must be in [0, 1], got {strength}")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    age = rng.integers(18, 80, size=n)
    region = rng.integers(0, len(REGION_EFFECTS), size=n)
    group = rng.integers(0, len(GROUP_EFFECTS), size=n)
    index = (
        x @ np.array([1.0, 0.7, -0.5])
        + 0.04 * (age - 49)
        + REGION_EFFECTS[region]
        + GROUP_EFFECTS[group]
    )
    index = (index - index.mean()) / index.std()
    noise_scale = np.sqrt(1.0 - strength**2)
    latent_cat = strength * index + noise_scale * rng.standard_normal(n)
    latent_cont = strength * index + noise_scale * rng.standard_normal(n)
    cuts = norm.ppf([1 / 3, 2 / 3])
    return pd.DataFrame({
        "x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2],
        "age": age,
        "region": np.array(["north", "east", "south", "west", "centre"])[region],
        "group": np.array(["a", "b", "c"])[group],
        "y_cat": np.array(["low", "mid", "high"])[np.searchsorted(cuts, latent_cat)],
        "y_cont": 50.0 + 10.0 * latent_cont,
    })
