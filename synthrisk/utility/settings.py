"""The utility scores' defaults, stated once for the function and the measure (importing them loads
neither SDMetrics nor scikit-learn)."""

#: records of each file the scores read at most (a seeded sample beyond): SDMetrics' quality report
#: and the efficacy models grow linearly with the records, which made utility the audit's slowest
#: step at 10^6 records per file (290 s; 40 s capped). SDMetrics' scores of the capped files are
#: within 0.004 of the whole files' there (a sample reads its shapes slightly lower), measured in
#: benchmarks/utility_cap.py
DEFAULT_MAX_RECORDS = 100_000
