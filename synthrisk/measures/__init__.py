"""Everything computed per synthetic dataset, behind one interface (see `base`)."""

from .base import EVIDENCE_COLUMNS, RISKS, Figure, Measure, MeasureInput, MeasureResult, NotApplicable, WorkflowOutputs
from .registry import builtin_measures, configured_measures, measure, register_measure, registered_measures

__all__ = ["EVIDENCE_COLUMNS", "RISKS", "Figure", "Measure", "MeasureInput", "MeasureResult", "NotApplicable",
           "WorkflowOutputs", "builtin_measures", "configured_measures", "measure", "register_measure",
           "registered_measures"]
