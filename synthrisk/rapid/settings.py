"""RAPID's settings and their defaults, stated once: the workflow's `rapid:` config block, the
`synthrisk rapid` command and `rapid()` itself read them from here."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_NULL_REFITS = 10  # refits of the attacker on synthetic data with the sensitive column permuted


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
    # the dependence-strength simulation study (rule rapid_simulation): see synthrisk.rapid.simulation
    simulation: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "attackers", tuple(self.attackers))
