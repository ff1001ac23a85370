"""RAPID's settings and their defaults, stated once: the workflow's `rapid:` config block, the
`synthrisk rapid` command and `rapid()` itself read them from here."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_NULL_REFITS = 10  # refits of the attacker on synthetic data with the sensitive column permuted
# Caps for large files (issue #28): beyond them RAPID works on a seeded random subsample and says so.
# 50,000 keeps every configured run (Adult: 48,842 rows at most) on all its records.
DEFAULT_MAX_TRAIN = 50_000    # synthetic records the attacker learns from
DEFAULT_MAX_RECORDS = 50_000  # real records attacked (scored)


@dataclass(frozen=True)
class RapidSettings:
    attackers: tuple[str, ...] = ("rf",)
    tau: float = 0.3            # categorical: normalised gain of the true class above which a record is at risk
    epsilon: float = 0.10       # continuous: error within which a record is at risk
    error: str = "relative"
    method: str = "rcs_marginal"
    n_trees: int = 500          # the RAPID paper's ranger default
    permutations: int = 199
    null_refits: int = DEFAULT_NULL_REFITS
    # Larger files are subsampled (seeded): the attacker is fitted on `max_train` random synthetic
    # records, and `max_records` random real records are scored (the interval is then the
    # subsample's). None: no cap. Cost per attacker then stops growing with the file sizes.
    max_train: int | None = DEFAULT_MAX_TRAIN
    max_records: int | None = DEFAULT_MAX_RECORDS
    # the dependence-strength simulation study (rule rapid_simulation): see synthrisk.rapid.simulation
    simulation: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "attackers", tuple(self.attackers))
