"""Settings of the KDE membership attacks and their defaults, stated once (the workflow's `mia:`
block and `synthrisk mia` read them from here)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_THRESHOLDS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2)
DEFAULT_MIN_ATTACK_MEMBERS = 20
# Cap on the attack set (members + non-members scored) for large files (issue #28): beyond it a
# seeded sample at the same member share is scored. 100,000 keeps every configured run whole.
DEFAULT_MAX_ATTACK = 100_000


@dataclass(frozen=True)
class MiaSettings:
    thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS   # Method 1's grid of Gower-distance thresholds
    aux_member_fraction: float = 0.5   # share of the realistic attack's aux set made of (unscored) members
    member_share: float | str = "sampling_fraction"    # El Emam et al. 2022: n_train / N
    min_attack_members: int = DEFAULT_MIN_ATTACK_MEMBERS
    max_attack: int | None = DEFAULT_MAX_ATTACK   # records scored at most (None: no cap)

    def __post_init__(self):
        object.__setattr__(self, "thresholds", tuple(self.thresholds))
