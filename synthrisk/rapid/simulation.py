"""The RAPID simulation study: risk as a function of the dependence between quasi-identifiers
and sensitive attributes (the paper finds a sigmoid), and threshold curves."""

from __future__ import annotations

import pandas as pd

from ..data.schema import DatasetSchema
from ..data.simulate import simulate
from ..generators import make_generator
from .attackers import applicable
from .core import rapid
from .settings import RapidSettings

SIMULATION_DEFAULTS = {"strengths": [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0], "n": 2000, "generator": "cart",
                       "seeds": [0]}


def simulation_settings(settings: RapidSettings) -> dict:
    """The study's settings: the `rapid.simulation` block over SIMULATION_DEFAULTS; its attackers
    default to RAPID's."""
    return {**SIMULATION_DEFAULTS, "attackers": list(settings.attackers), **settings.simulation}


def dependence_study(schema: DatasetSchema, strengths, attackers, generator_spec: dict,
                     n: int = 2000, seeds=(0,), settings: RapidSettings | None = None) -> pd.DataFrame:
    """One row per strength x seed x attacker x sensitive x threshold of the curve.

    For each strength, a population of `n` members is simulated, `generator_spec` synthesises
    `n` records from it, and every applicable attacker attacks the members.
    """
    settings = settings or RapidSettings()
    rows = []
    for strength in strengths:
        for seed in seeds:
            real = schema.conform(simulate(n=n, strength=float(strength), seed=seed))
            generator = make_generator(generator_spec, seed=seed, name="simulation")
            synthetic = generator.fit(real, schema).sample(n, seed)
            for sensitive in schema.sensitive:
                for attacker in attackers:
                    if not applicable(attacker, schema.is_categorical(sensitive)):
                        continue
                    result = rapid(real, synthetic, schema=schema, sensitive=sensitive, attacker=attacker,
                                   tau=settings.tau, epsilon=settings.epsilon, error=settings.error,
                                   method=settings.method, n_permutations=0, n_trees=settings.n_trees, seed=seed,
                                   attribution=False)
                    for threshold, value in zip(result.curve["threshold"], result.curve["rapid"]):
                        rows.append({"strength": float(strength), "seed": seed, "sensitive": sensitive,
                                     "kind": result.kind, "attacker": attacker,
                                     "threshold": float(threshold), "rapid": float(value),
                                     "is_default_threshold": abs(threshold - result.threshold) < 1e-9})
    return pd.DataFrame(rows)
