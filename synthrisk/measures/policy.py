"""The release policy a verdict is read against: the family-wise level of the tests, and per risk the
smallest effect that matters (the policy threshold).

Detectable is not material. A large release makes a 0.6-point membership effect significant; that
alone should not read like a copy of the training data. So a risk is
- *at risk* when an attack beats its reference (Holm over the risk's attacks at `alpha`) and the
  lower end of its simultaneous interval on the effect scale lies above the risk's threshold;
- *detectable, below the policy threshold* when an attack beats its reference but no lower bound
  clears the threshold;
- *no evidence* when no attack beats its reference.

Effects share one scale, "share of records exposed beyond chance": the advantage 2 (AUC - 0.5) of a
membership score (2 (share - 1/2) for DCR: the share of synthetic records that are closer to a member
than chance explains), the control-corrected risk of singling out, linkability and inference
(Giomi et al. 2023), and the member excess of RAPID (members minus records the generator never saw).

The default threshold, 0.09 for every risk, is the re-identification probability used for the
public release of clinical-trial data: the EMA's external guidance on Policy 0070 (2018, section
3.3.3) and Health Canada's guidance on the public release of clinical information (2019). A
steward with another policy sets `policy:` in the config or gives `synthrisk audit --policy FILE`
(YAML with the same keys).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .base import RISKS

DEFAULT_THRESHOLD = 0.09
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
SOURCE = ("re-identification probability 0.09 of the EMA's Policy 0070 external guidance and Health Canada's "
          "guidance on the public release of clinical information")
KEYS = ("alpha", "thresholds", "power", "source")

LEVELS = {"at_risk": "at risk", "detectable": "detectable, below the policy threshold", "no_evidence": "no evidence"}


@dataclass(frozen=True)
class Policy:
    thresholds: dict = field(default_factory=lambda: dict.fromkeys(RISKS, DEFAULT_THRESHOLD))
    alpha: float = DEFAULT_ALPHA
    power: float = DEFAULT_POWER
    source: str = SOURCE

    def threshold(self, risk: str) -> float:
        return float(self.thresholds.get(risk, DEFAULT_THRESHOLD))

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "power": self.power, "thresholds": dict(self.thresholds), "source": self.source}

    def statement(self) -> str:
        shown = ", ".join(f"{RISKS.get(r, r)} {v:g}" for r, v in self.thresholds.items())
        return (f"family-wise level {self.alpha:g} per risk (Holm over its attacks; intervals simultaneous over them); "
                f"policy thresholds on the share of records exposed beyond chance: {shown} ({self.source}); "
                f"detectable effects stated at {self.power:.0%} power")


def policy_from_mapping(raw: dict | None, what: str = "policy") -> Policy:
    """A Policy from a mapping (the config's `policy:` block, a `--policy` file); errors name the key."""
    if raw is None:
        return Policy()
    if not isinstance(raw, dict):
        raise ConfigError(f"{what}: must be a mapping with keys {list(KEYS)}, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise ConfigError(f"{what}: unknown key(s) {unknown}; known: {list(KEYS)}")

    def fraction(value, key, low_open=True):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or \
                not (0 < value < 1 if low_open else 0 <= value < 1):
            raise ConfigError(f"{what}.{key}: must be a number {'in (0, 1)' if low_open else 'in [0, 1)'}, got {value!r}")
        return float(value)

    thresholds = dict.fromkeys(RISKS, DEFAULT_THRESHOLD)
    given = raw.get("thresholds", {}) or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{what}.thresholds: must map risks ({list(RISKS)}) to numbers, got {given!r}")
    for risk, value in given.items():
        if risk not in RISKS:
            raise ConfigError(f"{what}.thresholds: unknown risk {risk!r}; the risks are {list(RISKS)}")
        thresholds[risk] = fraction(value, f"thresholds.{risk}", low_open=False)
    source = raw.get("source", SOURCE if not given else "set by the user")
    if not isinstance(source, str):
        raise ConfigError(f"{what}.source: must be text, got {source!r}")
    return Policy(thresholds=thresholds, alpha=fraction(raw.get("alpha", DEFAULT_ALPHA), "alpha"),
                  power=fraction(raw.get("power", DEFAULT_POWER), "power"), source=source)


def as_policy(policy) -> Policy:
    """A `Policy` from what a caller passes: None (the default policy), a `Policy`, its mapping, or
    the path of a policy YAML. Shared by the command line, `synthrisk.audit` and the measure functions."""
    if policy is None:
        return Policy()
    if isinstance(policy, Policy):
        return policy
    if isinstance(policy, dict):
        return policy_from_mapping(policy, what="policy")
    if isinstance(policy, (str, Path)):
        return load_policy(policy)
    raise ConfigError(f"policy: give a Policy, a mapping or the path of a policy YAML, not a {type(policy).__name__}")


def config_policy(config: dict) -> Policy:
    """The workflow config's `policy:` block as a Policy (the defaults where it has none); errors
    name `config: policy`. The config check, the summary and the report read it here."""
    return policy_from_mapping(config.get("policy"), what="config: policy")


def load_policy(path: str | Path) -> Policy:
    """A `--policy` YAML file as a Policy; an empty file is refused (it would silently be the default)."""
    from ..io import read_yaml

    raw = read_yaml(path, "--policy", ConfigError)
    if raw is None:
        raise ConfigError(f"--policy: {path} is empty; give at least one of {list(KEYS)}, or leave out --policy "
                          "for the default policy")
    return policy_from_mapping(raw, what=str(path))
