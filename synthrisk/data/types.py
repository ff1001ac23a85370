"""The column types a dataset schema declares, named once for the schema, its inference and the
generators."""

CATEGORICAL, CONTINUOUS, INTEGER = "categorical", "continuous", "integer"
NUMERIC_TYPES = (CONTINUOUS, INTEGER)
