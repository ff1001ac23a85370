"""RAPID's settings and their defaults, stated once: the workflow's `rapid:` config block, the
`synthrisk rapid` command and `rapid()` itself read them from here."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import setting
from .attackers import ATTACKERS
from .scores import CATEGORICAL_METHODS, CONTINUOUS_ERRORS

DEFAULT_NULL_REFITS = 10  # refits of the attacker on synthetic data with the sensitive column permuted
# Caps for large files (issue #28): beyond them RAPID works on a seeded random subsample and says so.
# 50,000 keeps every configured run (Adult: 48,842 rows at most) on all its records.
DEFAULT_MAX_TRAIN = 50_000    # synthetic records the attacker learns from
DEFAULT_MAX_RECORDS = 50_000  # real records attacked (scored)


#: the keys of the dependence-strength simulation study's block (SIMULATION_DEFAULTS fills gaps)
_SIMULATION = {
    "strengths": {"type": "array", "minItems": 2, "items": {"type": "number", "minimum": 0, "maximum": 1}},
    "n": {"type": "integer", "minimum": 100},
    "attackers": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(ATTACKERS)}},
    "generator": {"type": "string"},
    "seeds": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 0}},
}


@dataclass(frozen=True)
class RapidSettings:
    attackers: tuple[str, ...] = setting(
        ("rf",), "the attackers fitted on the synthetic data (rf, cart, gbm, logit: raw probabilities as in "
        "the RAPID paper; *_cal: calibrated on held-out folds)", minItems=1, uniqueItems=True,
        items={"enum": list(ATTACKERS)})
    tau: float = setting(0.3, "categorical sensitive attribute: the normalised gain of the true class above which "
                         "a record is at risk", minimum=0, maximum=1)
    epsilon: float = setting(0.10, "continuous sensitive attribute: the error within which a record is at risk",
                             exclusiveMinimum=0)
    error: str = setting("relative", "continuous: how the error is measured", enum=list(CONTINUOUS_ERRORS))
    method: str = setting("rcs_marginal", "score of a categorical sensitive attribute compared with tau "
                          "(synthrisk.rapid.scores): rcs_marginal (the paper's), rcs_conditional, nce",
                          enum=list(CATEGORICAL_METHODS))
    n_trees: int = setting(500, "trees of the forest attackers (the RAPID paper's ranger default)", minimum=1)
    permutations: int = setting(199, "label permutations of the attacker's test", minimum=0)
    null_refits: int = setting(
        DEFAULT_NULL_REFITS, "refits of an attacker that passes the label-permutation test on synthetic data with "
        "the sensitive column permuted (the refit null); 0 keeps the label test alone", minimum=0)
    # Larger files are subsampled (seeded): the attacker is fitted on `max_train` random synthetic
    # records, and `max_records` random real records are scored (the interval is then the
    # subsample's). Cost per attacker then stops growing with the file sizes.
    max_train: int | None = setting(DEFAULT_MAX_TRAIN, "synthetic records an attacker learns from at most (a seeded "
                                    "sample beyond; null: no cap)", minimum=1)
    max_records: int | None = setting(DEFAULT_MAX_RECORDS, "members scored at most (a seeded sample beyond; null: "
                                      "no cap)", minimum=1)
    simulation: dict = setting(
        {}, "the dependence-strength simulation study (synthrisk.rapid.simulation.SIMULATION_DEFAULTS fills gaps; "
        "attackers: RAPID's)", additionalProperties=False, properties=_SIMULATION)

    def __post_init__(self):
        object.__setattr__(self, "attackers", tuple(self.attackers))
