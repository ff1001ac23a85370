"""Empirical epsilon audit of DP generators (issue 15, part 2): a worst-case canary, N fits with and
N without it (neighbours under the generator's own relation), count statistics (the canary's cells,
and one after MAMA-MIA for MST), and a
Clopper-Pearson lower bound on epsilon to set beside the nominal one."""

from .bounds import (
    CONFIDENCE,
    Bound,
    choose_threshold,
    clopper_pearson_upper,
    epsilon_lower_bound,
    family_confidence,
    per_audit_confidence,
)
from .canary import Canary, canary_matches, with_canary, worst_case_canary
from .experiment import AuditResult, audit_generator, audit_statistics, audited_relation, canary_counts
from .neighbours import ADD_REMOVE, RELATIONS, REPLACE_ONE, declared_relation
from .statistic import MARGINAL_ORDERS, STATISTICS, canary_cell_count, marginal_counts, statistic_values

__all__ = ["ADD_REMOVE", "CONFIDENCE", "MARGINAL_ORDERS", "RELATIONS", "REPLACE_ONE", "STATISTICS", "AuditResult",
           "Bound", "Canary", "audit_generator", "audit_statistics", "audited_relation", "canary_cell_count",
           "canary_counts", "canary_matches", "marginal_counts", "statistic_values", "choose_threshold", "clopper_pearson_upper",
           "declared_relation", "epsilon_lower_bound", "family_confidence", "per_audit_confidence",
           "with_canary", "worst_case_canary"]
