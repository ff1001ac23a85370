"""The utility scores' defaults, stated once for the function and the measure (importing them loads
neither SDMetrics nor scikit-learn)."""

#: records of each file the scores read at most (a seeded sample beyond): SDMetrics' quality report
#: and the efficacy models grow linearly with the records, which made utility the audit's slowest
#: step at 10^6 records per file. A sample reads slightly lower shapes than the whole files (two
#: samples of one population differ more when smaller); what the cap changes at 10^6 is measured in
#: benchmarks/utility_cap.py
DEFAULT_MAX_RECORDS = 100_000
