"""Noise-calibrated inference from DP sufficient statistics in exponential families.

`from synthrisk.dp import dp_inference` takes a DataFrame; the pieces (families, mechanism,
estimators) are importable for simulation studies.
"""

from .families import Design, GaussianFamily, GLMFamily
from .frames import FAMILIES, dp_inference, family_data
from .inference import DPInference, analyse, bootstrap, calibrated_variance, naive, noise_aware, plugin, wald
from .mechanism import Release, clip_rows, gaussian_sigma, release_statistics

__all__ = [
    "FAMILIES", "DPInference", "Design", "GLMFamily", "GaussianFamily", "Release", "analyse", "bootstrap",
    "calibrated_variance", "clip_rows", "dp_inference", "family_data", "gaussian_sigma",
    "naive", "noise_aware", "plugin", "release_statistics", "wald",
]
