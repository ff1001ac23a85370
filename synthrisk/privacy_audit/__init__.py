"""Empirical epsilon audit of DP generators (issue 15, part 2): a worst-case canary, N fits with and
N without it, a count statistic, and a Clopper-Pearson lower bound on epsilon to set beside the
nominal one."""

from .bounds import CONFIDENCE, Bound, choose_threshold, clopper_pearson_upper, epsilon_lower_bound
from .canary import Canary, canary_matches, with_canary, worst_case_canary
from .experiment import AuditResult, audit_generator, audit_statistics, canary_statistics
from .statistic import MARGINAL_ORDERS, canary_cell_count

__all__ = ["CONFIDENCE", "MARGINAL_ORDERS", "AuditResult", "Bound", "Canary", "audit_generator",
           "audit_statistics", "canary_cell_count", "canary_matches", "canary_statistics", "choose_threshold",
           "clopper_pearson_upper", "epsilon_lower_bound", "with_canary", "worst_case_canary"]
