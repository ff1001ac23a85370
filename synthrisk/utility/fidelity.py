"""Statistical fidelity with SDMetrics' quality report (column shapes and column pair trends)."""

from __future__ import annotations

import warnings

import pandas as pd

from ..data.schema import DatasetSchema


def _sdmetrics_metadata(schema: DatasetSchema) -> dict:
    # SDMetrics' unified report takes SDV 2.0's multi-table shape even for one table.
    columns = {column: {"sdtype": "categorical" if kind == "categorical" else "numerical"}
               for column, kind in schema.columns.items()}
    return {"tables": {schema.name: {"columns": columns}}}


def fidelity(real: pd.DataFrame, synthetic: pd.DataFrame, schema: DatasetSchema) -> dict:
    """{'quality': overall score, 'column_shapes': ..., 'column_pair_trends': ...}, each in [0, 1]."""
    from sdmetrics.reports import QualityReport

    columns = list(schema.columns)
    report = QualityReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SDMetrics warns per constant column; the score already says it
        report.generate({schema.name: real[columns]}, {schema.name: synthetic[columns]},
                        _sdmetrics_metadata(schema), verbose=False)
    properties = report.get_properties().set_index("Property")["Score"]
    return {"quality": float(report.get_score()),
            "column_shapes": float(properties["Column Shapes"]),
            "column_pair_trends": float(properties["Column Pair Trends"])}
