"""Tables and figures written by the workflow's aggregation rules."""
