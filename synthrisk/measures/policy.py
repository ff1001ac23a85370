"""The release policy a verdict is read against: the audit's family-wise level, and per risk the
threshold that matters, on the scale the risk's effects are measured on.

A risk's verdict is a decision against its threshold, with three outcomes:
- *at risk* when the lower end of an attack's simultaneous interval on the effect scale lies above
  the threshold, or when a person is identified (a member named by the per-person evidence,
  `synthrisk.mia.exposure`: Benjamini-Hochberg at a controlled false-discovery rate, or the
  rare-copies count test at its level);
- *below the threshold* when every attack's upper end lies below it (and nobody is
  identified);
- *inconclusive* otherwise: the audit cannot tell which side of the threshold the risk is on. The
  verdict says what would decide it (about how many times the records, at the current estimate).
Only *below the threshold* on every risk supports a release.

The family-wise level `alpha` is per audit. A false "at risk" spends it three ways: members are
named by their conformal p-values at false-discovery rate 0.9 `alpha` (`naming_fdr`), which names
anyone in at most that share of audits of a release that never saw its members; copied rare members
are named by an exact count test at 0.05 `alpha` (`rare_copies_level`); and the lower bounds share
the remaining 0.05 `alpha` over the four risks (`lower_alpha`, one-sided, simultaneous over each
risk's attacks). So such a release is called at risk in at most `alpha` of audits. "An attack beats
its reference" is Holm over a risk's attacks at `alpha / 4` per risk (`risk_alpha`).

A false "yes" needs no share of the level: "below the threshold" on every risk is an
intersection-union test (Berger 1982, Technometrics 24:295; the logic of equivalence testing's
two one-sided tests). A release is answered yes only when every attack of every risk has its
one-sided upper bound at `alpha` (`upper_alpha`) below the threshold, so a release with any one
attack's true effect at or above its threshold is answered yes, and that risk called below it, in
at most `alpha` of audits, however many risks and attacks there are. Splitting `alpha` over them,
as the lower bounds must, would only make a clean release inconclusive more often.

Effects are measured on one scale per kind of attack, stated with the threshold (`SCALES`): the
advantage 2 (AUC - 0.5) of a membership score (2 (share - 1/2) for DCR), the control-corrected
risk of singling out, linkability and inference (Giomi et al. 2023), and the member excess of
RAPID and of synthpop's replicated uniques and DiSCO (members minus records the generator never
saw). The default threshold, 0.09 on each of
them, is a convention: the re-identification probability used for the public release of
clinical-trial data (the EMA's external guidance on Policy 0070, 2018, section 3.3.3; Health
Canada's guidance on the public release of clinical information, 2019), carried over to scales that
are not re-identification probabilities. A steward with another policy sets `policy:` in the config
or gives `synthrisk audit --policy FILE` (YAML with the same keys).
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

#: the share of the audit's level that naming members by their conformal p-values spends (the rest
#: goes to the rare-copies test and the lower bounds): most of it, since a lower bound above the
#: threshold is all but impossible for a release that never saw its members, while naming is
#: limited by the holdout's size (a larger rate names copied members from fewer of them)
NAMING_SHARE = 0.9
#: the share the rare-copies count test spends (`synthrisk.mia.rare_copies`): it sees copies of a
#: handful of rare members, which the conformal p-values cannot name (their resolution), and it keeps
#: its power at a small level (copies of the rarest 1 % of 1,000 members: found in 193 of 200 Adult
#: splits at 0.0025, benchmarks/rare_copies_test.py); taken from the lower bounds' share, not from
#: the naming rate, whose every part buys power (module doc of `synthrisk.release_audit.named`)
RARE_COPIES_SHARE = 0.05
LEVELS = {"at_risk": "at risk", "inconclusive": "inconclusive", "below": "below the threshold"}
#: the audit's answer to "does this audit support releasing this file?"
ANSWERS = {"yes": "yes", "no": "no", "inconclusive": "inconclusive"}
#: what each risk's threshold is compared with
SCALES = {
    "membership": "membership advantage 2 (AUC - 0.5), or 2 (share closer to members - 0.5) for DCR",
    "attribute_inference": ("control-corrected inference risk, or the member excess (members minus holdout) of RAPID "
                            "or of synthpop's DiSCO"),
    "singling_out": "control-corrected singling-out risk, or the member excess of synthpop's replicated uniques",
    "linkability": "control-corrected linkability risk",
}


@dataclass(frozen=True)
class Policy:
    thresholds: dict = field(default_factory=lambda: dict.fromkeys(RISKS, DEFAULT_THRESHOLD))
    alpha: float = DEFAULT_ALPHA
    power: float = DEFAULT_POWER
    source: str = SOURCE

    def threshold(self, risk: str) -> float:
        return float(self.thresholds.get(risk, DEFAULT_THRESHOLD))

    @property
    def risk_alpha(self) -> float:
        """The level each risk is read at for "an attack beats its reference" (Holm): the audit's
        family-wise level shared by its risks."""
        return self.alpha / len(RISKS)

    @property
    def upper_alpha(self) -> float:
        """The one-sided level of every attack's upper bound, which calls a risk below the threshold
        when all of them are below it: the audit's level itself, unsplit (an intersection-union test,
        module doc)."""
        return self.alpha

    @property
    def naming_fdr(self) -> float:
        """The false-discovery rate at which members are named (per-person evidence): NAMING_SHARE of
        the audit's level."""
        return self.alpha * NAMING_SHARE

    @property
    def rare_copies_level(self) -> float:
        """The level of the rare-copies count test, whose matched rare members are named when it rejects:
        RARE_COPIES_SHARE of the audit's level."""
        return self.alpha * RARE_COPIES_SHARE

    @property
    def lower_alpha(self) -> float:
        """The one-sided level of each risk's lower bounds (simultaneous over its attacks): the rest of
        the audit's level, shared by its risks, so that a release that never saw its members is
        called at risk, by a bound or by a name, in at most `alpha` of audits."""
        return self.alpha * (1 - NAMING_SHARE - RARE_COPIES_SHARE) / len(RISKS)

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "power": self.power, "thresholds": dict(self.thresholds), "source": self.source}

    def statement(self) -> str:
        shown = "; ".join(f"{RISKS.get(r, r)} {v:g} on the {SCALES.get(r, 'effect scale')}"
                          for r, v in self.thresholds.items())
        return (f"family-wise level {self.alpha:g} per audit for \"at risk\" ({self.risk_alpha:g} per risk, Bonferroni "
                f"over the {len(RISKS)} risks; Holm over each risk's attacks; lower bounds one-sided at "
                f"{self.lower_alpha:g}, simultaneous over them); upper bounds one-sided at {self.upper_alpha:g} per attack, "
                f"so that a false \"yes\", like each risk's false \"below the threshold\", is at most {self.alpha:g} "
                f"(an intersection-union test; the bounds' normal approximations aside); thresholds: "
                f"{shown} (a convention: {self.source}); detectable effects stated at {self.power:.0%} power")


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
