"""Settings of the KDE membership attacks and their defaults, stated once (the workflow's `mia:`
block and `synthrisk mia` read them from here)."""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import setting

DEFAULT_THRESHOLDS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2)
DEFAULT_MIN_ATTACK_MEMBERS = 20
# Cap on the attack set (members + non-members scored) for large files (issue #28): beyond it a
# seeded sample at the same member share is scored. 100,000 keeps every configured run whole.
DEFAULT_MAX_ATTACK = 100_000
#: the member shares named by a rule rather than a number
MEMBER_SHARE_RULES = ("sampling_fraction", "all")


@dataclass(frozen=True)
class MiaSettings:
    thresholds: tuple[float, ...] = setting(DEFAULT_THRESHOLDS, "Method 1's grid of Gower-distance thresholds",
                                            minItems=1, items={"minimum": 0, "maximum": 1})
    aux_member_fraction: float = setting(0.5, "share of the realistic attack's aux set made of members (drawn "
                                         "from members not scored)", minimum=0, maximum=1)
    member_share: float | str = setting(
        "sampling_fraction", "member share of the attack set. sampling_fraction (El Emam et al. 2022): n_train / "
        "rows of the dataset the members were drawn from (real.parquet); a number in (0, 1); all: every train and "
        "holdout record (no subsampling). Members or non-members are subsampled (seeded).",
        oneOf=[{"type": "string", "enum": list(MEMBER_SHARE_RULES)},
               {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}])
    min_attack_members: int = setting(DEFAULT_MIN_ATTACK_MEMBERS, "fewest members scored; a share that asks for "
                                      "fewer is exceeded (and the run says so)", minimum=2)
    max_attack: int | None = setting(DEFAULT_MAX_ATTACK, "records scored at most (a seeded sample at the same "
                                     "member share beyond; null: no cap)", minimum=2)

    def __post_init__(self):
        object.__setattr__(self, "thresholds", tuple(self.thresholds))
