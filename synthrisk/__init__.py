"""synthrisk: privacy risk of tabular synthetic data and valid inference on DP releases."""

__version__ = "0.1.0"
