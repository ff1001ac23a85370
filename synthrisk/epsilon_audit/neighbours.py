"""The neighbour relation of a DP generator's accounting, which the audit's two worlds must follow.

A DP guarantee is a statement about pairs of neighbouring datasets, and which pairs are neighbours
is part of it. Two relations occur among the generators here; each states its own in
`privacy()["neighbours"]`:

- "replace-one" (bounded DP): D' is D with one record replaced by another; n is the same, and public.
  synthrisk's MST (synthrisk.generators.mst: a count vector moves by sqrt(2) in l2, a score by 2)
  and PrivBayes (Zhang et al. 2017, datasets "differing in one tuple"; synthcity 0.2.12's
  plugin_privbayes.py scales the conditionals' Laplace noise as 2 (d - k) / (n epsilon) and takes
  the mutual information's sensitivity from PrivBayes Lemma 4.1, both for n fixed).
- "add-remove" (unbounded DP): D' is D with one record added or removed. AIM (McKenna et al. 2022;
  synthcity 0.2.12's models/aim.py, from private-pgm: each Gaussian measurement of a marginal is
  charged rho = 1 / (2 sigma^2), an l2 sensitivity of 1, and the exponential mechanism's score
  sensitivity is the marginal's weight, 1: what adding or removing one record moves; private-pgm's
  commented-out `bounded` switch would double both), and DP-SGD through Opacus (synthcity's DPGAN):
  Opacus accounts the subsampled Gaussian mechanism under add/remove.

The audit builds the generator's own relation (synthrisk.epsilon_audit.canary.with_canary): with
replace-one, "with canary" is the fixed dataset with one record replaced by the canary (n records);
with add-remove, the fixed dataset plus the canary (n + 1 records). Its epsilon_lower is a lower
bound on epsilon under that relation, so it is compared with the nominal epsilon as the generator
states it. A DP generator that states no relation is refused: there is no default to fall back on.

Why the audit does not use one relation for all and convert. The guarantees convert only one way,
and with slack. Replace-one is a removal and an addition, so by group privacy an add-remove
(epsilon, delta)-DP mechanism is replace-one (2 epsilon, (1 + e^epsilon) delta)-DP, pure
epsilon-DP becomes 2 epsilon, rho-zCDP becomes 4 rho (group privacy of zCDP, k^2 rho for k = 2).
A mechanism's sensitivities can give less: a count vector's l2 sensitivity goes from 1 to sqrt(2)
(a Gaussian measurement's rho doubles) and a score's from w to 2 w (an exponential mechanism's
rho = epsilon^2 / 8 quadruples). AIM spends 0.9 of each round's rho on measurements, 0.1 on
selection, and its first one-way measurements are Gaussian only, so under replace-one it is at
most 2 (0.9 rho) + 4 (0.1 rho) = 2.2 rho-zCDP: at AIM's (1, 1e-9), rho = 0.01497 and 2.2 rho
converts (AIM's own cdp_delta, Canonne, Kamath and Steinke 2020) to epsilon 1.511. The other
way, replace-one does not bound add-remove at all (a replace-one mechanism may use n). An audit
under a relation the mechanism does not account for would have to be judged against such a
converted, looser epsilon, and a violation of the claim as made could hide in the slack: AIM's
epsilon_lower 1.022 under replace-one exceeds its nominal 1 but not its replace-one 1.511.
"""

from __future__ import annotations

from ..errors import ConfigError

REPLACE_ONE, ADD_REMOVE = "replace-one", "add-remove"
RELATIONS = (REPLACE_ONE, ADD_REMOVE)


def check_relation(neighbours, what: str = "privacy audit: neighbours") -> str:
    """`neighbours` if it is one of RELATIONS; a ConfigError naming `what` otherwise."""
    if neighbours not in RELATIONS:
        raise ConfigError(f"{what} must be one of {list(RELATIONS)}, got {neighbours!r}")
    return neighbours


def declared_relation(privacy: dict, name: str = "generator") -> str:
    """The relation a DP generator's privacy() states; an error for one that states none (module doc)."""
    if privacy.get("neighbours") not in RELATIONS:
        raise ConfigError(
            f"generators.{name}: the privacy audit needs the neighbour relation the generator's accounting "
            f"assumes: its privacy() must state 'neighbours' as one of {list(RELATIONS)}, got "
            f"{privacy.get('neighbours')!r} (synthrisk.epsilon_audit.neighbours)")
    return privacy["neighbours"]
